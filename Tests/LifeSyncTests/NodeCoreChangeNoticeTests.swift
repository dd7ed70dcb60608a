import Foundation
import LifeSync
import Testing
import TestSupport

extension NodeCoreTests {
    // MARK: The one "the replica changed" notice

    /// `NodeAction.replicaChanged`, what wakes the HTTP API's event streams, comes once per local
    /// write and once per batch with changes a peer delivered (relayed ones included), never
    /// while nothing changes: keepalives, empty batches and acknowledgements say nothing.
    @Test func theReplicaChangedNoticeComesOncePerChangeAndNeverWhenIdle() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 51)
        let mac = try net.memoryReplica(.mac, seed: 52)
        let watch = try net.memoryReplica(.watch, seed: 53)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.add("watch", replica: watch, peers: ["phone"], seed: 3)
        for name in ["mac", "phone", "watch"] { net.start(name) }
        net.run(for: 3_000)
        func notices(_ node: String, since: Int64) -> Int { net.replicaChangedNotices.filter { $0.node == node && $0.time >= since }.count }

        let idle = net.now
        net.run(for: 40_000)  // keepalives, fallback checks
        #expect(["mac", "phone", "watch"].allSatisfy { notices($0, since: idle) == 0 }, "\(net.replicaChangedNotices)")

        let written = net.now
        try net.write("watch", count: 3)
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        net.run(for: 2_000)
        #expect(notices("watch", since: written) == 1, "the local write")
        #expect(notices("phone", since: written) == 1, "the batch from the watch")
        #expect(notices("mac", since: written) == 1, "the batch the phone relayed")
        #expect(net.violations.isEmpty, "\(net.violations)")
    }
}
