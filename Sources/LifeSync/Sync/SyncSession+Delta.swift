/// Delta sync inside a session (PROTOCOL.md §7.4): receiving batches (admitted through
/// `DeltaSync`, committed together, acknowledged after the commit) and sending them (the window,
/// the role policy, CAUGHT_UP). The decisions are `DeltaSync`'s and `RolePolicy`'s; this is the
/// glue to the replica.
extension SyncSession {
    /// Commits consecutive batches in one transaction, then acknowledges each. A batch this node
    /// must refuse ends the session after the ones before it are committed and acknowledged.
    func receiveBatches(_ batches: [Batch], now: Int64, actions: inout [SessionAction]) throws {
        let acceptable = capabilities.contains(.receivesEntries) ? batches[...] : batches.prefix { $0.changes.isEmpty }
        var outcomes: [ApplyOutcome] = []
        var admitted: [VersionVector] = []
        let own = try ownHistory()
        let current = try replica.replicaVector()
        let counter = current[replica.identity.incarnation]
        var deliversOwnCurrent = false
        for batch in acceptable {
            for (n, change) in batch.changes.enumerated() where change.stamp.sequence > batch.through[change.stamp.origin] {
                throw WireError(.invalidChange, "batch \(batch.id), change \(n) (\(change.id)): seq \(change.stamp.sequence) lies beyond the batch's through")
            }
            deliversOwnCurrent = deliversOwnCurrent || batch.changes.contains { $0.stamp.origin == replica.identity.incarnation }
            admitted.append(try open!.delta.admit(batch, current: current, ownOrigins: own.origins, stored: replica.justifiedSequence))
        }
        do {
            if !acceptable.isEmpty {
                let seals = acceptable.map { Replica.ReceivedSeals(seals: $0.seals, receivedDigests: $0.receivedDigests) }
                outcomes = try replica.apply(zip(acceptable, admitted).map { ($0.changes, $1) }, origins: namedOrigins(acceptable), seals: seals)
            }
        } catch ReplicaError.limitExceeded(let reason) {
            throw WireError(.limitExceeded, reason)
        } catch ReplicaError.forgedWrite(let reason) {
            // Nothing of the batch is kept: this note is what the user can see of it.
            try? replica.noteRefusedBatch(from: peer?.nodeID ?? "an unknown peer", reason: reason)
            throw WireError(.forgedChange, reason)
        } catch ReplicaError.forged(let reason) {
            throw WireError(.invalidChange, reason)
        } catch {
            let ids = acceptable.count == 1 ? "batch \(acceptable[0].id)" : "batches \(acceptable.first!.id)…\(acceptable.last!.id)"
            throw WireError(.storageFailure, "could not store \(ids): \(error)")
        }
        precondition(outcomes.count == acceptable.count, "one outcome per committed batch")
        if let peer, acceptable.contains(where: { $0.changes.contains { $0.stamp.origin == peer.incarnation } }) { open?.peerOriginRecorded = true }
        if let peer, open?.unbackedClaim == true, try replica.backIncarnationClaim(by: peer.nodeID) { open?.unbackedClaim = false }
        // Writes of our own current history that we never made, delivered for real: this file
        // went back in time (the handshake could not tell, having written nothing since).
        if deliversOwnCurrent, counter >= 1, try replica.replicaVector()[replica.identity.incarnation] > counter {
            let old = replica.identity.incarnation
            actions.append(.event(.incarnationRotated(old: old, new: try replica.rotateIncarnation())))
        }
        if !acceptable.isEmpty { open?.receivedSinceCaughtUp = true }
        // Writes of our own earlier incarnations taken back past what we held (a replica
        // restored from an older copy relearning them from a relay): a peer whose history of
        // that origin we compared before, below them, may hold other writes under those numbers,
        // and only a HISTORY exchange finds that (PROTOCOL.md §7.2.3). Its session ends, so the
        // next handshake compares the longer history. (Our own writes never come back otherwise:
        // no vector is read for a batch without them.)
        if acceptable.contains(where: { $0.changes.contains { own.origins.contains($0.stamp.origin) } }) {
            let after = try replica.replicaVector()
            let takenBack = own.origins.sorted().filter { $0 != replica.identity.incarnation && after[$0] > current[$0] }
            if !takenBack.isEmpty { actions.append(.event(.repairsLearned(takenBack.map { HistoryFork(origin: $0, fork: current[$0]) }))) }
        }
        for (batch, outcome) in zip(acceptable, outcomes) {
            received(batch, outcome: outcome, own: own, now: now, actions: &actions)
            actions.append(.send(Message.ack(Ack(batchID: batch.id, applied: UInt32(clamping: outcome.applied), conflicts: UInt32(clamping: outcome.conflicts))).encoded()))
            actions.append(.event(.applied(batchID: batch.id, changes: batch.changes.count, outcome: outcome)))
        }
        if acceptable.count < batches.count {
            throw WireError(.unexpectedMessage, "BATCH with changes to a node that does not receive entries")
        }
    }

