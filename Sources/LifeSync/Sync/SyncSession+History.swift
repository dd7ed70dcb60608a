/// Where the HISTORY exchange of an open session is (PROTOCOL.md §7.2.3).
enum HistoryStep: Equatable {
    /// Waiting for the peer's HISTORY (both sides, after the HELLOs).
    case awaitingHistory
    /// The second speaker sent its HISTORY and waits for the first's last word (a HISTORY naming
    /// no origin: its vector and incarnation after its own repair).
    case awaitingLastWord
    /// Exchanged, or not spoken by one side: delta sync runs.
    case done
}

/// Histories compared at the handshake (PROTOCOL.md §7.2.3), so a device restored whole (its
/// replica and its write mark put back together) finds out that its writes since the restore
/// reuse numbers its peers hold with other writes, before either side sends a batch. The side
/// with the smaller node ID speaks first, whoever dialled:
///
///     second                               first (smaller node ID)
///     HELLO                      ◀──▶      HELLO
///                                ◀──       HISTORY (what it knows of the other's origins,
///                                          its own repairs)
///     (takes the repairs, repairs
///      its own origins)
///     HISTORY (its vector now,   ──▶
///     what it knows of the first's)
///                                          (takes the repairs, repairs its own origins)
///                                ◀──       HISTORY (its vector now, its repairs), then batches
///     batches                    ──▶
///
/// Each side repairs only its own origins (`Replica.takeHistory`), and its peer learns the
/// result from the vector that follows, before anything was built from the older one.
extension SyncSession {
    /// Starts the exchange when both HELLOs set bit 4 (the first speaker sends its HISTORY now);
    /// returns whether it did.
    func beginHistoryExchange(now: Int64, actions: inout [SessionAction]) throws -> Bool {
        guard let peer, capabilities.contains(.histories), peer.capabilities.contains(.histories) else { return false }
        open?.historyStep = .awaitingHistory
        if replica.identity.nodeID < peer.nodeID { try sendHistory(to: peer, peerVector: peer.vector, full: true, now: now, actions: &actions) }
        return true
    }

    /// Our HISTORY: with `full`, what we know of the peer's origins (and, when it sets bit 6, of
    /// every origin both hold, §7.2.4); always our vector, incarnation and the repairs it may
    /// need, and to a peer that sets bit 6 the forks we know of that it holds.
    func sendHistory(to peer: Hello, peerVector: VersionVector, full: Bool, now: Int64, actions: inout [SessionAction]) throws {
        let history: History
        let forks = capabilities.contains(.forks) && peer.capabilities.contains(.forks)
        do {
            history = History(vector: try replica.replicaVector(), incarnation: replica.identity.incarnation,
                              origins: full ? try replica.historyProbes(of: peer.nodeID, peerVector: peerVector, thirdParties: forks) : [],
                              repairs: try replica.repairs(for: peerVector),
                              forks: forks ? try replica.knownForks(for: peerVector) : [])
        } catch {
            throw WireError(.storageFailure, "could not read what we hold of \(peer.nodeID)'s history: \(error)")
        }
        lastSent = now
        actions.append(.send(Message.history(history).encoded()))
    }

    /// The peer's HISTORY: take in its repairs and repair what of ours forked, take its vector
    /// as what it holds, then send ours (the second speaker) or our last word and the first
    /// batches (the first). The second's wait ends with the first's last word.
    func receiveHistory(_ history: History, now: Int64, actions: inout [SessionAction]) throws {
        guard let session = open, session.historyStep != .done else {
            throw WireError(.unexpectedMessage, "a HISTORY out of place (only right after the HELLOs, when both set capability bit 4)")
        }
        guard history.incarnation == session.peer.incarnation || Identifier.incarnation(history.incarnation, isBoundTo: session.peer.nodeID) else {
            throw WireError(.identityConflict, "the HISTORY names incarnation \(history.incarnation), which is not bound to \(session.peer.nodeID)")
        }
        let outcome: HistoryOutcome
        do {
            outcome = try replica.takeHistory(history, from: session.peer.nodeID, sendsRecordings: policy.sendsRecordingMetadata(to: session.peer.role), current: session.incarnationAtHello)
        } catch {
            throw WireError(.storageFailure, "could not compare our history with the peer's: \(error)")
        }
        if let rotated = outcome.rotated { actions.append(.event(.incarnationRotated(old: rotated.old, new: rotated.new))) }
        for repair in outcome.repairs { actions.append(.event(.historyRepaired(repair))) }
        if !outcome.learned.isEmpty { actions.append(.event(.repairsLearned(outcome.learned.map { HistoryFork(origin: $0.origin, fork: $0.fork) }))) }
        let own = try ownHistory()
        let peer = session.peer, step = session.historyStep  // as they were before the HISTORY
        open?.ownOrigins = own.origins
        open?.peer.incarnation = history.incarnation
        // The last word names no origin: what the first HISTORY's digests showed still stands.
        open?.agreed.merge(outcome.agreed, uniquingKeysWith: max)
        open?.delta.resync(peerVector: history.vector, own: own, agreed: open?.agreed ?? [:])
        let first = replica.identity.nodeID < peer.nodeID
        if !first && step == .awaitingHistory {
            open?.historyStep = .awaitingLastWord
            try sendHistory(to: peer, peerVector: history.vector, full: true, now: now, actions: &actions)
            return
        }
        if first { try sendHistory(to: peer, peerVector: history.vector, full: false, now: now, actions: &actions) }
        open?.historyStep = .done
        pump(now: now, actions: &actions, limit: 1)
        offerNext(now: now, actions: &actions)
    }

    /// Another session taught this replica repairs, or gave back writes of our own earlier
    /// incarnations: a peer holding one of their origins past that number may hold the writes
    /// given up, or other writes under those numbers, which only a HISTORY exchange finds. The
    /// connection is closed (no ERROR: nothing went wrong), so the next handshake tells it.
    package func endForRepairs(_ forks: [HistoryFork]) -> [SessionAction] {
        guard let session = open, session.peer.capabilities.contains(.histories) else { return [] }
        let holds = session.delta.peerHas.joined(with: session.peer.vector)
        guard let fork = forks.first(where: { holds[$0.origin] > $0.fork }) else { return [] }
        enterClosed()
        return [.close(reason: "incarnation \(fork.origin) changed here above \(fork.fork): reconnecting so that we compare its history again")]
    }

    /// Before the exchange ends, only HISTORY (and PING, PONG, ERROR) may come.
    func checkHistoryOrder(_ message: Message) throws {
        guard let step = open?.historyStep, step != .done else {
            if case .history = message { throw WireError(.unexpectedMessage, "a HISTORY out of place (only right after the HELLOs, when both set capability bit 4)") }
            return
        }
        switch message {
        case .ping, .pong, .error, .history: return
        default: throw WireError(.unexpectedMessage, "\(message.type) before the HISTORY exchange ended (PROTOCOL.md §7.2.3)")
        }
    }
}
