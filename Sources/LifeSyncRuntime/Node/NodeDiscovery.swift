import Glibc
import LifeSync

/// LAN discovery beside a `NodeServer`, on the same poll loop (PROTOCOL.md §1.3): announces the
/// node on the broadcast address of each interface its listener is reachable on — at start, every
/// `Announcement.interval`, and as soon as an interface appears — and hands every datagram heard on
/// the discovery port to `NodeCore.discovered`, which decides what it means. Made only for a node
/// whose listener is not on loopback (`make`), so the demo, the benches and the tests, which listen
/// on 127.0.0.1, send nothing beyond it.
final class NodeDiscovery: PollParticipant {
    /// How often the interfaces are looked at for a new one, ms.
    static let interfaceCheckInterval: Int64 = 5_000
    /// Datagrams read per round at most, so a flood does not starve the connections.
    static let readsPerRound = 32

    unowned let server: NodeServer
    let socket: DiscoverySocket
    let port: UInt16
    let listening: String
    /// This node's announcement, drawn once per start (its instance tells peers we restarted).
    let packet: [UInt8]
    private(set) var targets: [DiscoveryInterface] = []
    private var nextAnnouncement: Int64 = 0
    private var nextInterfaceCheck: Int64 = 0
    private var buffer = [UInt8](repeating: 0, count: DiscoverySocket.receiveSize)
    /// Interfaces whose last send failed (logged once until a send there works again).
    private var failing = Set<String>()

    /// Discovery for `server`, or nil when it stays off (the reason logged): disabled, no
    /// listener, a listener on loopback, or a port that cannot be bound.
    static func make(for server: NodeServer, port: UInt16) -> NodeDiscovery? {
        guard server.core.configuration.discovery else { return nil }
        guard let listening = server.listeningAddress else {
            server.log("LAN discovery off: this node does not listen (give --listen)")
            return nil
        }
        let host = SocketAddress.host(of: listening)
        guard !host.hasPrefix("127.") && host != "::1" else {
            server.log("LAN discovery off: listening on loopback only (\(listening))")
            return nil
        }
        guard let listeningPort = UInt16(listening.split(separator: ":").last ?? ""), listeningPort > 0 else { return nil }
        let identity = server.core.replica.identity
        let announcement = Announcement(nodeID: identity.nodeID, fingerprint: server.key.fingerprint, port: listeningPort,
                                        instance: SystemRandom().nextUInt64())
        do {
            return NodeDiscovery(server: server, socket: try DiscoverySocket(port: port), port: port, listening: listening, packet: announcement.encoded())
        } catch {
            server.log("LAN discovery off: \(error)")
            return nil
        }
    }

    private init(server: NodeServer, socket: DiscoverySocket, port: UInt16, listening: String, packet: [UInt8]) {
        self.server = server
        self.socket = socket
        self.port = port
        self.listening = listening
        self.packet = packet
    }

    deinit { socket.close() }

    func interests(now: Int64) -> (interests: [PollLoop.Interest], deadline: Int64?) {
        ([PollLoop.Interest(fd: socket.fd, events: Int16(POLLIN))], min(nextAnnouncement, nextInterfaceCheck))
    }

    func ready(_ revents: [Int16], now: Int64) {
        if revents[0] & Int16(POLLIN) != 0 {
            for _ in 0..<Self.readsPerRound {
                guard let (count, host) = socket.receive(into: &buffer) else { break }
                server.execute(server.core.discovered(packet: buffer[0..<min(count, buffer.count)], from: host, now: now))
            }
        }
        if now >= nextInterfaceCheck {
            nextInterfaceCheck = now + Self.interfaceCheckInterval
            let found = DiscoveryInterface.targets(listening: listening, among: DiscoveryInterface.current())
            if found != targets {
                if found.contains(where: { !targets.contains($0) }) { nextAnnouncement = now }
                targets = found
                server.log(found.isEmpty ? "LAN discovery: no interface to announce on for \(listening) yet"
                           : "LAN discovery: announcing on " + found.map { "\($0.name) (\($0.broadcast))" }.joined(separator: ", ")
                             + " to UDP port \(port) every \(Announcement.interval / 1000) s")
            }
        }
        if now >= nextAnnouncement {
            nextAnnouncement = now + Announcement.interval
            announce()
        }
    }

    /// Sends the announcement to every target's broadcast address.
    private func announce() {
        for target in targets {
            if let failure = socket.send(packet, to: target.broadcast, port: port) {
                if failing.insert(target.name).inserted { server.log("LAN discovery: cannot announce on \(target.name): \(failure)") }
            } else {
                failing.remove(target.name)
            }
        }
    }
}
