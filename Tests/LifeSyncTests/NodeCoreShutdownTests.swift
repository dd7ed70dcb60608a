@testable import LifeSync
import Testing
import TestSupport

extension NodeCoreTests {
    // MARK: Stopping

    /// `shutdown` is for good (`NodeCore.Phase`): every session is closed with its ERROR queued
    /// before the close, and a connection accepted or dialled afterwards is closed at once,
    /// without a session. The simulator never stops a node, so this is where the stopping
    /// invariant (`invariantsHold`, checked after each call in this debug build) is exercised.
    @Test func aStoppingNodeClosesEverySessionAndAdmitsNothingMore() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 7)
        let macKey = SHA256.hash(Array("mac key".utf8)), watchKey = SHA256.hash(Array("watch key".utf8))
        try phone.trust(TrustedPeer(nodeID: NodeCoreDiscoveryTests.macID, role: .mac, fingerprint: macKey, trustedAt: phone.now))
        try phone.trust(TrustedPeer(nodeID: "watch_0f8fad5b-d9cb-469f-a165-70867728950e", role: .watch, fingerprint: watchKey, trustedAt: phone.now))
        let core = NodeCore(replica: phone, configuration: NodeConfiguration(peers: ["10.0.0.2:7002"]), random: SeededRandom(seed: 1), now: 0)
        #expect(core.start(now: 0).contains(.connect(peer: 0, address: "10.0.0.2:7002")))
        _ = core.connected(connection: 1, peer: 0, peerKey: macKey, now: 5)
        _ = core.accepted(connection: 2, remote: "10.0.0.3:7002", peerKey: watchKey, now: 6)

        let actions = core.shutdown(now: 10)
        #expect(core.phase == .stopping)
        #expect(core.connections.values.allSatisfy { $0.session.state == .closed })
        for id in [1, 2] {
            let sent = try #require(actions.firstIndex { if case .send(id, _) = $0 { true } else { false } }, "no ERROR on \(id)")
            let closed = try #require(actions.firstIndex(of: .close(connection: id)), "\(id) not closed")
            #expect(sent < closed, "the ERROR on \(id) is queued before its close")
        }

        #expect(core.accepted(connection: 3, remote: "10.0.0.4:7002", peerKey: SHA256.hash(Array("late".utf8)), now: 11) == [.close(connection: 3)])
        #expect(core.connected(connection: 4, peer: 0, peerKey: macKey, now: 11) == [.close(connection: 4)])
        #expect(core.connections[3] == nil && core.connections[4] == nil)
        _ = core.closed(connection: 1, now: 12)
        _ = core.closed(connection: 2, now: 12)
        let later = core.tick(now: 600_000)
        #expect(!later.contains { if case .connect = $0 { true } else { false } }, "a stopping node dials nobody: \(later)")
        #expect(core.connections.isEmpty)
    }

    /// A fallback timer armed before `shutdown` (a write pending for a peer out of reach) does
    /// not fire while the node drains: it would dial every peer the node is leaving.
    @Test func aFallbackArmedBeforeStoppingDialsNobody() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 8)
        let core = NodeCore(replica: phone, configuration: NodeConfiguration(peers: ["10.0.0.2:7002"]), random: SeededRandom(seed: 1), now: 0)
        _ = core.start(now: 0)
        _ = core.connectFailed(peer: 0, reason: "unreachable", now: 1)
        try phone.add(json: ReplicaFixtures.entryJSON(text: "pending"))
        _ = core.localWrite(now: 2)
        _ = core.tick(now: 3)
        let due = try #require(core.fallbackAt, "a write pending for an unreachable peer arms the fallback timer")
        _ = core.shutdown(now: 4)
        #expect(core.fallbackAt == nil && (core.nextDeadline ?? .max) > 4, "no deadline is left in the past")
        for now in [due, due + 1, due + 600_000] {
            let actions = core.tick(now: now)
            #expect(!actions.contains { if case .connect = $0 { true } else { false } }, "a stopping node dials nobody: \(actions)")
            #expect(!actions.contains(.event(.fallbackTimerFired)))
        }
    }
}
