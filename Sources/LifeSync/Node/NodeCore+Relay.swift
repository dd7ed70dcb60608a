extension NodeCore {
    // MARK: - Relaying once (PROTOCOL.md §5.11, §7.4 "Relay hold")

    /// The nodes we are connected to, or connecting to, may have changed: every peer is told
    /// which nodes' writes now reach us from those nodes themselves, so that it relays us none of
    /// theirs. A node counts from the moment we dial it or its TLS handshake proves a key we
    /// trust, until the connection fails or closes. Nothing is sent when the set is as it was.
    func directPeersChanged(now: Int64) -> [NodeAction] {
        // Every tick asks; most find all as it was, and then only a stall can change a choice.
        let inputs = DirectPeerInputs(connections: connections, dialers: dialers)
        if inputs == directPeerInputs, !(relayHold.choice.nextStall.map { $0 <= now } ?? false) { return [] }
        directPeerInputs = inputs
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
        let left = relayHold.direct.subtracting(direct), changed = direct != relayHold.direct
        relayHold.direct = direct
        // Which peer relays us what may change even when no node came or went: a session opened
        // or closed after its handshake. The origins of a node we no longer hear from directly
        // need a relay again.
        return (changed ? holdingsChanged(except: nil, now: now) : [])
            + chooseRelays(scanning: nil, also: left.isEmpty ? [] : relayHold.choice.origins(ownedBy: left), now: now)
    }

    /// A peer said what it holds, we took writes, or peers came or went: choose again which peer
    /// relays us each origin we lack (`RelayChoice`), and tell each peer whose list changed
    /// (HOLDS, rate-limited per session). `scanning` and `also` as in `RelayChoice.update`, but
    /// every peer is scanned (nil) only when the peers changed since the last time; `holding`,
    /// our replica's vector if the caller just read it.
    func chooseRelays(scanning: Set<String>?, also: [String] = [], holding: VersionVector? = nil, now: Int64) -> [NodeAction] {
        let capabilities = configuration.session.capabilities(of: replica.identity.role, transfersRecordings: false)
        guard relayHold.hold > 0, capabilities.isSuperset(of: [.receivesEntries, .relays]) else { return [] }
        var candidates: [RelayChoice.Candidate] = []
        for (_, conn) in connections.sorted(by: { $0.key < $1.key }) where conn.session.state == .open {
            guard let peer = conn.session.peer, peer.capabilities.contains(.relays), peer.role != .watch else { continue }
            candidates.append(RelayChoice.Candidate(nodeID: peer.nodeID, holds: conn.session.peerClaims))
        }
        var scanning = scanning
        if scanning == nil {  // peers may have come or gone (every tick asks)
            let peers = candidates.map(\.nodeID)
            if peers == relayHold.choice.lastPeers {
                // A chosen peer that owes us writes for too long is passed over (`RelayChoice.stall`).
                if also.isEmpty && !(relayHold.choice.nextStall.map { $0 <= now } ?? false) { return [] }
                scanning = []
            }
            relayHold.choice.lastPeers = peers
        }
        guard let mine = holding ?? (try? replica.replicaVector()) else { return [] }
        if relayHold.choice.lacksOwner(holding: mine, candidates: candidates, scanning: scanning), let known = try? replica.knownOrigins() {
            relayHold.choice.learnOwners(known.map { ($0.origin, $0.nodeID) })
        }
        let direct = relayHold.direct, owners = relayHold.choice.owners
        let changed = relayHold.choice.update(holding: mine, candidates: candidates, scanning: scanning, also: also, me: replica.identity.nodeID, now: now,
                                              fromItsNode: { owners[$0].map(direct.contains) ?? false })
        guard !changed.isEmpty else { return [] }
        var actions: [NodeAction] = []
        for (id, conn) in connections.sorted(by: { $0.key < $1.key }) where conn.session.peer.map({ changed.contains($0.nodeID) }) ?? false {
            actions += perform(conn.session.holdingsChanged(now: now), on: id, now: now)
        }
        return actions
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

/// All that `directPeersChanged` and the relay choice's candidates read of the connections and
/// dialers: when none of it changed, neither did the nodes heard directly nor the candidates.
/// Comparing it costs no hashing (origin strings compare by their storage first): building the
/// sets on every tick was 7% of a 20-node simulation.
struct DirectPeerInputs: Equatable {
    struct Session: Equatable {
        var id: Int
        var state: SyncSession.State
        var peer: String?
        /// The node a trusted key proved at TLS, before the handshake names one.
        var trusted: String?
        var capabilities: UInt32?
        var role: Role?
    }

    var sessions: [Session]
    /// The node of each dialer connecting, in dialer order (nil: connecting to an unknown node).
    var connecting: [String?]

    init(connections: [Int: NodeCore.Connection], dialers: [PeerDialer]) {
        sessions = connections.sorted { $0.key < $1.key }.map { id, conn in
            let peer = conn.session.peer
            var trusted: String?
            if case .trusted(let node)? = conn.session.credential { trusted = node.nodeID }
            return Session(id: id, state: conn.session.state, peer: peer?.nodeID, trusted: trusted,
                           capabilities: peer?.capabilities.rawValue, role: peer?.role)
        }
        connecting = dialers.filter { $0.state == .connecting }.map(\.nodeID)
    }
}
