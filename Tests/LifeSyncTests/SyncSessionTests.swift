import LifeSync
import Testing
import TestSupport

@Suite struct SyncSessionTests {
    @Test func twoFullReplicasExchangeEverything() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 1)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 2)
        for i in 0..<2500 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<10 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        let link = SessionPair(phone, mac)
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty)
        #expect(try phone.liveEntryCount() == 2510)
        #expect(try mac.liveEntryCount() == 2510)
        #expect(try phone.canonicalHash() == mac.canonicalHash())
        #expect(link.a.changesSent == 2500)
        #expect(link.b.changesSent == 10)
    }

    @Test func aWatchSendsItsOwnEntriesAndReceivesNone() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 3)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 4)
        try watch.add(json: ReplicaFixtures.entryJSON(text: "mood from the wrist"))
        try phone.add(json: ReplicaFixtures.entryJSON(text: "phone note"))
        let link = SessionPair(watch, phone)
        link.start()
        #expect(link.run())
        #expect(try phone.liveEntryCount() == 2)
        #expect(try watch.liveEntryCount() == 1)
    }

    @Test func newWritesFlowOnAnOpenSession() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 5)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 6)
        let link = SessionPair(phone, mac)
        link.start()
        #expect(link.run())
        try phone.add(json: ReplicaFixtures.entryJSON(text: "later"))
        link.replicaChanged()
        #expect(try mac.liveEntryCount() == 1)
    }

    @Test func garbageBeforeTheHandshakeClosesWithAnError() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 7)
        let session = SyncSession(replica: phone, configuration: .init(), now: 0)
        _ = session.start(now: 0)
        let actions = session.receive(Array("GET / HTTP/1.1\r\n\r\n".utf8), now: 1)
        #expect(actions.contains { if case .close = $0 { return true }; return false })
        #expect(session.state == .closed)
    }

    /// Frames that arrive in one read reach the session together: its batches are committed in
    /// one transaction, and each is still acknowledged, in order.
    @Test func batchesArrivingTogetherAreEachAcknowledgedInOrder() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 8)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 9)
        for i in 0..<2500 { try phone.add(json: ReplicaFixtures.entryJSON(text: "note \(i)")) }
        var configuration = SessionConfiguration()
        configuration.batchMaximumChanges = 1000
        let sender = SyncSession(replica: phone, configuration: configuration, now: 0)
        let receiver = SyncSession(replica: mac, configuration: configuration, now: 0)
        let senderHello = Self.sent(sender.start(now: 0)), receiverHello = Self.sent(receiver.start(now: 0))
        let toSender = Self.sent(receiver.receive(senderHello, now: 1))
        var stream = try Self.afterHistories(sender, receiver, toSender: toSender, toReceiver: Self.sent(sender.receive(receiverHello, now: 1)))
        // The end of the handshake (its HISTORY exchange) sends the first batch; each tick, due at once, one more.
        #expect(try Self.batchIDs(stream) == [1])
        for _ in 0..<5 where (sender.nextDeadline ?? .max) <= 1 { stream += Self.sent(sender.tick(now: 1)) }
        #expect(try Self.batchIDs(stream) == [1, 2, 3])

        let replies = receiver.receive(stream, now: 2)
        let acks = try Self.messages(Self.sent(replies)).compactMap { message -> UInt64? in
            if case .ack(let ack) = message { return ack.batchID }
            return nil
        }
        #expect(acks == [1, 2, 3])
        #expect(receiver.state == .open)
        #expect(try mac.liveEntryCount() == 2500)
        #expect(try mac.canonicalHash() == phone.canonicalHash())
    }

    /// A batch this node must refuse, behind one it accepts in the same read: the first is
    /// committed and acknowledged, then the session ends with an ERROR.
    @Test func aRefusedBatchBehindAnAcceptedOneEndsTheSessionAfterIt() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 10)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 11)
        let entry = try phone.add(json: ReplicaFixtures.entryJSON(text: "not for the wrist"))
        let origin = phone.identity.incarnation
        let session = SyncSession(replica: watch, configuration: .init(), now: 0)
        _ = session.start(now: 0)
        let hello = Hello(nodeID: phone.identity.nodeID, role: .phone, incarnation: origin, capabilities: [.seals, .receivesEntries],
                          clock: phone.currentClock, vector: try phone.replicaVector())
        _ = session.receive(Message.hello(hello).encoded(), now: 1)
        let change = try #require(try phone.changes(after: VersionVector()).first { $0.id == entry.id })
        let empty = Message.encodedBatch(id: 1, origins: [], changes: [], through: VersionVector())
        let refused = Message.encodedBatch(id: 2, origins: [], changes: [change.encoded], through: VersionVector([(origin, 1)]))
        let replies = try Self.messages(Self.sent(session.receive(empty + refused, now: 2)))
        #expect(replies.count == 2)
        if case .ack(let ack) = replies.first { #expect(ack.batchID == 1) } else { Issue.record("expected an ACK first, got \(replies)") }
        if case .error = replies.last {} else { Issue.record("expected an ERROR last, got \(replies)") }
        #expect(session.state == .closed)
        #expect(try watch.liveEntryCount() == 0)
    }

    static func sent(_ actions: [SessionAction]) -> [UInt8] {
        actions.flatMap { action -> [UInt8] in
            if case .send(let bytes) = action { return bytes }
            return []
        }
    }

    /// Delivers the HISTORY exchange (PROTOCOL.md §7.2.3) between two sessions whose HELLOs were
    /// just delivered (`toSender`, `toReceiver`: what each then sent the other); returns what the
    /// sender sent from the end of the exchange on, the receiver's answers delivered meanwhile.
    static func afterHistories(_ sender: SyncSession, _ receiver: SyncSession, toSender: [UInt8], toReceiver: [UInt8]) throws -> [UInt8] {
        var toSender = toSender, toReceiver = toReceiver, after: [UInt8] = []
        for _ in 0..<4 {
            let forSender = toSender
            toSender = []
            for message in try messages(sent(sender.receive(forSender, now: 1))) {
                if case .history = message { toReceiver += message.encoded() } else { after += message.encoded() }
            }
            let forReceiver = toReceiver
            toReceiver = []
            toSender += sent(receiver.receive(forReceiver, now: 1))
        }
        return after
    }

    static func batchIDs(_ stream: [UInt8]) throws -> [UInt64] {
        try messages(stream).compactMap { message -> UInt64? in
            if case .batch(let batch) = message { return batch.id }
            return nil
        }
    }

    static func messages(_ stream: [UInt8]) throws -> [Message] {
        var decoder = FrameDecoder()
        return try decoder.feed(stream).map { try Message.decode(type: $0.type, payload: $0.payload) }
    }
}