    /// PLANTED BUG `ackBeforeCommit`: the watermark is committed on its own, before the rows.
    /// The rows wait in memory for the next tick: a crash in between loses them.
    func receiveBatchAckingFirst(_ batch: Batch, now: Int64, actions: inout [SessionAction]) throws {
        guard capabilities.contains(.receivesEntries) || batch.changes.isEmpty else {
            throw WireError(.unexpectedMessage, "BATCH with changes to a node that does not receive entries")
        }
        let own = try ownHistory()
        let through = try open!.delta.admit(batch, current: try replica.replicaVector(), ownOrigins: own.origins, stored: replica.justifiedSequence)
        do {
            _ = try replica.apply([([], through)], origins: namedOrigins([batch]))
        } catch {
            throw WireError(.storageFailure, "could not store batch \(batch.id): \(error)")
        }
        actions.append(.send(Message.ack(Ack(batchID: batch.id, applied: 0, conflicts: 0)).encoded()))
        deferredChanges += batch.changes
        open?.receivedSinceCaughtUp = true
        received(batch, outcome: ApplyOutcome(), own: own, now: now, actions: &actions)
        actions.append(.event(.applied(batchID: batch.id, changes: batch.changes.count, outcome: ApplyOutcome())))
    }

    /// The origins these batches name with their node, for the replica to remember — only
    /// origins whose changes they deliver: a table entry or a HELLO is a claim, and a stranger
    /// claiming another node's incarnation would lock that node out (`identity_conflict`) for
    /// ever. The peer's own incarnation counts once it delivers writes of it.
    func namedOrigins(_ batches: some Collection<Batch>) -> [(origin: String, nodeID: String, role: Role)] {
        var delivered = Set<String>()
        for batch in batches { for change in batch.changes { delivered.insert(change.stamp.origin) } }
        var named = batches.flatMap(\.origins).compactMap { info -> (origin: String, nodeID: String, role: Role)? in
            guard let nodeID = info.nodeID, let role = info.role, delivered.contains(info.origin) else { return nil }
            return (info.origin, nodeID, role)
        }
        if open?.peerOriginRecorded == false, let peer, delivered.contains(peer.incarnation) {
            named.append((peer.incarnation, peer.nodeID, peer.role))
        }
        return named
    }

    /// Our origins and how far we wrote in each: what no peer's claim may overrule.
    func ownHistory() throws -> OwnHistory {
        let origins = try replica.ownOrigins()
        let vector = try replica.replicaVector()
        var counts = VersionVector()
        for origin in origins { counts[origin] = vector[origin] }
        return OwnHistory(origins: origins, counts: counts)
    }

