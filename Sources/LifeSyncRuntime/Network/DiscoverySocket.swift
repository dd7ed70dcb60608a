import Glibc

/// The UDP socket of LAN discovery: bound to the wildcard address on the discovery port (so it
/// receives broadcasts), shared with other nodes on the same host (SO_REUSEADDR, SO_REUSEPORT),
/// allowed to send to broadcast addresses. Non-blocking and close-on-exec like every socket here.
struct DiscoverySocket {
    let fd: Int32

    /// Datagrams larger than this are cut here (and then refused for their size by the decoder).
    static let receiveSize = 512

    init(port: UInt16) throws(RuntimeError) {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RuntimeError("cannot open the discovery socket: \(errnoText())") }
        var one: Int32 = 1
        for option in [SO_REUSEADDR, SO_REUSEPORT, SO_BROADCAST] {
            setsockopt(fd, SOL_SOCKET, option, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = Self.ipv4(INADDR_ANY, port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let text = errnoText()
            Glibc.close(fd)
            throw RuntimeError("cannot bind the discovery port \(port): \(text)")
        }
    }

    func close() { Glibc.close(fd) }

    /// One pending datagram and the IPv4 address it came from; nil when none is pending.
    func receive(into buffer: inout [UInt8]) -> (count: Int, host: String)? {
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, bytes.baseAddress, bytes.count, Int32(MSG_TRUNC), $0, &length) }
            }
        }
        guard count >= 0 else { return nil }
        return (count, Self.dotted(from.sin_addr))  // with MSG_TRUNC, the datagram's real size even when it was cut
    }

    /// Sends `bytes` to `broadcast`:`port`; the error text on failure.
    func send(_ bytes: [UInt8], to broadcast: String, port: UInt16) -> String? {
        var ip = in_addr()
        guard inet_pton(AF_INET, broadcast, &ip) == 1 else { return "'\(broadcast)' is not an IPv4 address" }
        var address = Self.ipv4(ip.s_addr, port: port, networkOrder: true)
        let sent = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        return sent == bytes.count ? nil : errnoText()
    }

    /// An IPv4 address as dotted decimal.
    static func dotted(_ address: in_addr) -> String {
        var ip = address
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        return text.withUnsafeMutableBufferPointer { buffer in
            inet_ntop(AF_INET, &ip, buffer.baseAddress, socklen_t(buffer.count)).map { String(cString: $0) } ?? "?"
        }
    }

    private static func ipv4(_ host: in_addr_t, port: UInt16, networkOrder: Bool = false) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: networkOrder ? host : host.bigEndian)
        return address
    }
}
