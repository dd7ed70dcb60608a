/// What a node makes of a datagram on the LAN discovery port (PROTOCOL.md §1.3). The driver owns
/// the socket and the timing; the decision is here, as data:
///
/// | Heard | What happens |
/// |---|---|
/// | garbage (any `AnnouncementError`) | refused; one log line per sender a minute; nothing stored |
/// | this node's own announcement | ignored |
/// | a trusted node ID with its pinned fingerprint | its address goes first among its dial targets (stored once per change), dialled now if not connected |
/// | a trusted node ID with another fingerprint, or a trusted key naming another node | refused (logged as above), never dialled |
/// | an unknown node | listed (`discovered_peers`, bounded), never dialled |
///
/// ```swift
/// let actions = node.discovered(packet: datagram[...], from: "192.168.1.20", now: now)
/// ```
extension NodeCore {
    /// How often one sender's refused datagrams are logged, ms.
    static let discoveryRefusalInterval: Int64 = 60_000
    /// How often an unchanged announcer is written again (its `last_seen`), ms.
    static let discoveryRefreshInterval: Int64 = 600_000
    /// How long an announcer's address holds against the same run heard at another one (a node
    /// on two interfaces of one network is heard on both): two announcements and some slack.
    static let discoveryAddressHold: Int64 = 2 * Announcement.interval + 15_000
    /// Announcers and refused senders remembered at once; beyond it, new ones are neither stored
    /// nor logged until old ones age out (a flood of made-up nodes costs bounded writes).
    static let discoveryMemory = 256

    /// One datagram from `host` (the numeric IPv4 or IPv6 address it came from).
    public func discovered(packet: ArraySlice<UInt8>, from host: String, now: Int64) -> [NodeAction] {
        guard configuration.discovery, phase == .running else { return [] }
        let announcement: Announcement
        do {
            announcement = try Announcement(decoding: packet)
        } catch {
            return refuseAnnouncement(from: host, reason: error.description, now: now)
        }
        guard announcement.nodeID != replica.identity.nodeID else { return [] }  // our own, looped back
        let address = (host.contains(":") ? "[\(host)]" : host) + ":\(announcement.port)"
        guard PairingString.isAddress(address) else { return refuseAnnouncement(from: host, reason: "the sender is not an IP address", now: now) }
        guard let trusted = try? replica.trustedPeers() else { return [] }
        if let peer = trusted.first(where: { $0.nodeID == announcement.nodeID }) {
            guard peer.fingerprint == announcement.fingerprint else {
                return refuseAnnouncement(from: host, reason: "it announces \(peer.nodeID) with key \(announcement.fingerprint.hex.prefix(16))…, "
                                          + "not the key trusted for it (\(peer.fingerprint.hex.prefix(16))…)", now: now)
            }
            guard discovery.hear(announcement, at: address, now: now) else { return [] }
            return heardTrusted(peer, at: address, now: now)
        }
        if let holder = trusted.first(where: { $0.fingerprint == announcement.fingerprint }) {
            return refuseAnnouncement(from: host, reason: "it announces \(announcement.nodeID) with the key trusted as \(holder.nodeID)", now: now)
        }
        guard discovery.hear(announcement, at: address, now: now) else { return [] }
        try? replica.noteDiscovered(announcement, address: address)
        return [.event(.discovered(peer: announcement.nodeID, address: address, trusted: false))]
    }

    /// A trusted node announced itself at `address`: dial it there unless it is connected.
    func heardTrusted(_ peer: TrustedPeer, at address: String, now: Int64) -> [NodeAction] {
        guard discovery.addresses[peer.nodeID] != address || peer.addresses.first != address else { return [] }
        discovery.addresses[peer.nodeID] = address
        // Stored in the trust store, not a table of its own: one list of dial targets, which a
        // restarted node dials at once and `peers` shows. Written only when it changes.
        _ = try? replica.putDiscoveredAddressFirst(nodeID: peer.nodeID, fingerprint: peer.fingerprint, address: address)
        guard configuration.dialTrustedPeers else { return [.event(.discovered(peer: peer.nodeID, address: address, trusted: true))] }
        syncTrustedDialers(now: now)
        var actions: [NodeAction] = [.event(.discovered(peer: peer.nodeID, address: address, trusted: true))]
        for i in dialers.indices where dialers[i].nodeID == peer.nodeID && !dialers[i].retired {
            switch dialers[i].state {
            case .idle, .waiting:
                dialers[i].prefer(address)
                dialers[i].state = .idle
                actions += dial(i)
            default:
                break
            }
        }
        return actions
    }

    /// Logs a refused datagram, once a minute per sender.
    func refuseAnnouncement(from host: String, reason: String, now: Int64) -> [NodeAction] {
        guard discovery.noteRefused(host, now: now) else { return [] }
        return [.event(.discoveryRefused(from: String(host.prefix(64)), reason: reason))]
    }
}