    /// What a committed batch changes in the session: recordings the user deleted stop moving,
    /// and the batch counts as held by the peer (it came from there) and as sent (never echoed).
    func received(_ batch: Batch, outcome: ApplyOutcome, own: OwnHistory, now: Int64, actions: inout [SessionAction]) {
        for removed in outcome.recordingsToRemove {
            if open?.incoming?.id == removed.id { open?.incoming = nil }
            if open?.outgoing?.id == removed.id {
                // Stop sending what the user deleted; the receiver drops what it had of it.
                open?.outgoing = nil
                actions.append(.send(Message.failure(recordingID: removed.id, code: TransferFailure.deleted.rawValue,
                                                     message: "the recording was deleted by the user").encoded()))
            }
            try? storage?.remove(removed.fileName)
            storage?.discardTemporary(removed.id)
        }
        if let storage {
            for id in outcome.recordingsArrived { _ = try? replica.adoptStoredCopy(id: id, in: storage) }
            for id in outcome.unknownRecordingsDeleted {
                if let name = storage.storedFileName(forRecordingID: id) { try? storage.remove(name) }
            }
        }
        open?.delta.peerHolds(batch.through, own: own)
        changesReceived += batch.changes.count
        lastSent = now
    }

    // MARK: - Telling the peer what we hold

    /// The replica took writes from another peer: tell this one what we hold now (HOLDS,
    /// PROTOCOL.md §5.11), so that it does not relay them to us once its relay hold is over. At
    /// most one HOLDS per `holdsInterval`; one asked for sooner goes when the interval is over.
    /// Only to a peer that understands it and relays to us (a watch relays nothing).
    package func holdingsChanged(now: Int64) -> [SessionAction] {
        guard let session = open, session.peer.capabilities.contains(.holds), session.peer.role != .watch,
              capabilities.contains(.receivesEntries) else { return [] }
        if session.historyStep != .done {
            // Sent once the histories are compared (nothing else may go before).
            open?.holdsDue = now
            return []
        }
        let spacing = holdsSpacing
        if let sent = session.holdsSentAt, now < sent + spacing {
            if session.holdsDue == nil { open?.holdsDue = sent + spacing }
            return []
        }
        return sendHolds(now: now)
    }

    /// How long after one HOLDS the next may go to this peer: `holdsInterval` for each ten nodes
    /// (or part of ten) we hear from directly. Each HOLDS a node receives costs it the choice of
    /// relays over every peer, and every peer sends them: with a fixed interval a node of 40 took
    /// about as many HOLDS a second as a node of 10 took in four, and choosing, decoding and
    /// sending them was a ninth of its processor time. So a node sends, and takes, about as many
    /// a second whatever the size of its household, and a household of ten or fewer is as it was.
    var holdsSpacing: Int64 {
        configuration.holdsInterval * Int64((max(1, relayHold.direct.count) + 9) / 10)
    }

    /// Sends HOLDS with the replica's vector now.
    func sendHolds(now: Int64) -> [SessionAction] {
        open?.holdsDue = nil
        guard let vector = try? replica.replicaVector(), let peer = open?.peer else { return [] }
        open?.holdsSentAt = now
        lastSent = now
        let direct = relayHold.direct.subtracting([peer.nodeID]).sorted()
        let relay = capabilities.contains(.relays) && peer.capabilities.contains(.relays) ? relayHold.choice.origins(askedOf: peer.nodeID) : nil
        return [.send(Message.holds(vector: vector, direct: direct, relay: relay).encoded())]
    }

    // MARK: - Sending

    /// Whether other nodes' writes may go to the peer yet: once the hold after the handshake is
    /// over and, from a peer that sets bit 7, its first HOLDS arrived (`OpenSession.heardHolds`,
    /// or the wait for it settled);
    /// at once when nothing is held (a session driven without a node).
    func relaysAllowed(_ session: OpenSession) -> Bool {
        !holdsRelays(session) || (session.relaysFrom == nil && (session.heardHolds || session.holdsWaited))
    }

