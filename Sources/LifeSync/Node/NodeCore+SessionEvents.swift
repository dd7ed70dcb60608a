extension NodeCore {
    // MARK: - What a session's events mean for the node: peers' status, relaying, transfers, logs

    func handle(_ event: SessionEvent, on id: Int, now: Int64) -> [NodeAction] {
        guard let conn = connections[id] else { return [] }
        switch event {
        case .handshake(let peer, _):
            return handshook(peer, conn: conn, on: id, now: now)
        case .applied(_, let changes, let outcome):
            conn.status?.entriesReceived += changes
            if changes > 0 { conn.persisted = true }
            conn.receivedAll = false
            var actions: [NodeAction] = []
            if changes > 0 {
                actions.append(.event(.received(from: conn.name, changes: changes, applied: outcome.applied, conflicts: outcome.conflicts)))
                actions += replicaChanged(by: id, relayed: true, now: now)  // what one peer sent, the others may lack
            }
            timers.pendingChanged()
            return actions
        case .sent(_, let changes):
            conn.status?.entriesSent += changes
            conn.sentAll = false
            return []
        case .acknowledged(_, let changes):
            timers.pendingChanged()
            conn.persisted = true
            saveStatusSoon(conn, now: now)
            return changes > 0 ? [.event(.acknowledged(by: conn.name, changes: changes))] : []
        case .sentAll:
            conn.sentAll = true
            return markSynced(conn, now: now)
        case .receivedAll:
            conn.receivedAll = true
            return markSynced(conn, now: now)
        case .incarnationRotated(let old, let new):
            return [.event(.incarnationRotated(old: old, new: new))]
        case .historyRepaired(let repair):
            // The moved writes are new to every peer.
            let actions: [NodeAction] = [.event(.historyRepaired(peer: conn.name, repair: repair))] + replicaChanged(by: id, now: now)
            timers.pendingChanged()
            return actions
        case .repairsLearned(let forks):
            var actions: [NodeAction] = []
            for (other, otherConn) in connections.sorted(by: { $0.key < $1.key }) where other != id {
                actions += perform(otherConn.session.endForRepairs(forks), on: other, now: now)
            }
            return actions
        case .peerHolds:
            return conn.session.peer.map { chooseRelays(scanning: [$0.nodeID], now: now) } ?? []
        case .incarnationClaimIgnored(let peer, let claimed, let held):
            return [.event(.incarnationClaimIgnored(peer: peer, claimed: claimed, held: held))]
        case .clockSkew(let peerMs, let localMs):
            return [.event(.clockSkew(peer: conn.address, aheadSeconds: (peerMs - localMs) / 1000))]
        case .peerError(let code, let message):
            if code == ErrorCode.duplicateConnection.rawValue { conn.closedAsDuplicate = true }
            return [.event(.peerError(peer: conn.name, code: code, message: message))]
        case .protocolError(let error):
            // A refused key is reported once (`untrustedPeer`), not again as a protocol error.
            return error.code == .notTrusted && conn.status == nil ? [] : [.event(.protocolError(peer: conn.name, error: error))]
        case .untrustedPeer(let fingerprint, let claimedNodeID, let claimedRole):
            return noteUntrusted(fingerprint: fingerprint, claimedNodeID: claimedNodeID, claimedRole: claimedRole, address: conn.address, now: now)
        case .recordingProgress, .recordingConfirmed, .recordingClaimedByPeer, .recordingReceived, .recordingResumed,
             .recordingCopyRemoved, .recordingFailed:
            return handleRecording(event, conn: conn, on: id, now: now)
        case .damagedRowsSkipped(let ids):
            return [.event(.damagedRowsSkipped(ids: ids))]
        case .unsealedRowsSkipped(let ids):
            return [.event(.unsealedRowsSkipped(ids: ids))]
        }
    }

    func markSynced(_ conn: Connection, now: Int64) -> [NodeAction] {
        guard conn.sentAll && conn.receivedAll, conn.status != nil else { return [] }
        let wasSynced = conn.status?.state == .synced
        conn.status?.state = .synced
        conn.status?.lastSync = replica.now
        if wasSynced { saveStatusSoon(conn, now: now) } else { saveStatus(conn, now: now) }
        return wasSynced ? [] : [.event(.inSync(with: conn.status!.nodeID, sent: conn.status!.entriesSent, received: conn.status!.entriesReceived))]
    }

    /// The handshake completed: the dialer learns its node, a duplicate connection yields, and
    /// the peer's status row starts (or goes on from its last session's counts).
    func handshook(_ peer: Hello, conn: Connection, on id: Int, now: Int64) -> [NodeAction] {
        let wall = replica.now
        var actions: [NodeAction] = []
        if let dialer = conn.dialer {
            learnNode(peer.nodeID, dialer: dialer, now: now)
            dialers[dialer].receivesEntries = peer.capabilities.contains(.receivesEntries)
        }
        if let duplicate = duplicateConnection(of: peer.nodeID, besides: id) {
            connections[duplicate]!.closedAsDuplicate = true
            actions = perform(connections[duplicate]!.session.close(code: .duplicateConnection,
                                                                   message: "already connected to \(peer.nodeID)"), on: duplicate, now: now)
            connections[duplicate]?.silenced = true
            if duplicate == id { return actions }
        }
        if let dialer = conn.dialer { dialers[dialer].failures = 0 }
        // A peer whose key the user trusts gets its row at the handshake, even if nothing
        // ever moves between the two (two watches): `status` shows it met it.
        if case .trusted? = conn.session.credential { conn.persisted = true }
        else { conn.persisted = (try? replica.isKnownPeer(nodeID: peer.nodeID)) ?? false }
        conn.status = PeerStatus(nodeID: peer.nodeID, role: peer.role, address: conn.address,
                                 direction: conn.dialer == nil ? "inbound" : "outbound", state: .syncing, lastConnected: wall,
                                 vector: peer.vector)
        // The counts go on from the last session with this peer: a user (and `bench sync`)
        // reads how much went each way in all, and anything received twice shows there.
        if conn.persisted, let earlier = try? replica.peers().first(where: { $0.nodeID == peer.nodeID }) {
            conn.status?.entriesSent = earlier.entriesSent
            conn.status?.entriesReceived = earlier.entriesReceived
        }
        saveStatus(conn, now: now)
        // The new peer learns at once whose writes reach us directly; the others, if that changed.
        return actions + [.event(.peerConnected(peer: peer.nodeID, role: peer.role, address: conn.address, inbound: conn.dialer == nil))]
            + perform(conn.session.holdingsChanged(now: now), on: id, now: now) + directPeersChanged(now: now)
    }

    /// What a session's recording transfers mean for the node: `status`'s transfers, progress
    /// logged at most every 2 s, mirroring what arrived, and the fallback timer.
    func handleRecording(_ event: SessionEvent, conn: Connection, on id: Int, now: Int64) -> [NodeAction] {
        switch event {
        case .recordingProgress(let recording, let done, let total, let sending):
            transfers[recording] = (done, total, sending)
            var rate = progressLogged[recording].flatMap { $0.connection == id ? $0 : nil } ?? TransferRate(connection: id, now: now, done: done)
            defer { progressLogged[recording] = rate }
            guard done < total, now - (rate.loggedAt ?? -10_000) >= 2_000 else { return [] }
            rate.loggedAt = now
            return [.event(.transferProgress(recording: recording, peer: conn.name, sending: sending, done: done, total: total,
                                             rate: rate.mebibytesPerSecond(done: done, now: now)))]
        case .recordingConfirmed(let recording):
            transfers[recording] = nil
            progressLogged[recording] = nil
            timers.pendingChanged()
            return [.event(.recordingConfirmed(recording: recording, by: conn.name))]
        case .recordingClaimedByPeer(let recording):
            transfers[recording] = nil
            progressLogged[recording] = nil
            return [.event(.recordingClaimedByPeer(recording: recording, by: conn.name))]
        case .recordingReceived(let recording, let size):
            transfers[recording] = nil
            progressLogged[recording] = nil
            // A phone mirrors what it just received to its macs.
            return [.event(.recordingReceived(recording: recording, size: size, from: conn.name))] + replicaChanged(by: id, now: now)
        case .recordingResumed(let recording, let offset):
            return [.event(.recordingResumed(recording: recording, offset: offset))]
        case .recordingCopyRemoved(let recording):
            return [.event(.watchCopyRemoved(recording: recording))]
        case .recordingFailed(let recording, let reason, let sending):
            transfers[recording] = nil
            progressLogged[recording] = nil
            timers.pendingChanged()
            return [.event(.transferFailed(recording: recording, peer: conn.name, sending: sending, reason: reason))]
        default:
            preconditionFailure("not a recording event: \(event)")
        }
    }

    /// Saves the peer's row now if its last save is a second old, else once that second is up,
    /// on the next half second (`tick`), so `status` is never more than a second and a half
    /// behind. Each save is a durable commit and counts what is pending: a bulk sync is
    /// acknowledged 50 times in 100k entries, and a node of 40 that stays in sync hears a
    /// CAUGHT_UP or sends all dozens of times a second. On the half-second grid, the saves due
    /// on all connections take one tick: each on its own time, a node of 20 ticked up to 19
    /// times a second, and a tick looks at every session (the 20-node simulation ran at half speed).
    func saveStatusSoon(_ conn: Connection, now: Int64) {
        if let saved = conn.statusSavedAt, now - saved < 1_000 {
            conn.statusDueAt = conn.statusDueAt ?? (saved + 1_000 + 499) / 500 * 500
        } else {
            saveStatus(conn, now: now)
        }
    }

    func saveStatus(_ conn: Connection, now: Int64) {
        conn.statusDueAt = nil
        guard var status = conn.status, conn.persisted else { return }
        if case .untrusted? = conn.session.credential { preconditionFailure("a peer row for a key that is not trusted") }
        conn.statusSavedAt = now
        status.pending = conn.session.pendingChangeCount()
        status.vector = conn.session.peerHas
        conn.status = status
        try? replica.savePeer(status)
    }

    /// Whether an open, handshaken connection to `nodeID` exists.
}
