/// A whole node without I/O: its sessions, the peers it dials, and the sync triggers of the
/// LifeAdmin document (on start, on (re)connection, on local write debounced, a fallback timer
/// only while something is pending, reconnect with backoff). The TCP runtime and the simulator
/// feed it events and carry out its actions.
///
/// ```swift
/// let node = NodeCore(replica: replica, configuration: NodeConfiguration(peers: ["127.0.0.1:7002"]), random: random, now: 0)
/// for action in node.start(now: 0) { … }   // [.connect(peer: 0, address: "127.0.0.1:7002")]
/// ```
///
/// ## Driving it
///
/// A driver (the runtime's `NodeServer`, the simulator's `VirtualNetwork`) owns the sockets, the
/// TLS, the timers and the thread; the node owns its replica and its state, and touches nothing
/// else. The contract:
///
/// - **One caller at a time**, in the order things happened. While the node runs the replica is
///   its own in this process; other processes may write to the file, which `tick` notices.
/// - **`now` is the driver's monotonic clock**, in milliseconds: it never goes back and has no
///   relation to the time of day. It times the debounce, backoff, keepalive, idle and fallback
///   timers. Writes are stamped by the replica's own wall clock (`Replica.now`, through the HLC),
///   which may jump; the node never mixes the two.
/// - **Every call returns actions, carried out in order before the next call**: `.connect` (answer
///   with exactly one `connected` or `connectFailed` for that peer index), `.send` (whole frames,
///   queued on that connection in order), `.close` (answer with `closed` once the transport is
///   down), `.event` (for the log), `.sessionEvent` (for traces), `.replicaChanged` (wake what
///   streams changes).
/// - **Connections** are numbered by the driver, a number never reused while its connection is
///   open: each is `accepted` or `connected` once, then `received` any number of times, then
///   `closed` once.
/// - **Time**: `tick(now:)` is due no later than `nextDeadline`, and may come any time sooner.
/// - **Stopping**: after `shutdown(now:)` the node dials and admits nothing more and asks every
///   connection closed, its ERROR `shutting_down` queued first (each peer's status is saved
///   then); the driver lets those frames leave, within a bound of its own, and stops.
public final class NodeCore {
    /// Where a node is in its life: running from `init`, stopping from `shutdown` on, for good.
    /// Stopping, it admits no connection (one accepted or dialled is closed at once), dials none
    /// of its waiting dialers, leaves a dialer whose connection closed as it is, stops judging
    /// what is pending after each change, and ignores LAN discovery; every session it still
    /// holds is closed (`invariantsHold`).
    enum Phase {
        case running
        case stopping
    }

    public let replica: Replica
    public let configuration: NodeConfiguration
    let random: RandomSource
    /// Where recording bytes live; nil: this node transfers no recordings.
    package let storage: RecordingStorage?
    /// Each transfer's rate in its current session, and when it last logged its progress.
    var progressLogged: [String: TransferRate] = [:]
    /// Recordings being received, shared by the sessions.
    let incomingTransfers = IncomingTransfers()
    /// How far other nodes' writes may be relayed yet, shared by the sessions.
    let relayHold: RelayHold
    /// What `directPeersChanged` last read of the connections and dialers (`DirectPeerInputs`).
    var directPeerInputs: DirectPeerInputs?
    /// Transfers under way, for `status`: recording ID → (done, total, sending).
    public internal(set) var transfers: [String: (done: UInt64, total: UInt64, sending: Bool)] = [:]
    var dialers: [PeerDialer]
    var connections: [Int: Connection] = [:]
    /// The push, poll and fallback timers, and whether what is pending is to be judged again.
    var timers: NodeTimers
    /// The file's data_version at the last poll: another process wrote when it moves.
    var lastDataVersion: Int64
    /// When each untrusted key was last noted and logged: once a minute per key, 256 keys at most.
    var untrustedNoted = NotedAt<SHA256.Digest>(interval: NodeCore.untrustedNoteInterval, capacity: 256)
    /// Running, or stopping since `shutdown`.
    var phase = Phase.running
    /// What LAN discovery heard: trusted nodes' addresses, announcers, refused senders (bounded).
    var discovery = DiscoveryMemory()