    /// How far each of other nodes' origins may go to the peer now, nil for no bound (the relay
    /// hold, PROTOCOL.md §7.4): nothing before the hold after the handshake is over; what was
    /// held `hold` ms, or longer when other nodes the peer hears from directly could relay it
    /// too and come before us in turn (`RelayHold.holdFor`); and of the peer's direct nodes'
    /// origins, which their node sends it, only what has settled (their node lost it, or holds
    /// other writes under its numbers).
    func relayLimit(_ session: OpenSession, direct: Set<String>, sentUpTo: VersionVector, now: Int64) -> (String) -> UInt64? {
        guard holdsRelays(session) else { return { _ in nil } }
        guard relaysAllowed(session) else { return { _ in 0 } }
        let hold = relayHold, peer = session.peer.nodeID, me = replica.identity.nodeID
        var caps: [Int64: VersionVector?] = [:]
        func bound(_ origin: String, heldFor delay: Int64) -> UInt64? {
            if caps[delay] == nil { caps[delay] = .some(hold.cap(heldFor: delay, now: now)) }
            return caps[delay]!?[origin]
        }
        return { origin in
            if let asks = session.peerAsks {
                // The peer chooses its relays (bit 8): what it asks of us goes at once, unless it
                // hears from the origin's node itself; the rest only once settled, counted from
                // when relays to it began as well (to a peer that came late, what settled long
                // ago would go from every relay at once, and from the origin's node too).
                if asks.contains(origin) && !direct.contains(origin) { return nil }
                if let due = session.relaysStarted.map({ $0 + hold.settle }), now < due {
                    if self.open?.turnDue.map({ due < $0 }) ?? true { self.open?.turnDue = due }
                    return 0
                }
                return bound(origin, heldFor: hold.settle)
            }
            if direct.contains(origin) { return bound(origin, heldFor: hold.settle) }
            let delay = hold.holdFor(origin, to: peer, relays: session.peerDirect, me: me)
            // Turns count from when relays to the peer began, too: to a peer that came (or
            // said what it holds) late, every turn counted from the writes alone was over, and
            // every relay sent it the same writes at once.
            if delay > hold.hold, let due = session.relaysStarted.map({ $0 + delay - hold.hold }), now < due {
                if self.open?.turnDue.map({ due < $0 }) ?? true { self.open?.turnDue = due }
                return 0
            }
            let mine = bound(origin, heldFor: delay)
            // Writes the peer lacks, that the first in turn may send and we may not yet: wake
            // when our turn comes (the first may not hold them).
            if delay > hold.hold, let mine, let noted = hold.latest?[origin], sentUpTo[origin] < noted,
               mine < bound(origin, heldFor: hold.hold) ?? noted {
                hold.wake(heldFor: delay, now: now)
            }
            return mine
        }
    }

    /// Whether relays to this peer are held: only to a peer that says what reaches it (bit 7),
    /// as nothing would be learnt from any other meanwhile; never without a node (no hold).
    func holdsRelays(_ session: OpenSession) -> Bool {
        relayHold.hold > 0 && session.peer.capabilities.contains(.holds)
    }

    /// Whether relays to this open session's peer are held (`holdsRelays`), and it asks us to
    /// relay it nothing: writes of origins it asks of us go at once (`relayLimit`), so a batch
    /// we take is offered to it at once, not only when the hold releases it.
    package var holdsRelays: Bool { open.map { holdsRelays($0) && $0.peerAsks?.isEmpty != false } ?? false }

    /// Whether the role policy lets us send `origin`'s changes to this peer.
    func mayForward(_ origin: String) -> Bool {
        guard let session = open else { return false }
        if configuration.plantedBugs.contains(.relayDropsForeignChanges), !session.ownOrigins.contains(origin) { return false }
        return policy.mayForward(origin: origin, own: session.ownOrigins, to: session.peer.capabilities)
    }

