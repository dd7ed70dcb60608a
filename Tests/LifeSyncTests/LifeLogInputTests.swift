@testable import LifeSync
import Testing
import TestSupport

/// LifeLog data as its apps write it: bare (uppercase) UUIDs, `created_at`, `synced`, and
/// records without an ID, each keeping one identity across re-imports and replicas.
@Suite struct LifeLogInputTests {
    static let upper = "550E8400-E29B-41D4-A716-446655440000"

    static func record(_ fields: String) throws -> JSONValue {
        try JSONValue.parse(#"{"timestamp": "2026-03-01T09:30:00+01:00", "data": {"text": "Buy groceries", "tags": ["errand"]}"#
                            + (fields.isEmpty ? "" : ", " + fields) + "}")
    }

    static func imported(_ json: JSONValue, into replica: Replica) throws -> LogEntry {
        try LogEntry.validated(from: json, defaults: replica.importDefaults())
    }

    @Test(arguments: [
        (upper, "lifelog_550e8400-e29b-41d4-a716-446655440000"),
        (upper.lowercased(), "lifelog_550e8400-e29b-41d4-a716-446655440000"),
        ("DRAFTS_" + upper, "drafts_550e8400-e29b-41d4-a716-446655440000"),
        ("watch_550e8400-e29b-41d4-a716-446655440000", "watch_550e8400-e29b-41d4-a716-446655440000"),
    ])
    func idsAreNormalised(given: String, expected: String) {
        #expect(Identifier.normalisedEntryID(given) == expected)
    }

    /// A version-1 UUID's own digits would fail every peer's version-4 rule: it maps to a
    /// digest, the same one whatever its case.
    @Test func aBareUUIDOfAnotherVersionMapsToAStableDigest() throws {
        let v1 = "C232AB00-9414-11EC-B3C8-9F6BDECED846"
        let id = try #require(Identifier.normalisedEntryID(v1))
        #expect(id.hasPrefix("lifelog_") && Identifier.isValid(id.replacingOccurrences(of: "lifelog_", with: "mac_")))
        #expect(Identifier.normalisedEntryID(v1.lowercased()) == id)
        #expect(id != "lifelog_" + v1.lowercased())
    }

    @Test(arguments: ["42", "550E8400-E29B-41D4-A716-44665544000", "550E8400E29B41D4A716446655440000", "x_" + upper + "0", ""])
    func otherIDsAreRefusedNamingTheRule(given: String) throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        #expect(Identifier.normalisedEntryID(given) == nil)
        #expect(throws: ValidationError(field: "id", reason: "must be a UUID or {prefix}_{uuid-v4}, got \"\(given)\"")) {
            try Self.imported(try Self.record(#""id": "\#(given)""#), into: replica)
        }
    }

