import Testing
@testable import LifeSync
import TestSupport

/// The per-field merge between real replicas: concurrent edits of different fields both
/// survive everywhere; the same field resolves by stamp and keeps only that field as the backup.
@Suite struct FieldMergeReplicaTests {
    static let t0: Int64 = 1_790_000_000_000

    struct Pair {
        let a: Replica, b: Replica
        let clockA = ManualClock(milliseconds: FieldMergeReplicaTests.t0), clockB = ManualClock(milliseconds: FieldMergeReplicaTests.t0)
        let id: String

        init() throws {
            a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA)
            b = try ReplicaFixtures.replica(role: .mac, seed: 2, clock: clockB)
            id = try a.add(json: .object([("category", .string("note")), ("data", .object([
                ("text", .string("buy milk")), ("tags", .array([.string("home")]))]))])).id
            try ReplicaFixtures.sync(from: a, to: b)
            clockA.advance(by: 1_000)
            clockB.advance(by: 2_000)
        }

        func exchange() throws {
            for _ in 0..<2 {
                try ReplicaFixtures.sync(from: a, to: b)
                try ReplicaFixtures.sync(from: b, to: a)
            }
        }
    }

    @Test func concurrentEditsOfDifferentFieldsBothSurvive() throws {
        let p = try Pair()
        try p.a.update(id: p.id, patch: .object([("data", .object([("text", .string("buy oat milk"))]))]))
        try p.b.update(id: p.id, patch: .object([("data", .object([("tags", .array([.string("home"), .string("errand")]))]))]))
        try p.exchange()
        for replica in [p.a, p.b] {
            let entry = try replica.entry(id: p.id)
            #expect(entry.data.text == "buy oat milk")
            #expect(entry.data.tags == ["home", "errand"])
            #expect(try replica.conflicts().isEmpty, "different fields do not conflict")
        }
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
    }

    @Test func aDeleteConcurrentWithAnEditKeepsTheEditAsAConflict() throws {
        let p = try Pair()
        try p.a.delete(id: p.id)
        try p.b.update(id: p.id, patch: .object([("data", .object([("text", .string("buy oat milk"))]))]))
        try p.exchange()
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
        // B's clock is later: its edit wins over the delete, everywhere.
        for replica in [p.a, p.b] {
            #expect(try replica.entry(id: p.id).data.text == "buy oat milk")
            let conflicts = try replica.conflicts()
            #expect(conflicts.count == 1 && conflicts.first?.loser.deleted == true)
        }
    }

    @Test func aLaterDeleteBeatsAConcurrentEditAndKeepsItAsAConflict() throws {
        let p = try Pair()
        p.clockA.advance(by: 5_000)
        try p.a.delete(id: p.id)
        try p.b.update(id: p.id, patch: .object([("data", .object([("text", .string("buy oat milk"))]))]))
        try p.exchange()
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
        for replica in [p.a, p.b] { #expect(throws: ReplicaError.self) { try replica.entry(id: p.id) } }
        // The edit lost, and travels as a conflict: both replicas list it.
        for replica in [p.a, p.b] {
            let conflicts = try replica.conflicts()
            #expect(conflicts.count == 1 && conflicts.first?.loserEntry?.data.text == "buy oat milk")
        }
    }

    static func textPatch(_ text: String) -> JSONValue { .object([("data", .object([("text", .string(text))]))]) }
    static let errandTags: JSONValue = .object([("data", .object([("tags", .array([.string("home"), .string("errand")]))]))])

    @Test func concurrentEditsOfTheSameFieldConflictOnThatFieldOnly() throws {
        let p = try Pair()
        try p.a.update(id: p.id, patch: Self.textPatch("buy oat milk"))
        // B (the later clock) edits the same text and, in the same write, the tags.
        try p.b.update(id: p.id, patch: .object([("data", .object([
            ("text", .string("buy soy milk")), ("tags", .array([.string("home"), .string("errand")]))]))]))
        try p.exchange()
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
        for replica in [p.a, p.b] {
            #expect(try replica.entry(id: p.id).data.text == "buy soy milk", "the later stamp wins the text")
            let conflicts = try replica.conflicts()
            #expect(conflicts.count == 1, "recorded where each side merged the other's write")
            let conflict = try #require(conflicts.first)
            #expect(conflict.lostFields == FieldMask([.text]))
            #expect(conflict.fields == [FieldDifference(field: "data.text", winner: .string("buy soy milk"), loser: .string("buy oat milk"))])
        }
        // Keeping the loser brings back its text alone: B's tags, edited concurrently, stay.
        try p.a.resolveConflict(entryID: p.id, keep: .loser)
        let resolved = try p.a.entry(id: p.id)
        #expect(resolved.data.text == "buy oat milk")
        #expect(resolved.data.tags == ["home", "errand"])
        try p.exchange()
        #expect(try p.b.entry(id: p.id) == resolved)
        #expect(try p.a.conflicts().isEmpty && p.b.conflicts().isEmpty)
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
    }

    /// A loser that lost two fields to two writes keeps a record of both; a later edit of one
    /// of them, made after seeing every side, settles that field alone. The loser wins no field
    /// and is dropped from the entry's writes, so its record is all that is left of its other
    /// value: it must stay, for that field, until an edit of that field settles it too. (The
    /// simulator found this: `simulate --seed 2160` lost a text this way.)
    @Test func settlingOneLostFieldKeepsTheRecordOfTheOther() throws {
        let p = try Pair()
        // B edits text and tags; A, later by the clock and not having seen it, edits the tags,
        // then the text: B's write loses both fields, to two writes.
        try p.b.update(id: p.id, patch: .object([("data", .object([
            ("text", .string("buy soy milk")), ("tags", .array([.string("shop")]))]))]))
        p.clockA.advance(by: 5_000)
        try p.a.update(id: p.id, patch: Self.errandTags)
        try p.a.update(id: p.id, patch: Self.textPatch("buy oat milk"))
        try p.exchange()
        // Recorded on both: the loser is held as one of the entry's writes, so it travels.
        for replica in [p.a, p.b] { #expect(try replica.conflicts().first?.lostFields == FieldMask([.text, .tags])) }
        #expect(try p.a.entryWrites(id: p.id).contains { $0.stamp.origin == p.b.identity.incarnation }, "the loser is one of the entry's writes")
        // B, having seen everything, edits the tags: that settles the lost tags, not the text.
        p.clockB.advance(by: 10_000)
        try p.b.update(id: p.id, patch: .object([("data", .object([("tags", .array([.string("done")]))]))]))
        try p.exchange()
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
        let left = try p.b.conflicts()
        #expect(left.count == 1, "the lost text has no other home")
        #expect(left.first?.lostFields == FieldMask([.text]))
        #expect(left.first?.loserEntry?.data.text == "buy soy milk")
        // An edit of the text, made after seeing both sides, settles what is left, wherever it arrives.
        try p.a.update(id: p.id, patch: Self.textPatch("buy any milk"))
        try p.exchange()
        #expect(try p.b.conflicts().isEmpty)
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
    }

    /// A write that lost one field and then falls below a delete it had not seen has lost
    /// everything: its record becomes whole, with its own entry, rather than staying the record
    /// of the one field (`simulate --seed 2358` lost a text that way).
    @Test func aPartialLoserThatFallsBelowADeleteIsKeptWhole() throws {
        let p = try Pair()
        let clockC = ManualClock(milliseconds: Self.t0 + 1_500)
        let c = try ReplicaFixtures.replica(role: .mac, seed: 3, clock: clockC)
        try ReplicaFixtures.sync(from: p.a, to: c)
        // A edits text and tags; B, its clock far ahead, the tags; C deletes, after A by the clock.
        // None has seen another.
        try p.a.update(id: p.id, patch: .object([("data", .object([
            ("text", .string("buy soy milk")), ("tags", .array([.string("shop")]))]))]))
        p.clockB.advance(by: 100_000)
        try p.b.update(id: p.id, patch: Self.errandTags)
        clockC.advance(by: 1_000)
        try c.delete(id: p.id)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        #expect(try p.a.conflicts().first?.lostFields == FieldMask([.tags]), "A's write lost its tags to B's")
        try ReplicaFixtures.sync(from: c, to: p.a)
        // B's edit stands above the delete; A's write, below it, counts no more: it lost its text too.
        #expect(try p.a.entry(id: p.id).data.tags == ["home", "errand"])
        let mine = try p.a.conflicts().filter { $0.loser.origin == p.a.identity.incarnation }
        #expect(mine.count == 1)
        #expect(mine.first?.lostFields == nil, "kept whole")
        #expect(mine.first?.loserEntry?.data.text == "buy soy milk")
        #expect(mine.first?.loserEntry?.data.tags == ["shop"])
    }

    /// A loser beaten on two fields by two writes: the one that arrives second wins the text,
    /// while the tags' winner (the greater write) came first. Its loss is recorded all the same
    /// (`simulate --seed 105885` lost the text: the merge named only the greater winner).
    @Test func aLossToTheSecondOfTwoWinnersIsRecorded() throws {
        let p = try Pair()
        let clockC = ManualClock(milliseconds: Self.t0 + 3_000)
        let c = try ReplicaFixtures.replica(role: .mac, seed: 3, clock: clockC)
        try ReplicaFixtures.sync(from: p.a, to: c)
        try p.b.update(id: p.id, patch: .object([("data", .object([("text", .string("buy soy milk")), ("tags", .array([.string("shop")]))]))]))
        try c.update(id: p.id, patch: .object([("data", .object([("text", .string("buy rice milk")), ("tags", .array([.string("x")]))]))]))
        p.clockA.advance(by: 10_000)
        try p.a.update(id: p.id, patch: Self.errandTags)
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        #expect(try p.b.conflicts().first { $0.loser.origin == p.b.identity.incarnation }?.lostFields == FieldMask([.tags]))
        try ReplicaFixtures.sync(from: c, to: p.b)
        #expect(try p.b.entry(id: p.id).data.text == "buy rice milk")
        let mine = try p.b.conflicts().first { $0.loser.origin == p.b.identity.incarnation }
        #expect(mine?.lostFields == FieldMask([.text, .tags]), "B's text lost to C's write, which came second")
        #expect(mine?.loserEntry?.data.text == "buy soy milk")
    }

    /// An edit that fell below a delete is kept whole; an edit of another field by someone who
    /// had seen both does not settle it (the record does not say which fields the edit changed),
    /// a resolution does (`simulate --seed 104536` lost the text to an edit of the tags).
    @Test func anEditBelowADeleteIsKeptUntilAResolution() throws {
        let p = try Pair()
        let clockC = ManualClock(milliseconds: Self.t0 + 3_000)
        let c = try ReplicaFixtures.replica(role: .mac, seed: 3, clock: clockC)
        try ReplicaFixtures.sync(from: p.a, to: c)
        try p.b.update(id: p.id, patch: Self.textPatch("buy soy milk"))
        try c.delete(id: p.id)
        p.clockA.advance(by: 10_000)
        try p.a.update(id: p.id, patch: Self.textPatch("buy oat milk"))
        try ReplicaFixtures.sync(from: c, to: p.b)
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        #expect(try p.b.entry(id: p.id).data.text == "buy oat milk", "A's edit, above the delete, stands")
        func mine() throws -> Conflict? { try p.b.conflicts().first { $0.loser.origin == p.b.identity.incarnation } }
        #expect(try mine()?.lostFields == nil)
        p.clockB.advance(by: 20_000)
        try p.b.update(id: p.id, patch: Self.errandTags)
        #expect(try mine()?.loserEntry?.data.text == "buy soy milk", "an edit of the tags chose nothing about the lost text")
        try p.b.resolveConflict(entryID: p.id, keep: .winner)
        #expect(try p.b.conflicts().isEmpty)
    }

    /// An edit that changed nothing (a patch that set what stood) loses nothing to a concurrent
    /// delete: no conflict is kept for it, in either order of arrival (`simulate --seed 1763`
    /// waited for ever for such a write to be accounted for).
    @Test func aNoOpEditConcurrentWithADeleteIsNoConflict() throws {
        let p = try Pair()
        try p.a.update(id: p.id, patch: Self.textPatch("buy milk"))
        try p.b.delete(id: p.id)
        try p.exchange()
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
        for replica in [p.a, p.b] {
            #expect(throws: ReplicaError.self) { try replica.entry(id: p.id) }
            #expect(try replica.conflicts().isEmpty, "a no-op edit lost nothing")
        }
    }

    /// An edit of one field that reaches a replica before the entry's creation reads as the
    /// whole entry its writer had (a write carries the whole entry, its mask only says which
    /// fields it changed); the creation arriving later changes nothing.
    @Test func anEditArrivingBeforeTheCreationGivesAWholeEntry() throws {
        let p = try Pair()
        try p.b.update(id: p.id, patch: Self.errandTags)
        let all = try p.b.changes(after: VersionVector())
        let edit = all.filter { $0.stamp.origin == p.b.identity.incarnation }
        #expect(edit.count == 1 && edit.first?.fields == FieldMask([.tags]))
        let c = try ReplicaFixtures.replica(role: .mac, seed: 3)
        try c.apply(edit, through: VersionVector())
        let early = try c.entry(id: p.id)
        #expect(early == (try p.b.entry(id: p.id)))
        #expect(early.data.text == "buy milk" && early.category == "note")
        try c.apply(all.filter { $0.stamp.origin != p.b.identity.incarnation }, through: VersionVector())
        #expect(try c.entry(id: p.id) == early)
        try ReplicaFixtures.sync(from: p.b, to: c)
        #expect(try c.canonicalDump() == p.b.canonicalDump())
    }

    /// A edits the text, B the tags; C only ever syncs with B, which relays A's write.
    @Test func aRelayedEditOfAnotherFieldConverges() throws {
        let p = try Pair()
        let c = try ReplicaFixtures.replica(role: .mac, seed: 3)
        try ReplicaFixtures.sync(from: p.b, to: c)
        try p.a.update(id: p.id, patch: Self.textPatch("buy oat milk"))
        try p.b.update(id: p.id, patch: Self.errandTags)
        try ReplicaFixtures.sync(from: p.b, to: c)  // B's tags first, alone
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: c)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        let entry = try c.entry(id: p.id)
        #expect(entry.data.text == "buy oat milk" && entry.data.tags == ["home", "errand"])
        #expect(try c.canonicalDump() == p.b.canonicalDump())
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
        for replica in [p.a, p.b, c] { #expect(try replica.conflicts().isEmpty) }
    }

    /// B's edit beat A's earlier delete, so the delete is the floor; A then edits the tags of the
    /// surviving entry. Receivers given every write in either order end where A and B end.
    @Test func anEditAfterAnUpdateBeatADeleteConvergesInEitherOrder() throws {
        let p = try Pair()
        var snapshots = try p.a.changes(after: VersionVector())
        try p.a.delete(id: p.id)
        snapshots += try p.a.changes(after: VersionVector())
        try p.b.update(id: p.id, patch: Self.textPatch("buy oat milk"))
        snapshots += try p.b.changes(after: VersionVector())
        try p.exchange()
        p.clockA.advance(by: 5_000)
        try p.a.update(id: p.id, patch: Self.errandTags)
        snapshots += try p.a.changes(after: VersionVector())
        try p.exchange()
        let expected = try p.a.canonicalDump()
        #expect(try p.b.canonicalDump() == expected)
        let entry = try p.a.entry(id: p.id)
        #expect(entry.data.text == "buy oat milk" && entry.data.tags == ["home", "errand"])

        for (k, stream) in [snapshots, snapshots.reversed()].enumerated() {
            let receiver = try ReplicaFixtures.replica(role: .mac, seed: 10 + UInt64(k))
            for change in stream { try receiver.apply([change], through: VersionVector()) }
            #expect(try receiver.entry(id: p.id) == entry, "order \(k)")
            #expect(try receiver.canonicalDump() == expected, "order \(k)")
            #expect(try ReplicaFixtures.sync(from: p.a, to: receiver).applied == 0, "order \(k): nothing left to deliver")
        }
    }

    /// BATCH carries each change's field mask (flag bit 1, PROTOCOL.md §5.2.1) through a round trip.
    @Test func aBatchKeepsEachChangesFields() throws {
        let p = try Pair()
        try p.b.update(id: p.id, patch: .object([("category", .string("errand")), ("data", .object([("text", .string("buy oat milk"))]))]))
        try p.b.delete(id: try p.b.add(json: ReplicaFixtures.entryJSON(text: "gone")).id)
        let changes = try p.b.changes(after: VersionVector())
        #expect(Set(changes.map(\.fields)) == [FieldMask.all, FieldMask([.category, .text])])
        let batch = Batch(id: 1, origins: [], changes: changes, through: try p.b.replicaVector())
        let decoded = try #require(SessionPair.decode(Message.batch(batch).encoded()))
        guard case .batch(let back) = decoded else { Issue.record("decoded as \(decoded)"); return }
        #expect(back.changes.map(\.fields) == changes.map(\.fields))
        #expect(back == batch)
    }
}
