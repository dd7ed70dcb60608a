import Glibc

/// One connection's bytes, whatever carries them. The node server moves frames through this
/// seam and never reads or writes a socket itself: plain TCP today (`TCPStream`); TLS plugs in
/// here, with the same readiness semantics, and the core never sees either.
public protocol ByteStream: AnyObject {
    /// The descriptor to poll.
    var fd: Int32 { get }
    /// Reads what is available into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead
    /// Writes a prefix of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) -> StreamWrite
    /// No more input wanted (a close whose output is still leaving).
    func shutdownReading()
    func close()
    /// Input read from the descriptor and waiting inside the stream (TLS records already
    /// decrypted): poll will not announce it, so the reader must come back for it.
    var hasBufferedInput: Bool { get }
}

extension ByteStream {
    public var hasBufferedInput: Bool { false }
}

public enum StreamRead: Equatable {
    case bytes(Int)
    case wouldBlock
    /// The peer closed, or the connection failed.
    case ended
}

public enum StreamWrite: Equatable {
    case wrote(Int)
    case wouldBlock
    case failed
}

/// A non-blocking TCP socket as a `ByteStream`.
final class TCPStream: ByteStream {
    let fd: Int32
    private var closed = false

    init(fd: Int32) { self.fd = fd }

    deinit { close() }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead {
        for _ in 0..<8 {
            let got = recv(fd, buffer.baseAddress, buffer.count, 0)
            if got > 0 { return .bytes(got) }
            if got < 0 && errno == EINTR { continue }
            return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? .wouldBlock : .ended
        }
        return .wouldBlock
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamWrite {
        for _ in 0..<8 {
            let sent = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if sent > 0 { return .wrote(sent) }
            if sent < 0 && errno == EINTR { continue }
            return sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? .wouldBlock : .failed
        }
        return .wouldBlock
    }

    func shutdownReading() { shutdown(fd, Int32(SHUT_RD)) }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }
}
