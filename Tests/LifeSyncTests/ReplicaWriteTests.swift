import Foundation
@testable import LifeSync
import Testing
import TestSupport

private let t0 = ReplicaFixtures.epoch  // 2026-11-22T00:00:00Z

// MARK: - Local writes

@Suite struct ReplicaWriteTests {
    @Test func addFillsDefaultsFromTheReplica() throws {
        let clock = ManualClock(milliseconds: t0 + 5_000)
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 7, clock: clock)
        let entry = try replica.add(json: ReplicaFixtures.entryJSON(text: "hello"))
        #expect(Identifier.role(of: entry.id) == .phone)
        #expect(entry.source == "phone")
        #expect(entry.deviceId == replica.identity.nodeID)
        #expect(entry.recordedAt == Timestamp(millisecondsSince1970: t0 + 5_000))
        #expect(entry.timestamp.iso8601 == "2026-11-22T08:00:00.000Z")
        #expect(try replica.entry(id: entry.id) == entry)
        #expect(try replica.liveEntryCount() == 1)
        // Without a timestamp the entry happened now.
        let now = try replica.add(json: .object([("category", .string("note"))]))
        #expect(now.timestamp == Timestamp(millisecondsSince1970: t0 + 5_000))
    }

    @Test func addRefusesInvalidInputAndWritesNothing() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        expectReplicaError("typo", {
            _ = try replica.add(json: .object([("catgory", .string("mood"))]))
        }, matches: { invalidField($0) == "catgory" })
        expectReplicaError("bad metric", {
            _ = try replica.add(json: try JSONValue.parse(#"{"data": {"metric": {"name": "mood", "value": 11, "scale_max": 10}}}"#))
        }, matches: { invalidField($0) == "data.metric.value" })
        #expect(try replica.liveEntryCount() == 0)
        #expect(try replica.replicaVector() == VersionVector())
        #expect(try replica.changes(after: VersionVector()).isEmpty)
    }

    @Test func addRefusesATakenID() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let first = try replica.add(json: ReplicaFixtures.entryJSON(text: "first"))
        var copy = first
        copy.data.text = "second"
        expectReplicaError("duplicate", { try replica.add(copy) }, matches: { invalidField($0) == "id" })
        #expect(try replica.entry(id: first.id).data.text == "first")
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 1)
    }

    @Test func addTakesAnExplicitEntry() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let entry = LogEntry(id: "drafts_550e8400-e29b-41d4-a716-446655440000", timestamp: Timestamp(millisecondsSince1970: -1_000),
                             recordedAt: Timestamp(millisecondsSince1970: t0), source: "drafts", deviceId: "iphone-drafts",
                             category: "journal", data: LogData(text: "old memory", tags: ["1969"]))
        try replica.add(entry)
        #expect(try replica.entry(id: entry.id) == entry)
    }

    @Test func updateAppliesAMergePatch() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let entry = try replica.add(json: try JSONValue.parse("""
            {"timestamp": "2026-11-22T08:00:00Z", "category": "mood",
             "data": {"text": "ok", "metric": {"name": "mood", "value": 5, "scale_min": 1, "scale_max": 10}, "tags": ["a"]}}
            """))
        let updated = try replica.update(id: entry.id, patch: try JSONValue.parse(
            #"{"category": "energy", "data": {"metric": {"value": 8}, "tags": null, "location": {"latitude": 1, "longitude": 2}}}"#))
        var expected = entry
        expected.category = "energy"
        expected.data.metric?.value = 8
        expected.data.tags = nil
        expected.data.location = Location(latitude: 1, longitude: 2)
        #expect(updated == expected)
        #expect(try replica.entry(id: entry.id) == expected)
        #expect(try replica.liveEntryCount() == 1)
        // Removing the category and the text.
        let trimmed = try replica.update(id: entry.id, patch: try JSONValue.parse(#"{"category": null, "data": {"text": null}}"#))
        #expect(trimmed.category == nil)
        #expect(trimmed.data.text == nil)
        #expect(trimmed.data.metric?.value == 8)
        #expect(trimmed.recordedAt == entry.recordedAt)
        #expect(trimmed.timestamp == entry.timestamp)
    }

    @Test func updateCannotChangeTheID() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let entry = try replica.add(json: ReplicaFixtures.entryJSON(text: "x"))
        let other = "phone_0f8fad5b-d9cb-469f-a165-70867728950e"
        expectReplicaError("new id", {
            _ = try replica.update(id: entry.id, patch: .object([("id", .string(other))]))
        }, matches: { invalidField($0) == "id" })
        expectReplicaError("null id", {
            _ = try replica.update(id: entry.id, patch: .object([("id", .null)]))
        }, matches: { invalidField($0) == "id" })
        expectReplicaError("whole replacement", {
            _ = try replica.update(id: entry.id, patch: .array([]))
        }, matches: { invalidField($0) == "id" })
        #expect(try replica.entry(id: entry.id) == entry)
        #expect(throws: ReplicaError.notFound(id: other)) { try replica.entry(id: other) }
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 1)
        // Restating the same id is allowed.
        let same = try replica.update(id: entry.id, patch: .object([("id", .string(entry.id)), ("category", .string("c"))]))
        #expect(same.id == entry.id)
    }

    @Test func updateToAnInvalidEntryIsRefusedAndChangesNothing() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let entry = try replica.add(json: try JSONValue.parse(
            #"{"timestamp": "2026-11-22T08:00:00Z", "data": {"metric": {"name": "mood", "value": 5, "scale_max": 10}}}"#))
        expectReplicaError("out of scale", {
            _ = try replica.update(id: entry.id, patch: try JSONValue.parse(#"{"data": {"metric": {"value": 11}}}"#))
        }, matches: { invalidField($0) == "data.metric.value" })
        expectReplicaError("unknown", {
            _ = try replica.update(id: entry.id, patch: .object([("catgory", .string("x"))]))
        }, matches: { invalidField($0) == "catgory" })
        expectReplicaError("latitude", {
            _ = try replica.update(id: entry.id, patch: try JSONValue.parse(#"{"data": {"location": {"latitude": 91, "longitude": 0}}}"#))
        }, matches: { invalidField($0) == "data.location.latitude" })
        #expect(try replica.entry(id: entry.id) == entry)
        #expect(try replica.versionStamp(id: entry.id)?.sequence == 1)
    }

    @Test func updatingOrDeletingAMissingEntryIsNotFound() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let id = "phone_0f8fad5b-d9cb-469f-a165-70867728950e"
        #expect(throws: ReplicaError.notFound(id: id)) { try replica.update(id: id, patch: .object([])) }
        #expect(throws: ReplicaError.notFound(id: id)) { try replica.delete(id: id) }
        #expect(throws: ReplicaError.notFound(id: id)) { try replica.entry(id: id) }
    }

    @Test func deleteLeavesATombstone() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let doomed = try replica.add(json: ReplicaFixtures.entryJSON(text: "doomed", category: "x"))
        let kept = try replica.add(json: ReplicaFixtures.entryJSON(text: "kept", category: "x"))
        try replica.delete(id: doomed.id)

        #expect(throws: ReplicaError.notFound(id: doomed.id)) { try replica.entry(id: doomed.id) }
        #expect(try replica.entries(matching: EntryQuery()).map(\.id) == [kept.id])
        #expect(try replica.entries(matching: EntryQuery(category: "x")).map(\.id) == [kept.id])
        #expect(try replica.allEntries().map(\.id) == [kept.id])
        #expect(try replica.liveEntryCount() == 1)
        #expect(try replica.tombstoneCount() == 1)
        #expect(try replica.stats().total == 1)

        let stamp = try #require(try replica.versionStamp(id: doomed.id))
        #expect(stamp.deleted)
        #expect(stamp.sequence == 3)

        let changes = try replica.changes(after: VersionVector())
        #expect(changes.count == 2)
        let tombstone = try #require(changes.first { $0.id == doomed.id })
        #expect(tombstone.stamp.deleted)
        #expect(tombstone.entry == nil)
        #expect(tombstone.stamp == stamp)
        let live = try #require(changes.first { $0.id == kept.id })
        #expect(live.entry == kept)
        #expect(!live.stamp.deleted)

        // A deleted entry cannot be updated, deleted again, or re-added under its ID.
        #expect(throws: ReplicaError.notFound(id: doomed.id)) { try replica.update(id: doomed.id, patch: .object([])) }
        #expect(throws: ReplicaError.notFound(id: doomed.id)) { try replica.delete(id: doomed.id) }
        expectReplicaError("re-add", { try replica.add(doomed) }, matches: { invalidField($0) == "id" })
        #expect(try replica.tombstoneCount() == 1)
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 3)
    }

    @Test func everyWriteAdvancesTheSequenceVectorAndClock() throws {
        let clock = ManualClock(milliseconds: t0)
        let replica = try ReplicaFixtures.replica(role: .watch, seed: 9, clock: clock)
        let me = replica.identity.incarnation
        var previousHLC = HLCTimestamp.zero

        func check(_ id: String, sequence: UInt64, deleted: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let stamp = try #require(try replica.versionStamp(id: id), sourceLocation: sourceLocation)
            #expect(stamp.sequence == sequence, sourceLocation: sourceLocation)
            #expect(stamp.origin == me, sourceLocation: sourceLocation)
            #expect(stamp.vector == VersionVector([(me, sequence)]), sourceLocation: sourceLocation)
            #expect(stamp.deleted == deleted, sourceLocation: sourceLocation)
            #expect(stamp.hlc > previousHLC, sourceLocation: sourceLocation)
            #expect(try replica.replicaVector() == VersionVector([(me, sequence)]), sourceLocation: sourceLocation)
            previousHLC = stamp.hlc
        }

        let a = try replica.add(json: ReplicaFixtures.entryJSON(text: "a"))
        try check(a.id, sequence: 1, deleted: false)
        #expect(previousHLC.milliseconds == t0)
        _ = try replica.update(id: a.id, patch: .object([("category", .string("b"))]))  // same millisecond
        try check(a.id, sequence: 2, deleted: false)
        clock.advance(by: -3_600_000)  // the wall clock steps back an hour
        _ = try replica.update(id: a.id, patch: .object([("category", .string("c"))]))
        try check(a.id, sequence: 3, deleted: false)
        let b = try replica.add(json: ReplicaFixtures.entryJSON(text: "b"))
        try check(b.id, sequence: 4, deleted: false)
        try replica.delete(id: a.id)
        try check(a.id, sequence: 5, deleted: true)
        // A refused write consumes no sequence number.
        _ = try? replica.add(json: .object([("bogus", .bool(true))]))
        #expect(try replica.replicaVector()[me] == 5)
    }

    @Test func changesOfOneOriginComeInSequenceOrderWithALimit() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let me = replica.identity.incarnation
        var ids: [String] = []
        for i in 0..<5 { ids.append(try replica.add(json: ReplicaFixtures.entryJSON(text: "e\(i)")).id) }
        _ = try replica.update(id: ids[0], patch: .object([("category", .string("moved"))]))  // ids[0] is now seq 6
        // ids[0]'s creation (seq 1) still decides every field but the category: it stays in the log.
        let all = try replica.changes(origin: me, after: 0, limit: 100)
        #expect(all.map(\.stamp.sequence) == [1, 2, 3, 4, 5, 6])
        #expect(all.map(\.id) == [ids[0], ids[1], ids[2], ids[3], ids[4], ids[0]])
        #expect(all.map(\.fields) == [.all, .all, .all, .all, .all, FieldMask([.category])])
        #expect(try replica.changes(origin: me, after: 3, limit: 2).map(\.stamp.sequence) == [4, 5])
        #expect(try replica.changes(origin: me, after: 6, limit: 10).isEmpty)
        #expect(try replica.changes(origin: "someone-else", after: 0, limit: 10).isEmpty)
        #expect(try replica.changes(after: VersionVector([(me, 4)])).map(\.stamp.sequence) == [5, 6])
    }
}
