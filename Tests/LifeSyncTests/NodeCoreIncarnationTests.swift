import Foundation
import LifeSync
import Testing
import TestSupport

extension NodeCoreTests {
    // MARK: Incarnations

    @Test func aReplicaRecreatedWithANewIncarnationIsANewHistory() throws {
        let net = VirtualNet()
        let phoneOld = try net.memoryReplica(.phone, seed: 121)
        let mac = try net.memoryReplica(.mac, seed: 122)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phoneOld, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        let old = try net.write("phone", count: 3, label: "old life")
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        net.run(for: 1_000)
        let oldIncarnation = phoneOld.identity.incarnation
        let nodeID = phoneOld.identity.nodeID
        #expect(try mac.replicaVector()[oldIncarnation] == 3)

        // The phone is wiped and set up again: same node ID, a new incarnation, numbering from 1.
        net.crash("phone")
        let fresh = try net.memoryReplica(.phone, seed: 999)
        try fresh.database.run("UPDATE meta SET value = ? WHERE key = 'node_id'", [.text(nodeID)])
        // Its incarnation names its node (PROTOCOL.md §2.3.1), as `init` would have made it.
        let bound = Identifier.incarnation(boundTo: nodeID, random: SeededRandom(seed: 999))
        try fresh.database.run("UPDATE replica_vector SET node_id = ?, origin = ? WHERE origin = ?", [.text(nodeID), .text(bound), .text(fresh.identity.incarnation)])
        try fresh.database.run("UPDATE meta SET value = ? WHERE key = 'incarnation'", [.text(bound)])
        try fresh.reloadIdentity()
        #expect(fresh.identity.nodeID == nodeID)
        #expect(fresh.identity.incarnation != oldIncarnation)
        var new: [String] = []
        for i in 0..<3 { new.append(try fresh.add(json: ReplicaFixtures.entryJSON(text: "new life \(i)")).id) }
        #expect(try fresh.replicaVector()[fresh.identity.incarnation] == 3, "the new history reuses the numbers 1, 2, 3")

        let restarted = net.now
        net.start("phone", replica: fresh)
        #expect(net.run(upTo: 10_000) { count(mac) == 6 && count(fresh) == 6 })
        net.run(for: 1_000)
        let sent = net.batches(from: "phone", to: "mac", since: restarted).flatMap(\.batch.changes)
        #expect(sent.map(\.stamp.sequence).sorted() == [1, 2, 3])
        let outcomes = net.sessionEvents("mac", since: restarted).compactMap { event -> ApplyOutcome? in
            if case .applied(_, let changes, let outcome) = event, changes > 0 { return outcome }
            return nil
        }
        #expect(outcomes.map(\.applied).reduce(0, +) == 3, "the mac applied the three new writes, not 'unchanged'")
        for id in old + new { #expect((try? mac.entry(id: id)) != nil, "mac lacks \(id)") }
        let vector = try mac.replicaVector()
        #expect(vector[oldIncarnation] == 3)
        #expect(vector[fresh.identity.incarnation] == 3)
        #expect(!net.sessionEvents("phone", since: restarted).contains { if case .incarnationRotated = $0 { return true }; return false })
        #expect(net.converged(["phone", "mac"]))
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func aReplicaRestoredFromAnOlderCopyRotatesItsIncarnation() throws {
        let directory = TemporaryDirectory("lifesync-nodecore-rollback")
        let net = VirtualNet()
        let path = directory.file("phone.sqlite"), backup = directory.file("phone-backup.sqlite")
        var phone: Replica? = try ReplicaFixtures.replica(role: .phone, seed: 131, clock: net.clock, path: path)
        let mac = try net.memoryReplica(.mac, seed: 132)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone!, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        let first = try net.write("phone", count: 3, label: "before backup")
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        let incarnation = phone!.identity.incarnation

        // Copy the file (everything checkpointed into it), then write more that the mac receives.
        try phone!.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        let lost = try net.write("phone", count: 2, label: "after backup")
        #expect(net.run(upTo: 5_000) { count(mac) == 5 })
        #expect(try mac.replicaVector()[incarnation] == 5)

        // The phone dies; its file is put back from the copy.
        net.crash("phone")
        net.run(for: 1_000)
        net.replace("phone", replica: try net.memoryReplica(.phone, seed: 1))  // let go of the old connection
        phone = nil
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: backup, toPath: path)
        let restored = try Replica(path: path, clock: net.clock, random: SeededRandom(seed: 1313))
        #expect(restored.identity.incarnation == incarnation)
        #expect(try restored.replicaVector()[incarnation] == 3)
        #expect(count(restored) == 3)

        let restart = net.now
        net.start("phone", replica: restored)
        #expect(net.run(upTo: 5_000) { net.sessionEvents("phone", since: restart).contains { if case .handshake = $0 { return true }; return false } })
        let rotations = net.sessionEvents("phone", since: restart).compactMap { event -> (String, String)? in
            if case .incarnationRotated(let old, let new) = event { return (old, new) }
            return nil
        }
        #expect(rotations.count == 1, "expected one .incarnationRotated, got \(rotations)")
        let newIncarnation = restored.identity.incarnation
        #expect(newIncarnation != incarnation)
        #expect(rotations.first?.0 == incarnation && rotations.first?.1 == newIncarnation)
        #expect(net.nodeEvents.contains { if $0.node == "phone", case .incarnationRotated = $0.event { return true }; return false })
        // Its own old writes come back from the mac.
        #expect(net.run(upTo: 5_000) { count(restored) == 5 })
        for id in first + lost { #expect((try? restored.entry(id: id)) != nil) }
        // The mac claims more of the old incarnation than the phone holds, which alone proves
        // nothing (the phone would send it all again); the HISTORY's digests show it holds the
        // phone's writes up to the backup's 3, so none of those goes again.
        let resent = net.sentChanges(from: "phone", to: "mac", since: restart).filter { key in first.contains { key.hasPrefix($0 + "@") } }
        #expect(resent.isEmpty, "the restored phone sent the mac again what it held: \(resent)")

        // New writes go under the new incarnation, numbered from 1, and reach the mac.
        let later = try net.write("phone", count: 2, label: "after restore")
        #expect(net.run(upTo: 5_000) { count(mac) == 7 })
        for id in later {
            let stamp = try #require(try mac.versionStamp(id: id))
            #expect(stamp.origin == newIncarnation)
        }
        #expect(try mac.replicaVector()[newIncarnation] == 2)
        #expect(try mac.replicaVector()[incarnation] == 5, "the old history is untouched")
        for id in first + lost { #expect(try mac.entry(id: id).data.text?.contains("backup") == true) }
        net.run(for: 1_000)
        #expect(net.converged(["phone", "mac"]))
        // A second reconnection does not rotate again.
        let again = net.now
        net.cutLinks(of: "mac")
        #expect(net.run(upTo: 5_000) { net.sessionEvents("phone", since: again).contains { if case .handshake = $0 { return true }; return false } })
        #expect(!net.sessionEvents("phone", since: again).contains { if case .incarnationRotated = $0 { return true }; return false })
        #expect(restored.identity.incarnation == newIncarnation)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }
}
