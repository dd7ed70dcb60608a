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
        // The edit lost where it was made; a replica that kept a loser never sends it on.
        let conflicts = try p.b.conflicts()
        #expect(conflicts.count == 1 && conflicts.first?.loserEntry?.data.text == "buy oat milk")
        #expect(try p.a.conflicts().isEmpty)
    }
}
