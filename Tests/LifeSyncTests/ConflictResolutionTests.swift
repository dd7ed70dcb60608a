import Testing
@testable import LifeSync
import TestSupport

/// Conflicts a user can read and settle: the fields that differ, a resolution that replicates
/// and clears the record everywhere it arrives, a dismissal that stays local.
@Suite struct ConflictResolutionTests {
    static let t0: Int64 = 1_790_000_000_000

    /// Three replicas with one entry everywhere; then A and B (a later clock) both edit the text
    /// and the tags, concurrently. B's values win both fields; A's write is the loser. With
    /// `categoryOnA`, A's edit also sets the category, which B left alone: that field is A's.
    struct Mesh {
        let a: Replica, b: Replica, c: Replica
        let clockC = ManualClock(milliseconds: ConflictResolutionTests.t0)
        let id: String
        let fromA: LogEntry, fromB: LogEntry

        init(categoryOnA: Bool = false) throws {
            let clocks = (ManualClock(milliseconds: ConflictResolutionTests.t0), ManualClock(milliseconds: ConflictResolutionTests.t0))
            a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clocks.0)
            b = try ReplicaFixtures.replica(role: .mac, seed: 2, clock: clocks.1)
            c = try ReplicaFixtures.replica(role: .mac, seed: 3, clock: clockC)
            let original = try a.add(json: .object([("category", .string("note")), ("data", .object([
                ("text", .string("buy milk")), ("tags", .array([.string("home")]))]))]))
            id = original.id
            try ReplicaFixtures.sync(from: a, to: b)
            clocks.0.advance(by: 1_000)
            clocks.1.advance(by: 2_000)
            let dataA: JSONValue = .object([("text", .string("buy oat milk")), ("tags", .array([.string("home"), .string("shop")]))])
            fromA = try a.update(id: id, patch: .object(categoryOnA ? [("category", .string("shopping")), ("data", dataA)] : [("data", dataA)]))
            fromB = try b.update(id: id, patch: .object([("data", .object([
                ("text", .string("buy soy milk")), ("tags", .array([.string("home"), .string("errand")]))]))]))
        }