    public init(replica: Replica, configuration: NodeConfiguration, random: RandomSource, now: Int64, storage: RecordingStorage? = nil) {
        self.replica = replica
        self.configuration = configuration
        self.random = random
        self.storage = storage
        dialers = configuration.peers.map(PeerDialer.init(address:))
        timers = NodeTimers(now: now)
        relayHold = RelayHold(hold: configuration.session.relayHold, holding: (try? replica.replicaVector()) ?? VersionVector())
        lastDataVersion = (try? replica.database.dataVersion) ?? 0
        if let known = try? replica.peers() {
            for (i, address) in configuration.peers.enumerated() {
                if let peer = known.first(where: { $0.address == address }) { dialers[i].peerVector = peer.vector }
            }
        }
    }

    /// Sync on start: dial every configured peer.
    public func start(now: Int64) -> [NodeAction] {
        var actions: [NodeAction] = [.event(.starting(nodeID: replica.identity.nodeID, role: replica.identity.role))]
        syncTrustedDialers(now: now)
        for i in dialers.indices { actions += dial(i) }
        return actions + directPeersChanged(now: now)
    }

    /// A peer dialled us and proved it holds the key `peerKey` (the TLS handshake is done).
    public func accepted(connection: Int, remote: String, peerKey: SHA256.Digest, now: Int64) -> [NodeAction] {
        defer { assert(invariantsHold()) }
        assert(connections[connection] == nil, "connection \(connection) reused while open")
        guard phase == .running else { return [.close(connection: connection)] }
        let session = SyncSession(replica: replica, configuration: configuration.session, now: now, storage: storage,
                                  incomingTransfers: incomingTransfers, relayHold: relayHold, credential: credential(peerKey))
        connections[connection] = Connection(session: session, dialer: nil, address: remote)
        // The acceptor answers the dialler's HELLO rather than sending its own at once, so the
        // vector it advertises includes whatever a previous connection of the same peer was
        // still delivering (a restarted sender is not sent a stale vector).
        return [.event(.accepted(remote: remote))] + directPeersChanged(now: now)
    }

    /// Our dial of peer `peer` succeeded and the peer proved it holds the key `peerKey`.
    public func connected(connection: Int, peer: Int, peerKey: SHA256.Digest, now: Int64) -> [NodeAction] {
        defer { assert(invariantsHold()) }
        assert(connections[connection] == nil, "connection \(connection) reused while open")
        guard phase == .running else { return [.close(connection: connection)] }
        dialers[peer].state = .connected(connection: connection)
        // A trusted peer's address that a handshake with its pinned key proved: kept against
        // anything heard on the LAN (Replica+DialAddresses).
        if dialers[peer].configured == nil, let nodeID = dialers[peer].nodeID, PairingString.isAddress(dialers[peer].address) {
            _ = try? replica.noteVerifiedAddress(nodeID: nodeID, fingerprint: peerKey, address: dialers[peer].address)
        }
        let session = SyncSession(replica: replica, configuration: configuration.session, now: now, storage: storage,
                                  incomingTransfers: incomingTransfers, relayHold: relayHold, credential: credential(peerKey))
        connections[connection] = Connection(session: session, dialer: peer, address: dialers[peer].address)
        return [.event(.dialled(address: dialers[peer].address))] + perform(session.start(now: now), on: connection, now: now)
            + directPeersChanged(now: now)
    }

    /// Our dial of peer `peer` failed; try again after a backoff.
    public func connectFailed(peer: Int, reason: String, now: Int64) -> [NodeAction] {
        defer { assert(invariantsHold()) }
        let failedAddress = dialers[peer].address
        dialers[peer].advance()
        guard !dialers[peer].retired else {
            dialers[peer].state = .idle
            return directPeersChanged(now: now)
        }
        dialers[peer].failures += 1
        let delay = PeerDialer.backoff(failures: dialers[peer].failures - 1, base: configuration.reconnectBase,
                                       maximum: configuration.reconnectMaximum, random: random)
        dialers[peer].state = .waiting(until: now + delay)
        return (dialers[peer].failures <= 3 || dialers[peer].failures % 10 == 0
            ? [.event(.unreachable(address: failedAddress, reason: reason, retryIn: delay))] : []) + directPeersChanged(now: now)
    }

