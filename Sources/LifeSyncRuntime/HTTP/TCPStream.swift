import Glibc

/// A plain, non-blocking TCP connection as a `ByteStream`: what the HTTP API speaks on
/// (`serve --http`; under `--http-tls` a `TLSStream` instead).
final class TCPStream: ByteStream {
    let fd: Int32
    private var closed = false

    init(fd: Int32) {
        self.fd = fd
    }

    deinit { close() }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead {
        guard !closed, buffer.count > 0 else { return .ended }
        let count = recv(fd, buffer.baseAddress, buffer.count, 0)
        if count > 0 { return .bytes(count) }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return .wouldBlock }
        return .ended
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamWrite {
        guard !closed else { return .failed }
        let count = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        if count >= 0 { return .wrote(count) }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .failed
    }

    func shutdownReading() {
        if !closed { shutdown(fd, Int32(SHUT_RD)) }
    }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }
}
