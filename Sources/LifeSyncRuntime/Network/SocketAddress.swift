import Glibc

/// A `HOST:PORT` (or `[IPv6]:PORT`) given by a user, resolved with getaddrinfo.
package struct SocketAddress: CustomStringConvertible, Sendable {
    package var host: String
    package var port: UInt16

    /// Parses `HOST:PORT`; the error names what is wrong.
    package init(parsing text: String) throws(RuntimeError) {
        var host = Substring(text)
        guard let colon = host.lastIndex(of: ":") else { throw RuntimeError("address '\(text)' must be HOST:PORT") }
        let portText = host[host.index(after: colon)...]
        host = host[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw RuntimeError("address '\(text)' has no host") }
        guard let port = UInt16(portText) else { throw RuntimeError("address '\(text)': port must be 0…65535") }
        self.host = String(host)
        self.port = port
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The resolved socket addresses, in getaddrinfo's order.
    func resolve(passive: Bool) throws(RuntimeError) -> [(family: Int32, storage: sockaddr_storage, length: socklen_t)] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw RuntimeError("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        var result: [(Int32, sockaddr_storage, socklen_t)] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: current.pointee.ai_addr, count: Int(current.pointee.ai_addrlen)))
            }
            result.append((current.pointee.ai_family, storage, current.pointee.ai_addrlen))
            node = current.pointee.ai_next
        }
        return result
    }

    /// `host:port` of a socket address as the kernel reports it.
    static func describe(_ storage: sockaddr_storage) -> String {
        var copy = storage
        var hostBuffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var portBuffer = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let rc = withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, socklen_t(MemoryLayout<sockaddr_storage>.size), &hostBuffer, socklen_t(hostBuffer.count),
                            &portBuffer, socklen_t(portBuffer.count), NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard rc == 0 else { return "?" }
        let host = String(cBuffer: hostBuffer), port = String(cBuffer: portBuffer)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension SocketAddress {
    /// The host part of a `host:port` or `[v6]:port` text as `describe` gives it.
    static func host(of remote: String) -> String {
        if remote.hasPrefix("["), let end = remote.firstIndex(of: "]") {
            return String(remote[remote.index(after: remote.startIndex)..<end])
        }
        guard let colon = remote.lastIndex(of: ":") else { return remote }
        return String(remote[..<colon])
    }
}

/// A failure of the runtime shell (sockets, files), with a message for the user.
public struct RuntimeError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The text of the current `errno`.
func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