    /// Bytes arrived on a connection; a slice of the runtime's read buffer is taken as it is.
    public func received(connection: Int, bytes: ArraySlice<UInt8>, now: Int64) -> [NodeAction] {
        defer { assert(invariantsHold()) }
        guard let conn = connections[connection] else { return [] }
        return perform(conn.session.receive(bytes, now: now), on: connection, now: now)
    }

    /// Bytes of an unfinished frame the connection's session holds (the driver bounds their
    /// sum over all connections: `NodeServer.Limits.maximumBufferedInput`).
    public func bufferedInput(connection: Int) -> (held: Int, remaining: Int?) {
        guard let decoder = connections[connection]?.session.decoder else { return (0, nil) }
        return (decoder.bufferedCount, decoder.unfinishedFrameRemaining)
    }

    public func received(connection: Int, bytes: [UInt8], now: Int64) -> [NodeAction] {
        received(connection: connection, bytes: bytes[...], now: now)
    }

    /// The transport closed (by the peer, an error, or after our own close).
    public func closed(connection: Int, now: Int64) -> [NodeAction] {
        defer { assert(invariantsHold()) }
        guard let conn = connections.removeValue(forKey: connection) else { return [] }
        conn.session.transportClosed()
        progressLogged = progressLogged.filter { $0.value.connection != connection }
        var actions: [NodeAction] = []
        if var status = conn.status {
            status.state = .disconnected
            if conn.persisted { try? replica.savePeer(status) }
            actions.append(.event(.disconnected(peer: status.nodeID, address: conn.address)))
        }
        // A dialler that stood down for this peer's own connection dials again now.
        if let nodeID = conn.status?.nodeID, phase == .running {
            for i in dialers.indices where dialers[i].state == .covered && dialers[i].nodeID == nodeID {
                dialers[i].state = .waiting(until: now)
            }
        }
        if let dialer = conn.dialer {
            dialers[dialer].peerVector = conn.session.peerHas
            if dialers[dialer].retired {
                dialers[dialer].state = .idle
            } else if case .connected(let c) = dialers[dialer].state, c == connection, phase == .running,
               conn.closedAsDuplicate, let nodeID = dialers[dialer].nodeID, isConnected(nodeID) {
                dialers[dialer].state = .covered
            } else if case .connected(let c) = dialers[dialer].state, c == connection, phase == .running {
                let delay = PeerDialer.backoff(failures: dialers[dialer].failures, base: configuration.reconnectBase,
                                               maximum: configuration.reconnectMaximum, random: random)
                dialers[dialer].failures += 1
                dialers[dialer].state = .waiting(until: now + delay)
            }
        }
        timers.pendingChanged()
        return actions + directPeersChanged(now: now)
    }

    /// The embedding app wrote to the replica through this process (or `tick` found another
    /// process's write): push after the debounce, and say the replica changed now.
    public func localWrite(now: Int64) -> [NodeAction] {
        timers.schedulePush(now: now, debounce: configuration.debounce)
        timers.pendingChanged()
        return [.replicaChanged]
    }

