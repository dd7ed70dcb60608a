import LifeSync
import Testing
import TestSupport

@Suite struct SyncSessionTests {
    @Test func twoFullReplicasExchangeEverything() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 1)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 2)
        for i in 0..<2500 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<10 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        let link = SessionLink(phone, mac)
        link.run()
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
        let link = SessionLink(watch, phone)
        link.run()
        #expect(try phone.liveEntryCount() == 2)
        #expect(try watch.liveEntryCount() == 1)
    }

    @Test func newWritesFlowOnAnOpenSession() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 5)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 6)
        let link = SessionLink(phone, mac)
        link.run()
        try phone.add(json: ReplicaFixtures.entryJSON(text: "later"))
        link.replicaChanged()
        #expect(try mac.liveEntryCount() == 1)
    }

    /// A sender writes each batch as soon as it is read: one per call, the next on a tick that
    /// is due at once, until the window is full; acknowledgements then keep it full.
    @Test func batchesLeaveOneAtATimeUntilTheWindowIsFull() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 8)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 9)
        for i in 0..<60 { try phone.add(json: ReplicaFixtures.entryJSON(text: "note \(i)")) }
        var configuration = SessionConfiguration()
        configuration.batchMaximumChanges = 10
        let sender = SyncSession(replica: phone, configuration: configuration, now: 0)
        let receiver = SyncSession(replica: mac, configuration: configuration, now: 0)
        func frames(_ actions: [SessionAction]) -> [[UInt8]] {
            actions.compactMap { if case .send(let bytes) = $0 { return bytes }; return nil }
        }
        func batches(_ frames: [[UInt8]]) -> Int { frames.filter { $0[4] == MessageType.batch.rawValue }.count }
        let senderHello = frames(sender.start(now: 0))
        let receiverHello = frames(receiver.start(now: 0))
        for bytes in senderHello { _ = receiver.receive(bytes, now: 0) }
        var sent = frames(receiverHello.flatMap { sender.receive($0, now: 0) })
        #expect(batches(sent) == 1)
        for expected in 2...configuration.window {
            let due = try #require(sender.nextDeadline)
            #expect(due <= 0, "the next batch waits for a timer")
            let more = frames(sender.tick(now: 0))
            #expect(batches(more) == 1)
            sent += more
            #expect(batches(sent) == expected)
        }
        #expect((sender.nextDeadline ?? 0) > 0, "a full window still asks for an immediate tick")
        #expect(batches(frames(sender.tick(now: 0))) == 0)
        // Each acknowledgement frees a slot for the next batch, until all 60 are across.
        var pending = sent
        var rounds = 0
        while !pending.isEmpty && rounds < 100 {
            rounds += 1
            let replies = frames(pending.flatMap { receiver.receive($0, now: 0) })
            pending = frames(replies.flatMap { sender.receive($0, now: 0) })
            if let due = sender.nextDeadline, due <= 0 { pending += frames(sender.tick(now: 0)) }
        }
        #expect(try mac.liveEntryCount() == 60)
        #expect(sender.changesSent == 60)
    }

    @Test func garbageBeforeTheHandshakeClosesWithAnError() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 7)
        let session = SyncSession(replica: phone, configuration: .init(), now: 0)
        _ = session.start(now: 0)
        let actions = session.receive(Array("GET / HTTP/1.1\r\n\r\n".utf8), now: 1)
        #expect(actions.contains { if case .close = $0 { return true }; return false })
        #expect(session.state == .closed)
    }
}