        /// Everyone hears of everyone.
        func syncAll() throws {
            for _ in 0..<2 {
                for (from, to) in [(a, b), (b, a), (a, c), (c, a), (b, c), (c, b)] { try ReplicaFixtures.sync(from: from, to: to) }
            }
        }
    }

    @Test func aConflictListsTheFieldsThatDifferBesideEachOther() throws {
        let m = try Mesh()
        try m.syncAll()
        // The loser travels (PROTOCOL.md §8, Held writes): C, which never met it first-hand,
        // lists the same conflict as A and B.
        for replica in [m.a, m.b, m.c] {
            let conflict = try #require(try replica.conflicts().first)
            #expect(conflict.current == m.fromB)
            #expect(conflict.loserEntry == m.fromA)
            #expect(conflict.fields == [
                FieldDifference(field: "data.tags", winner: .array([.string("home"), .string("errand")]), loser: .array([.string("home"), .string("shop")])),
                FieldDifference(field: "data.text", winner: .string("buy soy milk"), loser: .string("buy oat milk")),
            ])
            let json = conflict.json { $0 == m.a.identity.incarnation ? Conflict.Device(nodeID: m.a.identity.nodeID, role: .phone) : nil }
            #expect(json["loser"]?["node_id"] == .string(m.a.identity.nodeID))
            #expect(json["loser"]?["role"] == .string("phone"))
            #expect(json["winner"]?["node_id"] == nil, "an origin this replica cannot name is left unnamed")
            guard case .array(let fields)? = json["fields"] else { Issue.record("fields is not an array"); continue }
            #expect(fields.map { $0["field"] } == [.string("data.tags"), .string("data.text")])
        }
        #expect(try m.a.devices()[m.a.identity.incarnation] == Conflict.Device(nodeID: m.a.identity.nodeID, role: .phone))
    }

    @Test func keepingOneFieldOfTheLoserReplicatesAndClearsTheRecordEverywhere() throws {
        let m = try Mesh()
        try m.syncAll()
        let stamp = try m.a.resolveConflict(entryID: m.id, keep: .loser, field: "data.text")
        let resolved = try m.a.entry(id: m.id)
        #expect(resolved.data.text == "buy oat milk", "the loser's text")
        #expect(resolved.data.tags == ["home", "errand"], "the winner's tags")
        #expect(stamp.vector[m.a.identity.incarnation] == stamp.sequence)
        #expect(try m.a.conflicts().isEmpty)
        try m.syncAll()
        for replica in [m.b, m.c] {
            #expect(try replica.entry(id: m.id) == resolved)
            #expect(try replica.conflicts().isEmpty, "the resolution cleared the record where it arrived")
        }
        #expect(try m.a.canonicalHash() == (try m.b.canonicalHash()))
        #expect(try m.b.canonicalHash() == (try m.c.canonicalHash()))
    }

    /// A's category edit had no rival: it survives everywhere beside B's text and tags, and the
    /// conflict lists only the fields A lost.
    @Test func aConcurrentEditOfAnotherFieldSurvivesBesideTheConflict() throws {
        let m = try Mesh(categoryOnA: true)
        try m.syncAll()
        for replica in [m.a, m.b, m.c] {
            let entry = try replica.entry(id: m.id)
            #expect(entry.category == "shopping", "A's category")
            #expect(entry.data == m.fromB.data, "B's text and tags")
        }
        // A's write still decides the category, so it travels on: C, which never talked to A,
        // receives both writes and records the conflict as well.
        for replica in [m.a, m.b, m.c] {
            let conflict = try #require(try replica.conflicts().first)
            #expect(conflict.lostFields == FieldMask([.text, .tags]))
            #expect(conflict.fields.map(\.field) == ["data.tags", "data.text"], "the category A won is no difference")
        }
        // Keeping the loser takes back what it lost; the category it won stays.
        try m.b.resolveConflict(entryID: m.id, keep: .loser)
        try m.syncAll()
        for replica in [m.a, m.b, m.c] {
            let entry = try replica.entry(id: m.id)
            #expect(entry.data == m.fromA.data && entry.category == "shopping")
            #expect(try replica.conflicts().isEmpty)
        }
        #expect(try m.a.canonicalDump() == m.b.canonicalDump())
        #expect(try m.b.canonicalDump() == m.c.canonicalDump())
    }

    @Test func aReplicaThatHearsOfTheResolutionFirstRecordsNoConflict() throws {
        let m = try Mesh()
        let loser = Change(id: m.id, stamp: try #require(try m.a.versionStamp(id: m.id)), entry: m.fromA)
        try ReplicaFixtures.sync(from: m.a, to: m.b)  // B: conflict, B wins
        let resolution = try m.b.resolveConflict(entryID: m.id, keep: .winner)
        // C gets the resolution alone, then the versions it settles, each through the merge
        // (no vector says C absorbed them already).
        try m.c.apply([Change(id: m.id, stamp: resolution, entry: m.fromB)], through: VersionVector())
        let late = try m.c.apply([loser], through: VersionVector())
        #expect(late.conflicts == 0 && late.unchanged == 1)
        #expect(try m.c.conflicts().isEmpty)
        #expect(try m.c.entry(id: m.id) == m.fromB, "keeping the winner keeps its content")
        try m.syncAll()
        for replica in [m.a, m.b, m.c] { #expect(try replica.conflicts().isEmpty) }
        #expect(try m.a.entry(id: m.id) == m.fromB)
    }

    @Test func keepingAWholeLoserAndKeepingADeleteWork() throws {
        let m = try Mesh()
        try m.syncAll()
        try m.b.resolveConflict(entryID: m.id, keep: .loser)
        try m.syncAll()
        #expect(try m.c.entry(id: m.id) == m.fromA)
        #expect(try m.a.conflicts().isEmpty)

        // A delete that lost to a later edit, then kept by a resolution: the entry goes.
        let n = try Mesh()
        try ReplicaFixtures.sync(from: n.b, to: n.a)
        try n.a.delete(id: n.id)
        try ReplicaFixtures.sync(from: n.b, to: n.c)
        n.clockC.advance(by: 5_000)
        try n.c.update(id: n.id, patch: .object([("category", .string("later"))]))
        try ReplicaFixtures.sync(from: n.a, to: n.c)
        let conflict = try #require(try n.c.conflicts().first { $0.loser.deleted })
        #expect(conflict.fields.contains { $0.field == "category" && $0.loser == nil })
        try n.c.resolveConflict(entryID: n.id, keep: .loser, loserOrigin: n.a.identity.incarnation)
        #expect(try n.c.versionStamp(id: n.id)?.deleted == true)
        #expect(try n.c.conflicts().isEmpty)
    }

    @Test func dismissingForgetsTheRecordHereOnly() throws {
        let m = try Mesh()
        try m.syncAll()
        let before = try m.a.canonicalHash()
        #expect(try m.a.dismissConflicts(entryID: m.id) == 1)
        #expect(try m.a.conflicts().isEmpty)
        #expect(try m.a.canonicalHash() == before, "nothing written")
        try m.syncAll()
        #expect(try m.b.conflicts().count == 1)
        #expect(try m.a.conflicts().isEmpty, "syncing again does not bring a dismissed record back")
    }

    @Test func badResolutionsAreRefusedNamingTheProblem() throws {
        let m = try Mesh()
        try m.syncAll()
        let other = try m.a.add(json: ReplicaFixtures.entryJSON(text: "calm"))
        let before = try m.a.canonicalHash()
        func reason(_ body: () throws -> Void) -> String {
            do { try body() } catch ReplicaError.invalid(let error) { return "\(error.field): \(error.reason)" } catch { return "\(error)" }
            return "accepted"
        }
        #expect(reason { try m.a.resolveConflict(entryID: other.id, keep: .winner) } == "ENTRY: no conflict is recorded for \(other.id)")
        #expect(reason { try m.a.resolveConflict(entryID: m.id, keep: .winner, field: "data.text") }.hasPrefix("--field: takes a field from the loser"))
        #expect(reason { try m.a.resolveConflict(entryID: m.id, keep: .loser, field: "data.mood") }
                == "--field: data.mood is not a field of either version (fields: category, data.tags, data.text, device_id, source, timestamp)")
        #expect(reason { try m.a.resolveConflict(entryID: m.id, keep: .loser, loserOrigin: "mac_nobody") }
                == "--loser: no losing version of \(m.id) comes from mac_nobody")
        #expect(reason { _ = try m.a.dismissConflicts(entryID: other.id) } == "ENTRY: no conflict is recorded for \(other.id)")
        #expect(try m.a.canonicalHash() == before, "a refused resolution writes nothing")
        #expect(try m.a.conflicts().count == 1)
    }

    @Test func anEditOnTheLosersDeviceAfterTheWinnerArrivedSettlesTheConflict() throws {
        let m = try Mesh()
        try m.syncAll()
        // A wrote the loser (text and tags), then saw the winner. An edit of another field settles
        // nothing about the fields it lost; an edit of a lost field has seen both, and settles
        // that field: the lost tags are still kept, for nothing else holds them now.
        try m.a.update(id: m.id, patch: .object([("category", .string("errand"))]))
        #expect(try m.a.conflicts().count == 1)
        try m.a.update(id: m.id, patch: .object([("data", .object([("text", .string("buy oat milk, 2 l"))]))]))
        #expect(try m.a.conflicts().map(\.lostFields) == [FieldMask([.tags])])
        // B's own later edit had not seen A's loser: B's record stays until A's edits arrive.
        try m.syncAll()
        for replica in [m.a, m.b, m.c] { #expect(try replica.conflicts().map(\.lostFields) == [FieldMask([.tags])]) }
        try m.a.update(id: m.id, patch: .object([("data", .object([("tags", .array([.string("home")]))]))]))
        try m.syncAll()
        for replica in [m.a, m.b, m.c] { #expect(try replica.conflicts().isEmpty) }
    }

    @Test func fieldDifferencesCoverEveryEditableField() throws {
        let base = try LogEntry.validatedComplete(from: JSONValue.parse("""
            {"id": "phone_7336239a-e248-4ab2-a2a7-fd6f1223c124", "timestamp": "2026-11-22T08:00:00.000Z", "recorded_at": "2026-11-22T08:00:00.000Z",
             "source": "phone", "device_id": "phone_7336239a-e248-4ab2-a2a7-fd6f1223c124", "category": "mood",
             "data": {"text": "ok", "metric": {"name": "mood", "value": 6}, "location": {"latitude": 1, "longitude": 2}}}
            """))
        var other = base
        other.category = nil
        other.data.metric?.value = 7
        other.data.location = nil
        other.data.tags = ["x"]
        other.recordedAt = Timestamp(millisecondsSince1970: 0)
        #expect(LogEntry.differences(winner: base, loser: other).map(\.field) == ["category", "data.location", "data.metric", "data.tags"])
        #expect(LogEntry.differences(winner: base, loser: base).isEmpty)
        #expect(LogEntry.differences(winner: nil, loser: base).count == base.editableFields.count)
        // A location taken from the other side replaces it whole.
        var moved = base
        moved.data.location = Location(latitude: 5, longitude: 6, accuracy: 3)
        let taken = try base.taking("data.location", from: moved, defaults: EntryDefaults(makeID: { "unused" }, recordedAt: Timestamp(millisecondsSince1970: 0), timestamp: nil, source: "phone", deviceId: "d"))
        #expect(taken.data.location == moved.data.location)
        let back = try moved.taking("data.location", from: base, defaults: EntryDefaults(makeID: { "unused" }, recordedAt: Timestamp(millisecondsSince1970: 0), timestamp: nil, source: "phone", deviceId: "d"))
        #expect(back.data.location == base.data.location, "no accuracy left over from the replaced location")
    }
}