    /// Time passed: timers, reconnects, and writes other processes made to the file.
    public func tick(now: Int64) -> [NodeAction] {
        defer { assert(invariantsHold()) }
        var actions: [NodeAction] = []
        if timers.takePoll(now: now, interval: configuration.changePollInterval) {
            if let version = try? replica.database.dataVersion, version != lastDataVersion {
                lastDataVersion = version
                try? replica.reloadIdentity()
                actions += withdrawUntrusted(now: now)
                syncTrustedDialers(now: now)
                actions += localWrite(now: now)
            }
        }
        if timers.takePush(now: now) {
            actions += pushAll(now: now)
        }
        if relayHold.release(now: now) {
            actions += offerChanges(except: nil, now: now)
        }
        for i in dialers.indices {
            if case .waiting(let until) = dialers[i].state, now >= until, phase == .running { actions += dial(i) }
        }
        for (id, conn) in connections.sorted(by: { $0.key < $1.key }) {
            actions += perform(conn.session.tick(now: now), on: id, now: now)
            if let due = conn.statusDueAt, now >= due { saveStatus(conn, now: now) }
        }
        if phase == .running, timers.takePendingCheck() {
            updateFallback(now: now)
        }
        if timers.takeFallback(now: now) {
            actions.append(.event(.fallbackTimerFired))
            for i in dialers.indices where dialers[i].state != .connecting && dialers[i].state != .covered {
                if case .connected = dialers[i].state { continue }
                dialers[i].failures = 0
                actions += dial(i)
            }
            for (id, conn) in connections.sorted(by: { $0.key < $1.key }) {
                conn.session.forgetFailedRecordings()
                actions += perform(conn.session.requestResync(now: now) + conn.session.replicaChanged(now: now), on: id, now: now)
            }
            updateFallback(now: now)
        }
        return actions + directPeersChanged(now: now)
    }

    /// When the fallback timer fires (only while something is pending).
    public var fallbackAt: Int64? { timers.fallbackAt }

    /// The earliest time `tick` has work.
    public var nextDeadline: Int64? {
        // Folded as it goes: the driver asks after every event, over every session.
        var earliest = timers.earliest
        func consider(_ deadline: Int64?) { if let deadline, deadline < earliest { earliest = deadline } }
        consider(relayHold.nextRelease)
        consider(relayHold.choice.nextStall)
        for dialer in dialers { if case .waiting(let until) = dialer.state { consider(until) } }
        for conn in connections.values {
            consider(conn.session.nextDeadline)
            consider(conn.statusDueAt)
        }
        return earliest
    }

    /// Clean shutdown: tell every peer, close every connection, stop dialling.
    public func shutdown(now: Int64) -> [NodeAction] {
        defer { assert(invariantsHold()) }
        phase = .stopping
        timers.stop()
        var actions: [NodeAction] = [.event(.shuttingDown)]
        for (id, conn) in connections.sorted(by: { $0.key < $1.key }) {
            // Saved now: the process may exit before the transport reports the close, and
            // `status` must not go on showing a live state.
            conn.status?.state = .disconnected
            saveStatus(conn, now: now)
            actions += perform(conn.session.close(code: .shuttingDown, message: "node shutting down"), on: id, now: now)
        }
        return actions
    }

    /// Changes some peer still lacks, summed over the peers we know.
    public var pendingCount: Int { pendingCount(limit: .max) }

    /// `pendingCount`, counted only up to `limit`: whether anything is pending is a probe per
    /// origin, where the count walks every pending row (and ran after every acknowledgement).
    func pendingCount(limit: Int) -> Int {
        var total = 0
        for conn in connections.values where total < limit { total += conn.session.pendingChangeCount(limit: limit - total) }
        let own = (try? replica.ownOrigins()) ?? []
        let policy = RolePolicy(role: replica.identity.role, watchReceivesEntries: configuration.session.watchReceivesEntries)
        for i in dialers.indices where total < limit {
            if case .connected = dialers[i].state { continue }
            if dialers[i].state == .covered || dialers[i].retired { continue }
            let receives = dialers[i].receivesEntries
            guard receives != false else { continue }  // a peer that takes no entries (a watch) is owed nothing
            total += (try? replica.pendingCount(above: dialers[i].peerVector, allowed: { policy.owes(origin: $0, own: own, peerReceivesEntries: receives) },
                                                limit: limit - total)) ?? 0
        }
        return min(total, limit)
    }

    /// Recordings this node holds that no peer has confirmed yet (they keep the fallback timer
    /// running until someone proves they hold them).
    var unconfirmedRecordings: Int {
        guard storage != nil, !dialers.isEmpty || !connections.isEmpty else { return 0 }
        let connected = connections.values.reduce(0) { $0 + $1.session.pendingRecordingCount() }
        return connected + ((try? replica.unconfirmedRecordingCount()) ?? 0)
    }

