import CLinux
import Glibc

/// Wakes a `PollLoop` from another thread: `wake` makes its descriptor readable, and the loop's
/// next round returns at once. An incoming recording's chunks are checked on a queue of their
/// own (`QueuedFileWriter`); each verdict wakes the node's loop so it acknowledges the chunk now,
/// not when the next one arrives or the round's timeout passes.
///
/// Put it before the participants it wakes: it drains its counter first, so a wake that comes
/// while they run is seen by the next round, never swallowed.
///
///     let waker = try LoopWaker()
///     let loop = PollLoop(participants: [waker, server])
///     DispatchQueue.global().async { waker.wake() }   // loop.runOnce returns promptly
final class LoopWaker: PollParticipant, @unchecked Sendable {
    private let fd: Int32

    init() throws {
        let fd = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard fd >= 0 else { throw RuntimeError("cannot create an eventfd: \(errnoText())") }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Safe from any thread; many wakes before the loop runs count as one.
    func wake() {
        var one: UInt64 = 1
        // EAGAIN: the counter is already at its maximum, so the loop is woken anyway.
        _ = withUnsafeBytes(of: &one) { Glibc.write(fd, $0.baseAddress, 8) }
    }

    func interests(now: Int64) -> (interests: [PollLoop.Interest], deadline: Int64?) {
        ([PollLoop.Interest(fd: fd, events: Int16(POLLIN))], nil)
    }

    func ready(_ revents: [Int16], now: Int64) {
        precondition(revents.count == 1, "one descriptor")
        guard revents[0] & Int16(POLLIN) != 0 else { return }
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { read(fd, $0.baseAddress, 8) }
    }
}
