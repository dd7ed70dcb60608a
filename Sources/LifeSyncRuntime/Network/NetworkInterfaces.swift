import Glibc

/// The IPv4 interfaces a node may announce itself on (LAN discovery, PROTOCOL.md §1.3), and which
/// of them a listening address allows: a node announces only where it can be reached, so one
/// listening on loopback sends nothing to any network.
///
/// ```swift
/// DiscoveryInterface.targets(listening: "0.0.0.0:7002", among: DiscoveryInterface.current())   // every LAN's broadcast
/// DiscoveryInterface.targets(listening: "127.0.0.1:7002", among: …)                           // []
/// ```
package struct DiscoveryInterface: Equatable, Sendable {
    package var name: String
    /// The interface's own IPv4 address and its broadcast address, dotted.
    package var address: String
    package var broadcast: String

    package init(name: String, address: String, broadcast: String) {
        self.name = name
        self.address = address
        self.broadcast = broadcast
    }

    /// The interfaces that are up, broadcast-capable, not loopback, with an IPv4 address on a
    /// subnet that has a broadcast address (a /30 or larger). Where the interface was given no
    /// broadcast address (`ip addr add` without `brd +`), the subnet's is used.
    package static func current() -> [DiscoveryInterface] {
        var found: [DiscoveryInterface] = []
        forEachInterface { current in
            let flags = Int32(bitPattern: current.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_BROADCAST) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let address = current.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  let netmask = current.ifa_netmask else { return }
            let host = ipv4(address), mask = ipv4(netmask)
            guard mask.leadingZeroBitCount == 0, mask.nonzeroBitCount <= 30 else { return }
            var broadcast = host | ~mask
            // glibc reports the interface's own address when none was set: not a broadcast address.
            if let given = current.ifa_ifu.ifu_broadaddr, given.pointee.sa_family == sa_family_t(AF_INET),
               ipv4(given) != 0, ipv4(given) != host { broadcast = ipv4(given) }
            found.append(DiscoveryInterface(name: String(cString: current.ifa_name), address: DiscoverySocket.dotted(in_addr(s_addr: host.bigEndian)),
                                            broadcast: DiscoverySocket.dotted(in_addr(s_addr: broadcast.bigEndian))))
        }
        return found
    }

    /// Every address a client on a network may reach this machine at: those of the interfaces
    /// that are up and not loopback, IPv4 (dotted) and, unless `ipv4Only`, IPv6 (as inet_ntop
    /// writes it) but for link-local ones (fe80::/10, which need a zone to be dialled). In
    /// getifaddrs' order, without repeats. What an HTTPS certificate for a node listening on a
    /// wildcard address names (`HTTPSNames`).
    package static func addresses(ipv4Only: Bool = false) -> [String] {
        var found: [String] = []
        forEachInterface { current in
            let flags = Int32(bitPattern: current.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0, let address = current.ifa_addr else { return }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                text = Array(DiscoverySocket.dotted(in_addr(s_addr: ipv4(address).bigEndian)).utf8CString)
            case AF_INET6 where !ipv4Only:
                var ip = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                let first = withUnsafeBytes(of: &ip) { ($0[0], $0[1]) }
                guard !(first.0 == 0xFE && first.1 & 0xC0 == 0x80) else { return }
                guard inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count)) != nil else { return }
            default:
                return
            }
            let written = String(cBuffer: text)
            if !found.contains(written) { found.append(written) }
        }
        return found
    }

    /// Calls `body` with each entry getifaddrs lists.
    private static func forEachInterface(_ body: (ifaddrs) -> Void) {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return }
        defer { freeifaddrs(first) }
        var node: UnsafeMutablePointer<ifaddrs>? = first
        while let current = node {
            node = current.pointee.ifa_next
            body(current.pointee)
        }
    }

    /// The interfaces a node listening on `listening` (`host:port` as the kernel reports it)
    /// announces on: all of them for the IPv4 or IPv6 wildcard, the one holding the address for a
    /// specific one, none for loopback or anything else.
    package static func targets(listening: String, among interfaces: [DiscoveryInterface]) -> [DiscoveryInterface] {
        let host = SocketAddress.host(of: listening)
        if host == "0.0.0.0" || host == "::" { return interfaces }
        return interfaces.filter { $0.address == host && !host.hasPrefix("127.") }
    }

    /// An IPv4 socket address's address, in host byte order.
    private static func ipv4(_ address: UnsafeMutablePointer<sockaddr>) -> UInt32 {
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
    }
}
