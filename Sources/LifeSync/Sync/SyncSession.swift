/// One sync connection with one peer, as a state machine: events in, actions out.
///
/// The session never touches a socket, a clock or a thread: its driver feeds it the bytes it
/// received and the time, and carries out the `SessionAction`s it returns. The TCP runtime and
/// the simulator drive the same code.
///
/// ```swift
/// var session = SyncSession(replica: replica, configuration: .init(), now: 0)
/// let hello = session.start(now: 0)            // [.send(HELLO)]
/// let replies = session.receive(bytes, now: 5)  // [.send(ACK), .event(.applied(…))]
/// ```
///
/// Delta sync (PROTOCOL.md §7): each side sends the changes above the peer's vector, origin by
/// origin in ascending sequence, in bounded batches; the receiver commits a batch in one
/// transaction and only then acknowledges it. What the peer has is tracked as `peerHas` (its
/// HELLO vector, what it acknowledged, what it sent us), so nothing is sent twice and nothing
/// received is echoed back.
package final class SyncSession {
    package enum State: Equatable, Sendable {
        case awaitingHello
        case open
        case closed
    }

    package let replica: Replica
    package let configuration: SessionConfiguration
    /// Where recording bytes live; nil for a node that does not transfer recordings.
    let storage: RecordingStorage?
    /// Shared by the node's sessions (see `IncomingTransfers`).
    let incomingTransfers: IncomingTransfers
    /// How far other nodes' writes may be relayed yet, shared by the node's sessions.
    let relayHold: RelayHold
    /// Where the session is, with what it knows there (`SyncSession+Stage.swift`).
    var stage: Stage = .awaitingHello
    package var state: State { stage.state }
    /// The peer's HELLO, once the session is open.
    package var peer: Hello? { stage.last?.peer }
    /// What the peer is known to hold.
    package var peerHas: VersionVector { stage.last?.delta.peerHas ?? VersionVector() }
    /// What the peer says it holds, as it says it (`OpenSession.peerClaims`).
    package var peerClaims: VersionVector { stage.last?.peerClaims ?? VersionVector() }
    var decoder = FrameDecoder(firstFrameMaximum: Message.Limits.maximumHandshakeFrameLength)
    var startedAt: Int64
    var lastReceived: Int64
    var lastSent: Int64
    var helloSent = false
    let credential: PeerCredential?
    /// Only with the planted bug `ackBeforeCommit`: rows acknowledged but not yet written.
    var deferredChanges: [Change] = []
    package internal(set) var changesSent = 0
    package internal(set) var changesReceived = 0

    /// `credential` is what the transport proved of the peer (`NodeCore` always gives one); nil
    /// means the caller vouches for the peer by other means (session-level tests and tools).
    package init(replica: Replica, configuration: SessionConfiguration, now: Int64, storage: RecordingStorage? = nil,
                incomingTransfers: IncomingTransfers = IncomingTransfers(), relayHold: RelayHold = RelayHold(hold: 0),
                credential: PeerCredential? = nil) {
        self.credential = credential
        if case .untrusted = credential {
            // Nothing but a small HELLO is read from a key we do not trust, judged by its header
            // before any payload is buffered or decoded.
            decoder = FrameDecoder(firstFrameMaximum: Message.Limits.maximumUntrustedFrameLength, firstFrameType: MessageType.hello.rawValue)
        }
        self.replica = replica
        self.configuration = configuration
        self.storage = storage
        self.incomingTransfers = incomingTransfers
        self.relayHold = relayHold
        startedAt = now
        lastReceived = now
        lastSent = now
    }

    /// Who sends what to whom.
    var policy: RolePolicy { RolePolicy(role: replica.identity.role, watchReceivesEntries: configuration.watchReceivesEntries) }

    /// What this node asks of its peers.
    var capabilities: Capabilities { configuration.capabilities(of: replica.identity.role, transfersRecordings: storage != nil) }

    /// The connection is up: send our HELLO.
    package func start(now: Int64) -> [SessionAction] {
        guard !helloSent, state != .closed else { return [] }
        if case .untrusted(let fingerprint) = credential {
            // We dialled a key we do not trust: not even our HELLO (it carries our vector) goes.
            return [.event(.untrustedPeer(fingerprint: fingerprint, claimedNodeID: nil, claimedRole: nil))]
                + fail(WireError(.notTrusted, "this node does not trust your key \(fingerprint.hex.prefix(16))…"))
        }
        helloSent = true
        lastSent = now
        let hello = Hello(nodeID: replica.identity.nodeID, role: replica.identity.role, incarnation: replica.identity.incarnation,
                          capabilities: capabilities, clock: replica.currentClock, vector: (try? replica.replicaVector()) ?? VersionVector(),
                          name: try? replica.ownName())
        return [.send(Message.hello(hello).encoded())]
    }

    /// Bytes arrived from the peer.
    package func receive(_ bytes: [UInt8], now: Int64) -> [SessionAction] { receive(bytes[...], now: now) }

    /// Bytes arrived from the peer, as a slice of the transport's read buffer.
    ///
    /// Every complete frame is decoded before any is handled, so that batches which arrived
    /// together are committed together (`receiveBatches`). A frame that does not decode ends
    /// the session after the frames before it were handled, as if they had come alone.
    package func receive(_ bytes: ArraySlice<UInt8>, now: Int64) -> [SessionAction] {
        guard state != .closed else { return [] }
        lastReceived = now
        var actions: [SessionAction] = []
        var messages: [Message] = []
        var undecodable: WireError?
        // An ERROR frame is never answered, even one that does not decode (PROTOCOL.md §7.1):
        // the peer is closing anyway, and two sides answering each other's bad ERRORs would loop.
        var undecodableIsError = false
        do {
            for frame in try decoder.feed(bytes) {
                do {
                    messages.append(try Message.decode(type: frame.type, payload: frame.payload))
                } catch {
                    undecodable = error
                    undecodableIsError = frame.type == MessageType.error.rawValue
                    break
                }
            }
        } catch {
            undecodable = error
            if case .untrusted(let fingerprint) = credential {
                undecodable = WireError(.notTrusted, "this node does not trust your key \(fingerprint.hex.prefix(16))… (and \(error.message))")
            }
        }
        do {
            var next = 0
            while next < messages.count, state != .closed {
                guard state == .open, open?.historyStep == .done, !configuration.plantedBugs.contains(.ackBeforeCommit), case .batch = messages[next] else {
                    try handle(messages[next], now: now, actions: &actions)
                    next += 1
                    continue
                }
                var batches: [Batch] = []
                while next < messages.count, case .batch(let batch) = messages[next] {
                    batches.append(batch)
                    next += 1
                }
                try receiveBatches(batches, now: now, actions: &actions)
            }
            if let undecodable, state != .closed {
                guard undecodableIsError else { throw undecodable }
                enterClosed()
                actions += [.event(.protocolError(undecodable)), .close(reason: "peer sent an ERROR that does not decode: \(undecodable)")]
            }
        } catch let error as WireError {
            actions += fail(error)
        } catch {
            actions += fail(WireError(.internalError, "\(error)"))
        }
        return actions
    }

    /// Time passed: verdicts on incoming chunks, keepalive, idle and handshake timeouts.
    package func tick(now: Int64) -> [SessionAction] {
        var actions: [SessionAction] = []
        collectVerdicts(now: now, actions: &actions)
        return actions + timers(now: now)
    }

    private func timers(now: Int64) -> [SessionAction] {
        if !deferredChanges.isEmpty {
            _ = try? replica.apply(deferredChanges, through: VersionVector())
            deferredChanges.removeAll()
        }
        switch stage {
        case .closed:
            return []
        case .awaitingHello:
            if now - startedAt > configuration.handshakeTimeout {
                return fail(WireError(.badHandshake, "no HELLO within \(configuration.handshakeTimeout) ms"))
            }
            return []
        case .open(let session):
            if let due = session.holdsDue, now >= due, session.historyStep == .done {
                return sendHolds(now: now)
            }
            if let from = session.relaysFrom, now >= from {
                if holdsRelays(session), !session.heardHolds, !session.holdsWaited {
                    open?.holdsWaited = true
                    open?.relaysFrom = now + relayHold.settle - relayHold.hold
                    return []
                }
                open?.relaysFrom = nil
                if session.heardHolds || session.holdsWaited { open?.relaysStarted = now }
                var actions: [SessionAction] = []
                pump(now: now, actions: &actions, relaysOnly: true)
                return actions
            }
            if let due = session.turnDue, now >= due {
                open?.turnDue = nil
                var actions: [SessionAction] = []
                pump(now: now, actions: &actions, relaysOnly: true)
                return actions
            }
            if session.windowUnfilled && session.historyStep == .done {
                var actions: [SessionAction] = []
                pump(now: now, actions: &actions, limit: 1)
                return actions
            }
            if session.outgoing != nil {
                var actions: [SessionAction] = []
                abandonStalledTransfer(now: now, actions: &actions)
                if !actions.isEmpty { return actions }
            }
            // Only once a retry is due: with one waiting, every tick (any session's deadline)
            // read every recording to offer and found none (a twentieth of the simulation).
            if open?.outgoing == nil, open?.failedRecordings.values.contains(where: { now >= $0 }) == true {
                var actions: [SessionAction] = []
                offerNext(now: now, actions: &actions)
                // Retries that are due and were not offered have nothing to wait for: the next
                // offer (after a transfer, a batch, a reconnection) considers them anyway. Kept,
                // their time would sit in the past in `nextDeadline` and spin the driver.
                open?.failedRecordings = open?.failedRecordings.filter { now < $0.value } ?? [:]
                if !actions.isEmpty { return actions }
            }
            if now - lastReceived > configuration.idleTimeout {
                return fail(WireError(.idleTimeout, "nothing received for \(now - lastReceived) ms"))
            }
            if now - lastSent >= configuration.keepaliveInterval {
                lastSent = now
                return [.send(Message.ping(nonce: UInt64(now)).encoded())]
            }
            return []
        }
    }

    /// The earliest time `tick` has something to do.
    package var nextDeadline: Int64? {
        switch stage {
        case .closed: return nil
        case .awaitingHello: return startedAt + configuration.handshakeTimeout + 1
        case .open(let session):
            if session.windowUnfilled && session.historyStep == .done { return lastSent }
            // A retry waits for the transfer under way to end, which `offerNext` follows up on.
            var earliest = min(lastReceived + configuration.idleTimeout + 1, lastSent + configuration.keepaliveInterval)
            func consider(_ deadline: Int64?) { if let deadline, deadline < earliest { earliest = deadline } }
            if let outgoing = session.outgoing {
                consider(outgoing.lastProgress + configuration.transfer.stallTimeout + 1)
            } else {
                consider(session.failedRecordings.values.min())
            }
            if session.historyStep == .done { consider(session.holdsDue) }
            consider(session.relaysFrom)
            consider(session.turnDue)
            return earliest
        }
    }

    /// The replica changed (a local write, or a batch from another peer): send what is new.
    package func replicaChanged(now: Int64) -> [SessionAction] {
        guard state == .open else { return [] }
        if open?.receivedSinceCaughtUp == true { open?.reportedSentAll = false }
        var actions: [SessionAction] = []
        pump(now: now, actions: &actions)
        offerNext(now: now, actions: &actions)
        return actions
    }

    /// Asks the peer to resend anything we lack (the fallback timer's nudge).
    package func requestResync(now: Int64) -> [SessionAction] {
        guard state == .open, open?.historyStep == .done, let vector = try? replica.replicaVector() else { return [] }
        lastSent = now
        return [.send(Message.syncRequest(vector: vector).encoded())]
    }

    /// Ends the session with an ERROR the peer can log (shutdown, a duplicate connection).
    package func close(code: ErrorCode, message: String) -> [SessionAction] {
        guard state != .closed else { return [] }
        enterClosed()
        return [.send(Message.error(code: code.rawValue, message: message).encoded()), .close(reason: message)]
    }

    /// The transport closed under us.
    package func transportClosed() {
        enterClosed()
    }

    /// Changes this node holds that the peer is not known to have, in the origins we may send
    /// it, counted up to `limit`.
    package func pendingChangeCount(limit: Int = .max) -> Int {
        guard let peerHas = open?.delta.peerHas else { return 0 }
        return (try? replica.pendingCount(above: peerHas, allowed: mayForward, limit: limit)) ?? 0
    }

    // MARK: - Handling messages

    private func handle(_ message: Message, now: Int64, actions: inout [SessionAction]) throws {
        if state == .awaitingHello {
            if case .error(let code, let text) = message {
                // An ERROR is never answered, not even before the handshake (PROTOCOL.md §7.1).
                enterClosed()
                actions.append(.event(.peerError(code: code, message: text)))
                actions.append(.close(reason: "peer error \(code): \(text)"))
                return
            }
            guard case .hello(let hello) = message else {
                throw WireError(.unexpectedMessage, "expected HELLO first, got \(message.type)")
            }
            try handshake(hello, now: now, actions: &actions)
            return
        }
        try checkHistoryOrder(message)
        switch message {
        case .hello:
            throw WireError(.unexpectedMessage, "a second HELLO")
        case .batch(let batch):
            if configuration.plantedBugs.contains(.ackBeforeCommit) {
                try receiveBatchAckingFirst(batch, now: now, actions: &actions)
            } else {
                try receiveBatches([batch], now: now, actions: &actions)
            }
        case .ack(let ack):
            guard let first = open?.delta.acknowledged(ack.batchID) else { return }  // not the oldest in flight: ignored
            actions.append(.event(.acknowledged(batchID: ack.batchID, changes: first.changes)))
            pump(now: now, actions: &actions)
            offerNext(now: now, actions: &actions)  // a recording's metadata may have just arrived there
        case .caughtUp:
            // The peer's burst is over: tidy the WAL now rather than in the middle of the next.
            replica.checkpoint()
            actions.append(.event(.receivedAll))
            sendWants(actions: &actions)
        case .history(let history): try receiveHistory(history, now: now, actions: &actions)
        case .syncRequest(let vector):
            // The peer's word on what it holds (never on what we wrote); what is in flight is
            // still on its way and is not sent again.
            let own = try ownHistory()
            open?.delta.resync(peerVector: vector, own: own, agreed: open?.agreed ?? [:])
            open?.reportedSentAll = false
            pump(now: now, actions: &actions)
        case .holds(let vector, let direct, let relay):
            open?.delta.peerHolds(vector, own: try ownHistory())
            open?.peerDirect = Set(direct)
            // Bounded as a vector on the wire: a peer naming new origins in every HOLDS adds none past it.
            if let claims = open?.peerClaims.joined(with: vector), claims.entries.count <= Message.Limits.maximumOrigins {
                open?.peerClaims = claims
            }
            // A list we did not say we read (bit 8) is passed over: relays take turns then.
            let asks = capabilities.contains(.relays) ? relay.map(Set.init) : nil
            let askedMore = !(asks ?? []).subtracting(open?.peerAsks ?? []).isEmpty
            open?.peerAsks = asks
            actions.append(.event(.peerHolds))  // the node may choose its own relays again
            if open?.heardHolds == false {
                open?.heardHolds = true
                if open?.holdsWaited == true { open?.relaysFrom = nil }
                if open?.relaysFrom == nil {  // relays may start now
                    open?.relaysStarted = now
                    pump(now: now, actions: &actions, relaysOnly: true)
                }
            } else if askedMore, open?.relaysFrom == nil {
                pump(now: now, actions: &actions, relaysOnly: true)  // what the peer now asks of us goes at once
            }
        case .ping(let nonce):
            lastSent = now
            let answered = configuration.plantedBugs.contains(.pongWrongNonce) ? nonce &+ 1 : nonce
            actions.append(.send(Message.pong(nonce: answered).encoded()))
        case .pong:
            break
        case .error(let code, let text):
            enterClosed()
            actions.append(.event(.peerError(code: code, message: text)))
            actions.append(.close(reason: "peer error \(code): \(text)"))
        case .offer(let offer):
            try receiveOffer(offer, now: now, actions: &actions)
        case .chunk(let chunk):
            try receiveChunk(chunk, now: now, actions: &actions)
        case .accept(let id, let offset):
            try receiveAccept(id: id, offset: offset, now: now, actions: &actions)
        case .confirm(let id, let digest):
            receiveConfirm(id: id, digest: digest, now: now, actions: &actions)
        case .failure(let id, let code, let text):
            receiveFailure(id: id, code: code, text: text, now: now, actions: &actions)
        case .want(let ids):
            try receiveWant(ids, now: now, actions: &actions)
        }
    }

    func fail(_ error: WireError) -> [SessionAction] {
        guard state != .closed else { return [] }
        var error = error
        if configuration.plantedBugs.contains(.unknownTypeAsMalformed), error.code == .unknownType { error.code = .malformed }
        enterClosed()
        return [.event(.protocolError(error)),
                .send(Message.error(code: error.code.rawValue, message: error.message).encoded()),
                .close(reason: error.description)]
    }
}
