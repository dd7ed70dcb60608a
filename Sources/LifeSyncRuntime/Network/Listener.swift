import Glibc
import LifeSync

/// The accept side of a listening socket, one for both servers (`NodeServer`, `HTTPServer`);
/// what a server does with a connection is its own.
///
/// - It takes what is pending, at most 64 a round, so a flood does not starve the connections.
/// - It skips the errors accept(2) passes on for one connection (aborted, or a network error
///   Linux asks to treat like EAGAIN).
/// - Any other failure (EMFILE, ENFILE, ENOBUFS, ENOMEM, or anything unexpected) would fail
///   again at once on a listener that stays readable: a poll loop at full speed. The listener is
///   left out of the poll for `backoff`, doubling per failure up to `maximumBackoff`; one log
///   line per episode, one more when accepting works again.
/// - Refusals (a cap reached, no TLS connection) are logged at most once per
///   `refusalLogInterval`, counting those in between: a flood must not flood the log.
final class Listener {
    let fd: Int32
    let backoff: Int64
    let maximumBackoff: Int64
    let refusalLogInterval: Int64
    /// Put before every log line ("HTTP: ").
    let prefix: String
    let log: (String) -> Void
    /// Accepts one connection; a seam for tests (a listener that fails with EMFILE).
    var accept: (Int32) -> Socket.AcceptOutcome = Socket.accept
    /// While set, the listener is not polled: accept failed for want of resources.
    private(set) var pausedUntil: Int64?
    /// Times accept failed for want of resources; rounds in which the listener was polled.
    private(set) var failures = 0
    private(set) var polls = 0
    /// Consecutive failures of the current episode (0: none).
    private var failureStreak = 0
    private var refusalLoggedAt: Int64?
    private var refusalsUnlogged = 0
    private var closed = false

    static let transientErrors: Set<Int32> = [EINTR, ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN,
                                              ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH, ETIMEDOUT]

    /// Listens on `address`.
    /// - Throws: `RuntimeError` when the address cannot be bound.
    init(on address: SocketAddress, backoff: Int64, maximumBackoff: Int64, refusalLogInterval: Int64,
         prefix: String = "", log: @escaping (String) -> Void) throws {
        fd = try Socket.listen(on: address)
        self.backoff = backoff
        self.maximumBackoff = maximumBackoff
        self.refusalLogInterval = refusalLogInterval
        self.prefix = prefix
        self.log = log
    }

    var address: String { Socket.localAddress(fd) }

    /// Closes the socket, once however often it is called (a server's `stop` and its `deinit`):
    /// a second close could close a descriptor some other thread has been given since.
    func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(fd)
    }

    /// Whether to poll the listener this round (not while paused, nor once closed; counted in
    /// `polls`), and when its pause ends.
    func shouldPoll(now: Int64) -> (poll: Bool, deadline: Int64?) {
        guard !closed else { return (false, nil) }
        if let until = pausedUntil {
            guard now >= until else { return (false, until) }
            pausedUntil = nil
        }
        polls += 1
        return (true, nil)
    }

    /// Accepts what is pending, handing each connection (its descriptor, `host:port` and host)
    /// to `take`, which owns it from then on.
    func acceptAll(now: Int64, _ take: (_ fd: Int32, _ remote: String, _ host: String) -> Void) {
        for _ in 0..<64 {
            switch accept(fd) {
            case .none:
                return
            case .failed(let code):
                if Self.transientErrors.contains(code) { continue }
                pause(code, now: now)
                return
            case .accepted(let connection, let remote, let host):
                if failureStreak > 0 {
                    log(prefix + "accepting connections again")
                    failureStreak = 0
                }
                take(connection, remote, host)
            }
        }
    }

    /// Logs that a connection from `remote` was refused, at most once per `refusalLogInterval`.
    func noteRefusal(_ remote: String, reason: String, now: Int64) {
        if let last = refusalLoggedAt, now - last < refusalLogInterval {
            refusalsUnlogged += 1
            return
        }
        let since = refusalsUnlogged > 0 ? " (and \(refusalsUnlogged) more since the last such line)" : ""
        log(prefix + "refused connection from \(remote): \(reason)\(since)")
        refusalLoggedAt = now
        refusalsUnlogged = 0
    }

    private func pause(_ code: Int32, now: Int64) {
        let delay = min(maximumBackoff, backoff << Int64(min(failureStreak, 20)))
        failureStreak += 1
        failures += 1
        pausedUntil = now + max(1, delay)
        if failureStreak == 1 {
            log(prefix + "cannot accept connections: \(errnoText(code)); pausing the listener \(delay) ms, backing off to \(maximumBackoff) ms")
        }
    }
}
