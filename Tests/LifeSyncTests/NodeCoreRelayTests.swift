import LifeSync
import Testing
import TestSupport

/// The relay hold and HOLDS (PROTOCOL.md §5.11, §7.4): in a household where every device is
/// paired with every other, each node gets each write once, from its origin; a node reached only
/// through a relay still gets every write.
extension NodeCoreTests {
    /// Four nodes, all paired, each dialling those after it, each with writes made offline:
    /// every change reaches every node once. With the hold off (as before it), the same
    /// household receives writes twice: the test can fail.
    @Test func aFullyPairedHouseholdGetsEachWriteOnce() throws {
        let held = try Self.mesh(relayHold: 1_000)
        #expect(held.converged, "the household did not converge")
        #expect(held.duplicates.isEmpty, "changes received twice: \(held.duplicates.prefix(5))")
        let unheld = try Self.mesh(relayHold: 0)
        #expect(unheld.converged)
        #expect(!unheld.duplicates.isEmpty, "without the hold, relays should have doubled some writes")
    }

    /// A watch paired with the phone only: its writes reach the mac through the phone, once the
    /// hold is over, and the mac's reach the phone without waiting.
    @Test func aNodeReachedOnlyThroughARelayGetsEveryWrite() throws {
        let net = VirtualNet()
        net.add("mac", replica: try net.memoryReplica(.mac, seed: 61), seed: 1)
        net.add("phone", replica: try net.memoryReplica(.phone, seed: 62), peers: ["mac"], seed: 2)
        net.add("watch", replica: try net.memoryReplica(.watch, seed: 63), peers: ["phone"], seed: 3)
        for name in ["mac", "phone", "watch"] { net.start(name) }
        net.run(for: 3_000)
        let t0 = net.now
        try net.write("watch", count: 3, label: "from the wrist")
        #expect(net.run(upTo: t0 + 10_000) { count(net.nodes["mac"]!.replica) == 3 }, "the watch's writes never reached the mac")
        let arrived = net.batches(from: "phone", to: "mac", since: t0).first?.time ?? .max
        let atPhone = net.batches(from: "watch", to: "phone", since: t0).first?.time ?? .max
        #expect(arrived - atPhone >= 1_000, "relayed \(arrived - atPhone) ms after the phone got them: the hold is 1 s")
    }

    /// Each receiver's changes from every peer, and those it got more than once.
    static func mesh(relayHold: Int64) throws -> (converged: Bool, duplicates: [String]) {
        let net = VirtualNet()
        let names = ["phone", "mac1", "mac2", "mac3"]
        for (i, name) in names.enumerated() {
            let replica = try net.memoryReplica(i == 0 ? .phone : .mac, seed: 70 + UInt64(i))
            net.add(name, replica: replica, peers: Array(names[(i + 1)...]), seed: UInt64(i + 1)) { $0.session.relayHold = relayHold }
        }
        for name in names { _ = try net.write(name, count: 40, label: "offline on \(name)") }
        for name in names.reversed() { net.start(name) }
        let converged = net.run(upTo: net.now + 60_000) { names.allSatisfy { count(net.nodes[$0]!.replica) == 160 } }
        net.run(for: 5_000)
        var duplicates: [String] = []
        for receiver in names {
            var seen = Set<String>()
            for sender in names where sender != receiver {
                for key in net.sentChanges(from: sender, to: receiver) where !seen.insert(key).inserted { duplicates.append("\(receiver): \(key)") }
            }
        }
        return (converged, duplicates)
    }
}

@Suite struct RelayHoldTests {
    @Test func aNotedVectorIsReleasedAfterTheHoldAndSettlesLater() {
        let hold = RelayHold(hold: 1_000, holding: VersionVector([("a", 3)]))
        #expect(hold.cap == nil && hold.settledCap == nil, "nothing noted: nothing held")
        hold.noted(VersionVector([("a", 5), ("b", 2)]), now: 100)
        #expect(hold.cap == VersionVector([("a", 3)]))
        #expect(hold.nextRelease == 1_100)
        #expect(!hold.release(now: 1_099))
        #expect(hold.release(now: 1_100))
        #expect(hold.cap == nil, "released: nothing held from other peers")
        #expect(hold.settledCap == VersionVector([("a", 3)]), "a direct node's writes wait to settle")
        #expect(hold.nextRelease == 100 + hold.settle)
        #expect(hold.release(now: 100 + hold.settle))
        #expect(hold.settledCap == nil && hold.nextRelease == nil)
    }

    @Test func aBusyNodeKeepsItsNewestVectorsAndReleasesNoneEarly() {
        let hold = RelayHold(hold: 1_000)
        for t in Int64(0)..<200 { hold.noted(VersionVector([("a", UInt64(t + 1))]), now: t) }
        #expect(hold.cap == VersionVector())
        _ = hold.release(now: 1_150)
        // Vectors noted before 136 were dropped (64 kept): their writes wait for a later one.
        #expect(hold.cap == VersionVector([("a", 151)]), "\(String(describing: hold.cap))")
        #expect(!hold.release(now: 1_150))
    }

    @Test func noHoldHoldsNothing() {
        let hold = RelayHold(hold: 0)
        hold.noted(VersionVector([("a", 1)]), now: 0)
        #expect(hold.cap == nil && hold.settledCap == nil && hold.nextRelease == nil)
    }
}
