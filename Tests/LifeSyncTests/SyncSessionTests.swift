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

    @Test func garbageBeforeTheHandshakeClosesWithAnError() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 7)
        let session = SyncSession(replica: phone, configuration: .init(), now: 0)
        _ = session.start(now: 0)
        let actions = session.receive(Array("GET / HTTP/1.1\r\n\r\n".utf8), now: 1)
        #expect(actions.contains { if case .close = $0 { return true }; return false })
        #expect(session.state == .closed)
    }
}