    /// The sessions' peers as they stand.
    public var peerStatuses: [PeerStatus] {
        connections.sorted { $0.key < $1.key }.compactMap { $0.value.status }
    }

    // MARK: - Internals

    func dial(_ i: Int) -> [NodeAction] {
        if case .connected = dialers[i].state { return [] }
        if dialers[i].state == .connecting { return [] }
        guard !dialers[i].retired, !dialers[i].addresses.isEmpty else {
            dialers[i].state = .idle
            return []
        }
        dialers[i].state = .connecting
        return [.connect(peer: i, address: dialers[i].address)]
    }

    func pushAll(now: Int64) -> [NodeAction] {
        timers.pendingChanged()
        return offerChanges(except: nil, now: now)
    }

    /// What a session delivered changed the replica: the node's one notice (`.replicaChanged`);
    /// every other peer is told what we hold now (so it does not relay the same writes to us),
    /// and offered what it may now lack (relaying, once the relay hold is over).
    /// `relayed`: it is only other nodes' writes, which a session that holds relays (`SyncSession
    /// .holdsRelays`) cannot send before the hold releases them (the tick offers them then): in a
    /// mesh, offering each applied batch at once to every such peer found nothing to send.
    func replicaChanged(by source: Int, relayed: Bool = false, now: Int64) -> [NodeAction] {
        let vector = try? replica.replicaVector()
        if let vector { relayHold.noted(vector, now: now) }
        return [.replicaChanged] + holdingsChanged(except: source, now: now) + chooseRelays(scanning: [], holding: vector, now: now)
            + offerChanges(except: source, skippingHeld: relayed, now: now)
    }

    /// Every session but `source`'s offers its peer the changes it lacks, in connection order;
    /// `skippingHeld`: not those that hold relays.
    func offerChanges(except source: Int?, skippingHeld: Bool = false, now: Int64) -> [NodeAction] {
        var actions: [NodeAction] = []
        for (id, conn) in connections.sorted(by: { $0.key < $1.key }) where id != source && !(skippingHeld && conn.session.holdsRelays) {
            actions += perform(conn.session.replicaChanged(now: now), on: id, now: now)
        }
        return actions
    }

    /// Judges what is pending now: the fallback timer runs while anything is.
    func updateFallback(now: Int64) {
        timers.judged(pending: pendingCount(limit: 1) + unconfirmedRecordings > 0, now: now, interval: configuration.fallbackInterval)
    }

    /// Turns a session's actions into node actions, keeping status and relaying new changes.
    func perform(_ sessionActions: [SessionAction], on id: Int, now: Int64) -> [NodeAction] {
        var actions: [NodeAction] = []
        for action in sessionActions {
            switch action {
            case .send(let bytes):
                // A connection closed as a duplicate mid-list sends nothing after its ERROR.
                if connections[id]?.silenced == true { continue }
                actions.append(.send(connection: id, bytes: bytes))
            case .close(let reason):
                actions.append(.event(.closing(peer: connections[id]?.status?.nodeID ?? connections[id]?.address ?? "?", reason: reason)))
                actions.append(.close(connection: id))
            case .event(let event):
                actions.append(.sessionEvent(connection: id, event))
                actions += handle(event, on: id, now: now)
            }
        }
        return actions
    }

    func isConnected(_ nodeID: String) -> Bool {
        connections.values.contains { $0.status?.nodeID == nodeID && $0.session.state == .open }
    }

    /// Another open connection to the same node that should yield to this one, if any. Of two
    /// connections between the same nodes, both sides keep the one dialled by the smaller node ID.
    func duplicateConnection(of nodeID: String, besides id: Int) -> Int? {
        guard let other = connections.first(where: { $0.key != id && $0.value.status?.nodeID == nodeID })?.key else { return nil }
        let me = replica.identity.nodeID
        func dialledByKeeper(_ c: Int) -> Bool {
            let dialler = connections[c]!.dialer != nil ? me : nodeID
            return dialler == min(me, nodeID)
        }
        // Close the other one unless it is the keeper and this one is not.
        if dialledByKeeper(other) && !dialledByKeeper(id) { return id }
        return other
    }
}
