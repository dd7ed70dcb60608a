import Glibc

/// Thin wrappers over the POSIX socket calls the node uses. Every socket is non-blocking and
/// close-on-exec; connections get TCP_NODELAY (frames are small and latency matters).
package enum Socket {
    package static func listen(on address: SocketAddress, backlog: Int32 = 64) throws(RuntimeError) -> Int32 {
        var lastError = "no address"
        for candidate in try address.resolve(passive: true) {
            let fd = socket(candidate.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { lastError = errnoText(); continue }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            var storage = candidate.storage
            let bound = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, candidate.length) } }
            if bound == 0, Glibc.listen(fd, backlog) == 0 { return fd }
            lastError = errnoText()
            close(fd)
        }
        throw RuntimeError("cannot listen on \(address): \(lastError)")
    }

    /// The address a socket is bound to (what port 0 became).
    package static func localAddress(_ fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return rc == 0 ? SocketAddress.describe(storage) : "?"
    }

    /// What one `accept` call gave.
    package enum AcceptOutcome: Equatable {
        /// A connection, with the remote's `host:port` and its host alone (for per-address limits).
        case accepted(fd: Int32, remote: String, host: String)
        /// Nothing pending (EAGAIN).
        case none
        /// The call failed with this errno (EMFILE, ECONNABORTED, …).
        case failed(Int32)
    }

    /// Accepts one pending connection.
    package static func accept(_ listener: Int32) -> AcceptOutcome {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &length) }
        }
        guard fd >= 0 else {
            let code = errno
            return code == EAGAIN || code == EWOULDBLOCK ? .none : .failed(code)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        configure(fd)
        let remote = SocketAddress.describe(storage)
        return .accepted(fd: fd, remote: remote, host: SocketAddress.host(of: remote))
    }

    /// Starts a non-blocking connect; the caller polls for POLLOUT and then calls `finishConnect`.
    package static func startConnect(to address: SocketAddress) throws(RuntimeError) -> Int32 {
        var lastError = "no address"
        for candidate in try address.resolve(passive: false) {
            let fd = socket(candidate.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { lastError = errnoText(); continue }
            var storage = candidate.storage
            let rc = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, candidate.length) } }
            if rc == 0 || errno == EINPROGRESS {
                configure(fd)
                return fd
            }
            lastError = errnoText()
            close(fd)
        }
        throw RuntimeError(lastError)
    }

    /// The outcome of a non-blocking connect, once the socket is writable: nil on success.
    package static func finishConnect(_ fd: Int32) -> String? {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return errnoText() }
        return error == 0 ? nil : errnoText(error)
    }

    /// Up to `count` of the bytes that have arrived on `fd`, left unread (MSG_PEEK): fewer when
    /// fewer came or the peer closed, none on an error; nil while nothing has arrived.
    package static func peek(_ fd: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = recv(fd, &bytes, count, Int32(MSG_PEEK | MSG_DONTWAIT))
        if got < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? nil : [] }
        return Array(bytes[0..<got])
    }

    private static func configure(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
    }
}
