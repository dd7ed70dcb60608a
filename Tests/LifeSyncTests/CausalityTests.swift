import LifeSync
import Testing
import TestSupport

private let t0 = ReplicaFixtures.epoch

// MARK: - Causality and deletes

@Suite struct CausalityTests {
    @Test func aCausallyLaterWriteWinsEvenWithAClockFarBehind() throws {
        let clockA = ManualClock(milliseconds: t0 + 86_400_000)  // a day ahead
        let clockB = ManualClock(milliseconds: t0 - 86_400_000)  // a day behind
        let clockC = ManualClock(milliseconds: t0)
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA)
        let b = try ReplicaFixtures.replica(role: .watch, seed: 2, clock: clockB)
        let c = try ReplicaFixtures.replica(role: .mac, seed: 3, clock: clockC)
        let x = try a.add(json: ReplicaFixtures.entryJSON(text: "written on A"))
        try ReplicaFixtures.sync(from: a, to: b)
        let fromB = try b.update(id: x.id, patch: .object([("category", .string("B saw A"))]))
        let stampA = try #require(try a.versionStamp(id: x.id)), stampB = try #require(try b.versionStamp(id: x.id))
        #expect(stampB.hlc > stampA.hlc)
        #expect(stampB.vector.dominates(stampA.vector))

        // Sync everywhere, in an order where A's original reaches C first.
        for (from, to) in [(a, c), (b, c), (c, a), (a, b), (b, a), (c, b)] {
            try ReplicaFixtures.sync(from: from, to: to)
        }
        for replica in [a, b, c] {
            #expect(try replica.entry(id: x.id) == fromB)
            #expect(try replica.conflicts().isEmpty)
        }
        #expect(Set([try a.canonicalHash(), try b.canonicalHash(), try c.canonicalHash()]).count == 1)
    }

    @Test func aCausallyLaterDeleteWinsEvenWithAClockFarBehind() throws {
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: ManualClock(milliseconds: t0 + 3_600_000))
        let b = try ReplicaFixtures.replica(role: .watch, seed: 2, clock: ManualClock(milliseconds: t0 - 3_600_000))
        let x = try a.add(json: ReplicaFixtures.entryJSON(text: "to delete"))
        _ = try a.update(id: x.id, patch: .object([("category", .string("edited"))]))
        try ReplicaFixtures.sync(from: a, to: b)
        try b.delete(id: x.id)
        try ReplicaFixtures.sync(from: b, to: a)
        for replica in [a, b] {
            #expect(throws: ReplicaError.notFound(id: x.id)) { try replica.entry(id: x.id) }
            #expect(try replica.conflicts().isEmpty)
        }
        #expect(try a.canonicalHash() == (try b.canonicalHash()))
    }

    @Test func aRelayedWriteKeepsItsOriginAndCausality() throws {
        // watch → phone → mac: the mac never talks to the watch.
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 1, clock: ManualClock(milliseconds: t0 + 30_000))
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 2, clock: ManualClock(milliseconds: t0))
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 3, clock: ManualClock(milliseconds: t0 - 30_000))
        let x = try watch.add(json: ReplicaFixtures.entryJSON(text: "from the wrist"))
        try ReplicaFixtures.sync(from: watch, to: phone)
        try ReplicaFixtures.sync(from: phone, to: mac)
        #expect(try mac.entry(id: x.id) == x)
        #expect(try mac.versionStamp(id: x.id)?.origin == watch.identity.incarnation)
        #expect(try mac.replicaVector()[watch.identity.incarnation] == 1)
        let edited = try mac.update(id: x.id, patch: .object([("category", .string("mac edit"))]))
        try ReplicaFixtures.sync(from: mac, to: phone)
        try ReplicaFixtures.sync(from: phone, to: watch)
        #expect(try watch.entry(id: x.id) == edited)
        #expect(try watch.versionStamp(id: x.id)?.origin == mac.identity.incarnation)
    }

    @Test func aDeleteIsNotUndoneByOlderUpdatesDeliveredLater() throws {
        let clockA = ManualClock(milliseconds: t0)
        let clockB = ManualClock(milliseconds: t0 + 600_000)  // B's clock is 10 minutes ahead
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA)
        let b = try ReplicaFixtures.replica(role: .mac, seed: 2, clock: clockB)
        let c = try ReplicaFixtures.replica(role: .watch, seed: 3)

        let x = try a.add(json: ReplicaFixtures.entryJSON(text: "v1"))
        let v1 = try a.changes(after: VersionVector())
        clockA.advance(by: 1_000)
        _ = try a.update(id: x.id, patch: .object([("data", .object([("text", .string("v2"))]))]))
        let v2 = try a.changes(after: VersionVector())
        try ReplicaFixtures.sync(from: a, to: b)
        #expect(try b.entry(id: x.id).data.text == "v2")

        clockA.advance(by: -7_200_000)  // A's wall clock steps back two hours before the delete
        try a.delete(id: x.id)
        let tombstone = try a.changes(after: VersionVector())
        #expect(tombstone.count == 1 && tombstone[0].stamp.deleted)
        try ReplicaFixtures.sync(from: a, to: b)

        // The old versions arrive again, late, everywhere — and at C after the tombstone.
        try a.apply(v1 + v2, through: VersionVector())
        try b.apply(v2 + v1, through: VersionVector())
        try c.apply(tombstone, through: VersionVector())
        try c.apply(v1, through: VersionVector())
        try c.apply(v2, through: VersionVector())
        for replica in [a, b, c] {
            #expect(throws: ReplicaError.notFound(id: x.id)) { try replica.entry(id: x.id) }
            #expect(try replica.versionStamp(id: x.id)?.deleted == true)
            #expect(try replica.liveEntryCount() == 0)
            #expect(try replica.conflicts().isEmpty)
        }
        #expect(Set([try a.canonicalHash(), try b.canonicalHash(), try c.canonicalHash()]).count == 1)

        // And a full sync in every direction keeps it deleted.
        for (from, to) in [(c, a), (a, c), (b, c), (c, b), (a, b), (b, a)] { try ReplicaFixtures.sync(from: from, to: to) }
        for replica in [a, b, c] { #expect(try replica.liveEntryCount() == 0) }
    }

    @Test func aDeleteSeenByAReplicaThatThenGetsTheOriginalStaysDeleted() throws {
        // C learns of the entry only through the delete, then receives the original add by a slow path.
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1)
        let b = try ReplicaFixtures.replica(role: .mac, seed: 2)
        let c = try ReplicaFixtures.replica(role: .watch, seed: 3, clock: ManualClock(milliseconds: t0 + 3_600_000))
        let x = try a.add(json: ReplicaFixtures.entryJSON(text: "short-lived"))
        let original = try a.changes(after: VersionVector())
        try ReplicaFixtures.sync(from: a, to: b)
        try b.delete(id: x.id)
        try ReplicaFixtures.sync(from: b, to: c)
        #expect(try c.tombstoneCount() == 1)
        let outcome = try c.apply(original, through: VersionVector())
        #expect(outcome.applied == 0)
        #expect(throws: ReplicaError.notFound(id: x.id)) { try c.entry(id: x.id) }
        // A, which never saw the delete, gets it and drops the entry.
        try ReplicaFixtures.sync(from: c, to: a)
        #expect(throws: ReplicaError.notFound(id: x.id)) { try a.entry(id: x.id) }
        #expect(Set([try a.canonicalHash(), try b.canonicalHash(), try c.canonicalHash()]).count == 1)
    }
}