    /// The Drafts action's object, as it is.
    @Test func addTakesTheDraftsActionsObject() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let entry = try replica.add(json: try JSONValue.parse("""
            {"id": "\(Self.upper)", "timestamp": "2026-03-01T09:30:00.000Z", "recorded_at": "2026-03-01T09:30:00.000Z",
             "source": "drafts", "device_id": "iPhone", "category": "note", "data": {"text": "hello", "tags": ["note"]},
             "synced": false, "created_at": "2026-03-01 08:30:00"}
            """))
        #expect(entry.id == "lifelog_550e8400-e29b-41d4-a716-446655440000")
        #expect(try replica.entry(id: entry.id) == entry)
        #expect(entry.json["synced"] == nil && entry.json["created_at"] == nil)
    }

    @Test func copyFieldsAreTypeChecked() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        #expect(throws: ValidationError(field: "synced", reason: "must be true or false, got a string")) {
            try Self.imported(try Self.record(#""synced": "yes""#), into: replica)
        }
        #expect(throws: ValidationError(field: "created_at", reason: "must be a string, got a number")) {
            try Self.imported(try Self.record(#""created_at": 5"#), into: replica)
        }
    }

    /// Peers and stored rows stay strict: only a user's input takes LifeLog's forms.
    @Test func aPeersEntryTakesNoneOfIt() throws {
        let valid = #""id": "phone_550e8400-e29b-41d4-a716-446655440000", "recorded_at": "2026-03-01T08:30:00Z", "source": "phone", "device_id": "d""#
        #expect(throws: ValidationError(field: "synced", reason: "unknown field")) {
            try LogEntry.validatedComplete(from: try Self.record(valid + #", "synced": true"#))
        }
        #expect(throws: ValidationError(field: "id", reason: "must look like {role}_{uuid-v4} in lowercase, got \"\(Self.upper)\"")) {
            try LogEntry.validatedComplete(from: try Self.record(#""id": "\#(Self.upper)", "recorded_at": "2026-03-01T08:30:00Z", "source": "phone", "device_id": "d""#))
        }
    }

    /// Without an ID, the content as given names the entry: the same on every node (whose
    /// defaults for source and device differ), whatever the zone the time was written in.
    @Test func aRecordWithoutIDGetsTheSameIDOnEveryNode() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 1)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 2)
        let onWatch = try Self.imported(try Self.record(#""category": "note""#), into: watch)
        let onMac = try Self.imported(try Self.record(#""category": "note""#), into: mac)
        #expect(onWatch.id == onMac.id && onWatch.id.hasPrefix("lifelog_"))
        #expect(onWatch.source == "watch" && onMac.source == "mac")
        let utc = try JSONValue.parse(#"{"timestamp": "2026-03-01T08:30:00Z", "category": "note", "data": {"tags": ["errand"], "text": "Buy groceries"}}"#)
        #expect(try Self.imported(utc, into: mac).id == onWatch.id)
        for other in [#""category": "work""#, #""category": "note", "source": "drafts""#, #""category": "note", "recorded_at": "2026-03-01T08:31:00Z""#] {
            #expect(try Self.imported(try Self.record(other), into: mac).id != onWatch.id, "\(other)")
        }
        // `add` still makes a fresh ID each time: two moods logged alike are two entries.
        #expect(try watch.add(json: try Self.record("")).id != (try watch.add(json: try Self.record(""))).id)
    }

    @Test func reImportingRecordsWithoutIDsWritesNothing() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let records = try ["mood", "note", "work"].map { try Self.record(#""category": "\#($0)""#) }
        let first = try replica.importEntries(try records.map { try Self.imported($0, into: replica) })
        #expect(first.written == 3)
        let hash = try replica.canonicalHash()
        let again = try replica.importEntries(try records.map { try Self.imported($0, into: replica) })
        #expect(again.written == 0 && again.unchanged == 3)
        #expect(try replica.canonicalHash() == hash)
    }

    /// The app's Swift model encoded by a default `JSONEncoder`: camelCase names are the same
    /// fields, on `add` as on import (the same entry, the same derived ID), stored snake_case.
    @Test func theAppsCamelCaseNamesAreTheSameFields() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let camel = try JSONValue.parse("""
            {"id": "\(Self.upper)", "timestamp": "2026-03-01T09:30:00Z", "recordedAt": "2026-03-01T09:30:01Z", "source": "iphone",
             "deviceId": "iPhone 15", "category": "mood", "synced": false,
             "data": {"metric": {"name": "mood", "value": 7, "scaleMin": 1, "scaleMax": 10},
                      "location": {"latitude": 52.5, "longitude": 13.4, "placeName": "Berlin"}}}
            """)
        let entry = try replica.add(json: camel)
        let recordedAt = try Timestamp(iso8601: "2026-03-01T09:30:01Z")
        #expect(entry.deviceId == "iPhone 15" && entry.recordedAt == recordedAt)
        #expect(entry.data.metric?.scaleMin == 1 && entry.data.metric?.scaleMax == 10 && entry.data.location?.placeName == "Berlin")
        let canonical = entry.json.canonicalText
        #expect(canonical.contains("\"device_id\"") && canonical.contains("\"place_name\"") && !canonical.contains("deviceId"))
        let snake = try Self.record(#""recorded_at": "2026-03-01T09:30:01Z", "device_id": "d""#)
        let camelRecord = try Self.record(#""recordedAt": "2026-03-01T09:30:01Z", "deviceId": "d""#)
        #expect(try Self.imported(camelRecord, into: replica) == (try Self.imported(snake, into: replica)))
    }

    @Test(arguments: [
        (#""recorded_at": "2026-03-01T09:30:01Z", "recordedAt": "2026-03-01T09:30:01Z""#, "recorded_at", "recordedAt"),
        (#""deviceId": "a", "device_id": "a""#, "device_id", "deviceId"),
    ])
    func aFieldInBothSpellingsIsRefused(fields: String, snake: String, camel: String) throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        #expect(throws: ValidationError(field: snake, reason: "given twice, as \"\(snake)\" and as \"\(camel)\" (the same field); send one")) {
            try LogEntry.validated(from: try Self.record(fields), defaults: replica.addDefaults())
        }
        let nested = try JSONValue.parse(#"{"data": {"location": {"latitude": 1, "longitude": 2, "place_name": "a", "placeName": "b"}}}"#)
        #expect(throws: ValidationError(field: "data.location.place_name", reason: "given twice, as \"place_name\" and as \"placeName\" (the same field); send one")) {
            try LogEntry.validated(from: nested, defaults: replica.addDefaults())
        }
    }

    /// Only the app's spellings: any other camelCase name is unknown, and a peer takes none.
    @Test func otherNamesStayUnknownAndPeersStayStrict() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        #expect(throws: ValidationError(field: "data.metric.scale", reason: "unknown field")) {
            try LogEntry.validated(from: try JSONValue.parse(#"{"data": {"metric": {"name": "m", "value": 1, "scale": 3}}}"#), defaults: replica.addDefaults())
        }
        #expect(throws: ValidationError(field: "createdBy", reason: "unknown field")) {
            try LogEntry.validated(from: try Self.record(#""createdBy": "me""#), defaults: replica.addDefaults())
        }
        #expect(throws: ValidationError(field: "deviceId", reason: "unknown field")) {
            try LogEntry.validatedComplete(from: try Self.record(#""id": "phone_550e8400-e29b-41d4-a716-446655440000", "recorded_at": "2026-03-01T08:30:00Z", "source": "phone", "device_id": "d", "deviceId": "d""#))
        }
    }
}
