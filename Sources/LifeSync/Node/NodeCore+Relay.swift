extension NodeCore {
    // MARK: - Relaying once (PROTOCOL.md §5.11, §7.4 "Relay hold")

    /// The nodes we are connected to, or connecting to, may have changed: every peer is told
    /// which nodes' writes now reach us from those nodes themselves, so that it relays us none of
    /// theirs. A node counts from the moment we dial it or its TLS handshake proves a key we
    /// trust, until the connection fails or closes. Nothing is sent when the set is as it was.
    func directPeersChanged(now: Int64) -> [NodeAction] {
        var direct = Set<String>()
        for conn in connections.values where conn.session.state != .closed {
            if let nodeID = conn.session.peer?.nodeID {
                direct.insert(nodeID)
            } else if case .trusted(let peer)? = conn.session.credential {
                direct.insert(peer.nodeID)
            }
        }
        for dialer in dialers where dialer.state == .connecting {
            if let nodeID = dialer.nodeID { direct.insert(nodeID) }
        }
        guard direct != relayHold.direct else { return [] }
        relayHold.direct = direct
        return holdingsChanged(except: nil, now: now)
    }

    /// Every session but `source`'s tells its peer what we hold now (rate-limited per session).
    func holdingsChanged(except source: Int?, now: Int64) -> [NodeAction] {
        var actions: [NodeAction] = []
        for (id, conn) in connections.sorted(by: { $0.key < $1.key }) where id != source {
            actions += perform(conn.session.holdingsChanged(now: now), on: id, now: now)
        }
        return actions
    }
}
