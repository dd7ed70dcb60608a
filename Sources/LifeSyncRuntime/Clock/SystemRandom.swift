import Glibc
import LifeSync

/// The kernel's randomness (/dev/urandom), for the IDs a real node creates.
public final class SystemRandom: RandomSource, @unchecked Sendable {
    private let descriptor: Int32
    private var buffer = [UInt64](repeating: 0, count: 64)
    private var next = 64
    private let lock = Lock()

    public init() {
        descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        precondition(descriptor >= 0, "cannot open /dev/urandom: errno \(errno)")
    }

    deinit { close(descriptor) }

    public func nextUInt64() -> UInt64 {
        lock.withLock {
            if next == buffer.count {
                let wanted = buffer.count * 8
                var filled = 0
                buffer.withUnsafeMutableBytes { raw in
                    while filled < wanted {
                        let got = read(descriptor, raw.baseAddress! + filled, wanted - filled)
                        precondition(got > 0 || errno == EINTR, "reading /dev/urandom failed: errno \(errno)")
                        if got > 0 { filled += got }
                    }
                }
                next = 0
            }
            defer { next += 1 }
            return buffer[next]
        }
    }
}