    /// Sends batches while the window has room and there is something to send, `limit` at most.
    /// (Always sending one per call, the rest on immediate ticks, cost the simulator a fifth of
    /// its speed; only the handshake does, see `windowUnfilled`.)
    /// `relaysOnly`: other nodes' writes only (the relay hold just ended; our own writes keep
    /// to their own triggers, the debounce among them).
    func pump(now: Int64, actions: inout [SessionAction], limit: Int = .max, relaysOnly: Bool = false) {
        var sent = 0
        var builder = BatchBuilder(maximumChanges: configuration.batchMaximumChanges, maximumBytes: configuration.batchMaximumBytes)
        guard let session = open, session.historyStep == .done else { return }
        let ownBefore = session.ownOrigins
        builder.includeRecordings = policy.sendsRecordingMetadata(to: session.peer.role)
        // Our origins as they are now, not as the handshake found them: this session or another
        // may have rotated our incarnation, or taken back writes of an incarnation of ours that
        // a device restored whole had forgotten. Those we seal ourselves; read as another node's,
        // they had no kept seal and were passed over as unsealed while `through` covered them,
        // so the peer never got them (restore seed 5576 with two phones).
        if let mine = try? replica.ownOrigins() { open?.ownOrigins = mine }
        let allowed = { (origin: String) in self.mayForward(origin) && !(relaysOnly && ownBefore.contains(origin)) }
        // Nothing held above what the peer has, in the origins that may go: no batch to build
        // (a node of a mesh is offered every batch it applies, for each of its peers).
        let mayLack = (try? replica.replicaVector().entries.contains { $0.sequence > session.delta.sentUpTo[$0.origin] && allowed($0.origin) }) ?? true
        // The origins of the nodes the peer hears from directly, by their owners as we know them.
        let direct: Set<String> = !mayLack || session.peerDirect.isEmpty ? [] : Set(((try? replica.knownOrigins()) ?? []).compactMap { known in
            known.nodeID.map(session.peerDirect.contains) == true ? known.origin : nil
        })
        var damaged: [String] = []
        var unsealed: [String] = []
        defer {
            let fresh = damaged.filter { open?.reportedDamaged.insert($0).inserted ?? false }
            if !fresh.isEmpty { actions.append(.event(.damagedRowsSkipped(ids: fresh))) }
            let freshUnsealed = unsealed.filter { open?.reportedDamaged.insert($0).inserted ?? false }
            if !freshUnsealed.isEmpty { actions.append(.event(.unsealedRowsSkipped(ids: freshUnsealed))) }
        }
        while mayLack && open?.delta.hasRoom(window: configuration.window) == true && sent < limit {
            let next: BatchBuilder.Next?
            do {
                next = try builder.next(from: replica, sentUpTo: open!.delta.sentUpTo, own: open!.ownOrigins, limit: relayLimit(session, direct: direct, sentUpTo: open!.delta.sentUpTo, now: now),
                                        allowed: allowed,
                                        damaged: &damaged, unsealed: &unsealed)
            } catch {
                actions += fail(WireError(.storageFailure, "could not read changes: \(error)"))
                return
            }
            guard let next else { break }
            let id = open!.delta.sent(changes: next.changes, through: next.through)
            let origins = ((try? replica.knownOrigins()) ?? []).compactMap { known -> OriginInfo? in
                guard let nodeID = known.nodeID, let role = known.role else { return nil }
                return OriginInfo(origin: known.origin, nodeID: nodeID, role: role)
            }
            actions.append(.send(Message.encodedBatch(id: id, origins: origins, changes: next.changes, through: next.through, seals: next.seals)))
            actions.append(.event(.sent(batchID: id, changes: next.changes.count)))
            changesSent += next.changes.count
            lastSent = now
            open?.reportedSentAll = false
            sent += 1
        }
        guard let after = open else { return }  // a storage failure closed the session
        after.windowUnfilled = after.windowUnfilled && sent == limit && after.delta.hasRoom(window: configuration.window)
        if after.delta.inFlight.isEmpty && !after.reportedSentAll {
            after.reportedSentAll = true
            after.receivedSinceCaughtUp = false
            lastSent = now
            actions.append(.send(Message.caughtUp(vector: after.delta.sentUpTo).encoded()))
            actions.append(.event(.sentAll))
        }
    }
}
