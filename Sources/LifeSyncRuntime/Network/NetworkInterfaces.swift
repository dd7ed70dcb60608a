import Glibc

/// The IPv4 interfaces a node may announce itself on (LAN discovery, PROTOCOL.md §1.3), and which
/// of them a listening address allows: a node announces only where it can be reached, so one
/// listening on loopback sends nothing to any network.
///
/// ```swift
/// DiscoveryInterface.targets(listening: "0.0.0.0:7002", among: DiscoveryInterface.current())   // every LAN's broadcast
/// DiscoveryInterface.targets(listening: "127.0.0.1:7002", among: …)                           // []
/// ```
public struct DiscoveryInterface: Equatable, Sendable {
    public var name: String
    /// The interface's own IPv4 address and its broadcast address, dotted.
    public var address: String
    public var broadcast: String

    public init(name: String, address: String, broadcast: String) {
        self.name = name
        self.address = address
        self.broadcast = broadcast
    }

    /// The interfaces that are up, broadcast-capable, not loopback, with an IPv4 address.
    public static func current() -> [DiscoveryInterface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(first) }
        var found: [DiscoveryInterface] = []
        var node: UnsafeMutablePointer<ifaddrs>? = first
        while let current = node {
            node = current.pointee.ifa_next
            let flags = Int32(bitPattern: current.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_BROADCAST) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  let broadcast = current.pointee.ifa_ifu.ifu_broadaddr, broadcast.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            found.append(DiscoveryInterface(name: String(cString: current.pointee.ifa_name), address: dotted(address), broadcast: dotted(broadcast)))
        }
        return found
    }

    /// The interfaces a node listening on `listening` (`host:port` as the kernel reports it)
    /// announces on: all of them for the IPv4 or IPv6 wildcard, the one holding the address for a
    /// specific one, none for loopback or anything else.
    public static func targets(listening: String, among interfaces: [DiscoveryInterface]) -> [DiscoveryInterface] {
        let host = SocketAddress.host(of: listening)
        if host == "0.0.0.0" || host == "::" { return interfaces }
        return interfaces.filter { $0.address == host && !host.hasPrefix("127.") }
    }

    private static func dotted(_ address: UnsafeMutablePointer<sockaddr>) -> String {
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { DiscoverySocket.dotted($0.pointee.sin_addr) }
    }
}
