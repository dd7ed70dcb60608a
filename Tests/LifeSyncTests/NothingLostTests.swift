import Testing
@testable import LifeSync
import TestSupport

/// Issue "nothing lost in the user's world", §2 and §3, on real replicas: a conflict is on every
/// full replica (the losing write travels, as CouchDB's conflicting revisions do), and a delete
/// that lost stays listed until the user settles it.
@Suite struct NothingLostTests {
    static let t0: Int64 = 1_790_000_000_000
    static func text(_ text: String) -> JSONValue { .object([("data", .object([("text", .string(text))]))]) }

    /// Watch → phone → mac. The watch edits a note offline, the phone edits the same text later;
    /// the watch reconnects to the phone only. The mac, which never meets the watch, lists the
    /// conflict too, and keeps it when the phone is gone for good; resolving it there clears it
    /// on the watch's side as well.
    @Test func aConflictReachesEveryFullReplicaAndOutlivesTheDeviceItMetOn() throws {
        let (watchClock, phoneClock, macClock) = (ManualClock(milliseconds: Self.t0), ManualClock(milliseconds: Self.t0), ManualClock(milliseconds: Self.t0))
        let watch = try ReplicaFixtures.replica(role: .mac, seed: 1, clock: watchClock)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 2, clock: phoneClock)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 3, clock: macClock)
        let id = try phone.add(json: .object([("category", .string("note")), ("data", .object([("text", .string("draft"))]))])).id
        try ReplicaFixtures.sync(from: phone, to: watch)
        try ReplicaFixtures.sync(from: phone, to: mac)
        watchClock.advance(by: 1_000)
        try watch.update(id: id, patch: Self.text("written on the watch"))
        phoneClock.advance(by: 5_000)
        try phone.update(id: id, patch: Self.text("written on the phone"))
        try ReplicaFixtures.sync(from: watch, to: phone)
        try ReplicaFixtures.sync(from: phone, to: mac)
        for replica in [phone, mac] {
            let conflicts = try replica.conflicts()
            #expect(conflicts.count == 1 && conflicts.first?.loserEntry?.data.text == "written on the watch", "on \(replica.identity.nodeID)")
            #expect(try replica.entry(id: id).data.text == "written on the phone")
        }
        // The phone is lost: the mac alone still holds the watch's text, and settles it.
        try mac.resolveConflict(entryID: id, keep: .loser)
        #expect(try mac.entry(id: id).data.text == "written on the watch")
        #expect(try mac.conflicts().isEmpty)
        try ReplicaFixtures.sync(from: mac, to: watch)
        try ReplicaFixtures.sync(from: watch, to: mac)
        #expect(try watch.conflicts().isEmpty && watch.entry(id: id).data.text == "written on the watch")
        #expect(try watch.canonicalDump() == mac.canonicalDump())
    }

    struct Pair {
        let a: Replica, b: Replica
        let clockA = ManualClock(milliseconds: NothingLostTests.t0), clockB = ManualClock(milliseconds: NothingLostTests.t0)
        let id: String

        /// A deletes the entry; B, whose clock runs ahead, edits it without having seen the delete.
        init() throws {
            a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA)
            b = try ReplicaFixtures.replica(role: .mac, seed: 2, clock: clockB)
            id = try a.add(json: .object([("category", .string("note")), ("data", .object([("text", .string("buy milk"))]))])).id
            try ReplicaFixtures.sync(from: a, to: b)
            clockA.advance(by: 1_000)
            try a.delete(id: id)
            clockB.advance(by: 3_600_000)
            try b.update(id: id, patch: NothingLostTests.text("buy oat milk"))
            try exchange()
        }

        func exchange() throws {
            for _ in 0..<2 {
                try ReplicaFixtures.sync(from: a, to: b)
                try ReplicaFixtures.sync(from: b, to: a)
            }
        }

        func deleteConflicts(_ replica: Replica) throws -> [Conflict] { try replica.conflicts().filter(\.loser.deleted) }
    }

    /// The edit won (its clock ran an hour ahead) and the delete is listed; an ordinary edit by
    /// someone who saw both, of any field, leaves it listed (it decides nothing about the delete).
    @Test func aLosingDeleteStaysListedThroughLaterEdits() throws {
        let p = try Pair()
        for replica in [p.a, p.b] {
            #expect(try replica.entry(id: p.id).data.text == "buy oat milk")
            #expect(try p.deleteConflicts(replica).count == 1, "the delete is listed on \(replica.identity.nodeID)")
        }
        try p.a.update(id: p.id, patch: .object([("category", .string("errand"))]))
        p.clockB.advance(by: 1_000)
        try p.b.update(id: p.id, patch: Self.text("buy oat milk, 2 l"))
        try p.exchange()
        for replica in [p.a, p.b] {
            #expect(try p.deleteConflicts(replica).count == 1, "still listed on \(replica.identity.nodeID) after two edits")
        }
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
    }

    /// `conflicts resolve --keep loser` on a losing delete deletes the entry everywhere.
    @Test func keepingTheLosingDeleteDeletesTheEntryEverywhere() throws {
        let p = try Pair()
        try p.a.resolveConflict(entryID: p.id, keep: .loser)
        try p.exchange()
        for replica in [p.a, p.b] {
            #expect(throws: ReplicaError.notFound(id: p.id)) { try replica.entry(id: p.id) }
            #expect(try replica.conflicts().isEmpty)
        }
        #expect(try p.a.canonicalDump() == p.b.canonicalDump())
    }

    /// Keeping what stands, or deleting the entry again, settles it too.
    @Test func keepingTheEditOrDeletingAgainSettlesIt() throws {
        let kept = try Pair()
        try kept.b.resolveConflict(entryID: kept.id, keep: .winner)
        try kept.exchange()
        for replica in [kept.a, kept.b] {
            #expect(try replica.entry(id: kept.id).data.text == "buy oat milk")
            #expect(try replica.conflicts().isEmpty)
        }
        let again = try Pair()
        again.clockA.advance(by: 7_200_000)
        try again.a.delete(id: again.id)
        try again.exchange()
        for replica in [again.a, again.b] {
            #expect(throws: ReplicaError.notFound(id: again.id)) { try replica.entry(id: again.id) }
            #expect(try replica.conflicts().isEmpty)
        }
    }
}
