import Foundation
@testable import LifeSync
import Testing
import TestSupport

private let t0 = ReplicaFixtures.epoch  // 2026-11-22T00:00:00Z

/// Runs `body`, expecting it to throw a `ReplicaError` that `matches` accepts.
private func expectReplicaError(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                                _ body: () throws -> Void, matches: (ReplicaError) -> Bool) {
    do {
        try body()
        Issue.record("\(what): expected a ReplicaError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as ReplicaError {
        if !matches(error) { Issue.record("\(what): unexpected \(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("\(what): expected a ReplicaError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
}

/// The field of an `.invalid` error, or nil.
private func invalidField(_ error: ReplicaError) -> String? {
    if case .invalid(let validation) = error { return validation.field }
    return nil
}

private func tableNames(_ path: String) throws -> [String] {
    let db = try Database(path: path, create: false)
    return try db.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") { $0.string(0) }
}

private func entryJSON(_ text: String?, timestamp: String, category: String? = nil, source: String? = nil,
                       tags: [String]? = nil, metric: (String, Double)? = nil) -> JSONValue {
    var data: [(String, JSONValue)] = []
    if let text { data.append(("text", .string(text))) }
    if let tags { data.append(("tags", .array(tags.map(JSONValue.string)))) }
    if let metric { data.append(("metric", .object([("name", .string(metric.0)), ("value", .number(metric.1))]))) }
    var members: [(String, JSONValue)] = [("timestamp", .string(timestamp)), ("data", .object(data))]
    if let category { members.append(("category", .string(category))) }
    if let source { members.append(("source", .string(source))) }
    return .object(members)
}

// MARK: - Creating and opening

@Suite struct ReplicaLifecycleTests {
    @Test func createGivesAWellFormedIdentity() throws {
        let replica = try ReplicaFixtures.replica(role: .watch, seed: 5)
        #expect(Identifier.role(of: replica.identity.nodeID) == .watch)
        #expect(replica.identity.role == .watch)
        #expect(Identifier.isUUIDv4(Substring(replica.identity.incarnation)))
        #expect(replica.identity.nodeID.dropFirst("watch_".count) != Substring(replica.identity.incarnation))
        let origins = try replica.knownOrigins()
        #expect(origins.count == 1)
        #expect(origins.first?.origin == replica.identity.incarnation)
        #expect(origins.first?.nodeID == replica.identity.nodeID)
        #expect(origins.first?.role == .watch)
        #expect(origins.first?.sequence == 0)
        #expect(try replica.replicaVector() == VersionVector())
    }

    @Test func differentSeedsGiveDifferentIdentities() throws {
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1)
        let b = try ReplicaFixtures.replica(role: .phone, seed: 2)
        #expect(a.identity.nodeID != b.identity.nodeID)
        #expect(a.identity.incarnation != b.identity.incarnation)
    }

    @Test func reopeningAFileKeepsNodeIDIncarnationAndEntries() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("phone.sqlite")
            let identity: ReplicaIdentity
            let added: LogEntry
            do {
                let replica = try ReplicaFixtures.replica(role: .phone, seed: 5, path: path)
                identity = replica.identity
                added = try replica.add(json: ReplicaFixtures.entryJSON(text: "kept"))
            }
            let reopened = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 999))
            #expect(reopened.identity == identity)
            #expect(try reopened.entry(id: added.id) == added)
            // `create` on an existing replica of the same role opens it rather than re-initialising.
            let recreated = try Replica.create(path: path, role: .phone, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 77))
            #expect(recreated.identity == identity)
            #expect(try recreated.liveEntryCount() == 1)
            // It is a plain SQLite file with the documented tables.
            let tables = try tableNames(path)
            for table in ["conflicts", "entries", "meta", "replica_vector", "tombstones"] { #expect(tables.contains(table)) }
        }
    }

    @Test func reopeningContinuesTheSequenceAndTheClock() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("r.sqlite")
            var lastStamp: VersionStamp?
            do {
                let replica = try ReplicaFixtures.replica(role: .mac, seed: 3, clock: ManualClock(milliseconds: t0 + 3_600_000), path: path)
                let a = try replica.add(json: ReplicaFixtures.entryJSON(text: "a"))
                let b = try replica.add(json: ReplicaFixtures.entryJSON(text: "b"))
                _ = a
                lastStamp = try replica.versionStamp(id: b.id)
            }
            let previous = try #require(lastStamp)
            #expect(previous.sequence == 2)
            // Reopened with a wall clock a day behind: the HLC must not go back.
            let reopened = try Replica(path: path, clock: ManualClock(milliseconds: t0 - 86_400_000), random: SeededRandom(seed: 4))
            let c = try reopened.add(json: ReplicaFixtures.entryJSON(text: "c"))
            let stamp = try #require(try reopened.versionStamp(id: c.id))
            #expect(stamp.sequence == 3)
            #expect(stamp.origin == previous.origin)
            #expect(stamp.hlc > previous.hlc)
            #expect(try reopened.replicaVector()[reopened.identity.incarnation] == 3)
        }
    }

    @Test func createWithAnotherRoleIsRefused() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("w.sqlite")
            let nodeID = try ReplicaFixtures.replica(role: .watch, path: path).identity.nodeID
            expectReplicaError("create as mac", {
                _ = try Replica.create(path: path, role: .mac, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 2))
            }, matches: { $0 == .alreadyInitialized(role: .watch, nodeID: nodeID) })
        }
    }

    @Test func openingAMissingFileIsRefusedAndCreatesNothing() throws {
        withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("missing.sqlite")
            expectReplicaError("open missing", {
                _ = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { $0 == .notInitialized(path: path) })
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func openingAFreshInMemoryDatabaseIsNotInitialized() {
        expectReplicaError("open :memory:", {
            _ = try Replica(path: ":memory:", clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
        }, matches: { $0 == .notInitialized(path: ":memory:") })
    }

    @Test func openingAnEmptyFileIsNotInitialized() throws {
        withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("empty.sqlite")
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            expectReplicaError("open empty file", {
                _ = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { $0 == .notInitialized(path: path) })
        }
    }

    @Test func aFileThatIsNotSQLiteIsRefusedAndLeftAlone() throws {
        withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("garbage.sqlite")
            let random = SeededRandom(seed: 66)
            var bytes = Array("this is not a database, just some notes\n".utf8)
            while bytes.count < 8_192 { bytes.append(UInt8(truncatingIfNeeded: random.nextUInt64())) }
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            expectReplicaError("open garbage", {
                _ = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .notAReplica(let p, _) = $0 { return p == path } else { return false } })
            expectReplicaError("create over garbage", {
                _ = try Replica.create(path: path, role: .phone, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .notAReplica = $0 { return true } else { return false } })
            #expect(FileManager.default.contents(atPath: path) == Data(bytes))
        }
    }

    @Test func aShortTextFileIsRefused() throws {
        withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("notes.txt")
            let text = Data("hello, I am a text file that someone passed as --db by mistake. It is long enough to have a header.\n".utf8)
            #expect(FileManager.default.createFile(atPath: path, contents: text))
            expectReplicaError("open text", {
                _ = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .notAReplica = $0 { return true } else { return false } })
            #expect(FileManager.default.contents(atPath: path) == text)
        }
    }

    @Test func aSQLiteFileOfAnotherProgramIsRefusedAndLeftAlone() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("other.sqlite")
            do {
                let db = try Database(path: path)
                try db.execute("CREATE TABLE foo (x INTEGER); INSERT INTO foo VALUES (42);")
            }
            expectReplicaError("open foreign", {
                _ = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .notAReplica(let p, let reason) = $0 { return p == path && reason.contains("foo") } else { return false } })
            expectReplicaError("create over foreign", {
                _ = try Replica.create(path: path, role: .mac, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .notAReplica = $0 { return true } else { return false } })
            #expect(try tableNames(path) == ["foo"])
            let db = try Database(path: path, create: false)
            #expect(try db.userVersion == 0)
            #expect(try db.rows("SELECT x FROM foo") { $0.int64(0) } == [42])
        }
    }

    @Test func aNewerSchemaIsRefused() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("future.sqlite")
            do { _ = try ReplicaFixtures.replica(role: .phone, path: path) }
            do {
                let db = try Database(path: path, create: false)
                try db.setUserVersion(99)
            }
            expectReplicaError("open newer", {
                _ = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .newerSchema(let found, let supported) = $0 { return found == 99 && supported < 99 } else { return false } })
            expectReplicaError("create over newer", {
                _ = try Replica.create(path: path, role: .phone, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .newerSchema(found: 99, _) = $0 { return true } else { return false } })
            #expect(try Database(path: path, create: false).userVersion == 99)
        }
    }

    @Test func aNewerSchemaOnAnEmptyDatabaseIsRefused() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("v99.sqlite")
            do { try Database(path: path).setUserVersion(99) }
            expectReplicaError("open v99", {
                _ = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .newerSchema(found: 99, _) = $0 { return true } else { return false } })
        }
    }

    @Test func aDamagedIdentityIsRefused() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("damaged.sqlite")
            do { _ = try ReplicaFixtures.replica(role: .phone, path: path) }
            do { try Database(path: path, create: false).execute("UPDATE meta SET value = 'tv' WHERE key = 'role'") }
            expectReplicaError("open damaged", {
                _ = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 1))
            }, matches: { if case .notAReplica = $0 { return true } else { return false } })
        }
    }

    @Test func errorsExplainThemselves() {
        #expect(ReplicaError.notInitialized(path: "x.sqlite").description.contains("lifesync init"))
        #expect(ReplicaError.newerSchema(found: 99, supported: 1).description.contains("99"))
        #expect(ReplicaError.notFound(id: "abc").description.contains("abc"))
        #expect(ReplicaError.invalid(ValidationError(field: "category", reason: "bad")).description == "category: bad")
    }
}

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
        let all = try replica.changes(origin: me, after: 0, limit: 100)
        #expect(all.map(\.stamp.sequence) == [2, 3, 4, 5, 6])
        #expect(all.map(\.id) == [ids[1], ids[2], ids[3], ids[4], ids[0]])
        #expect(try replica.changes(origin: me, after: 3, limit: 2).map(\.stamp.sequence) == [4, 5])
        #expect(try replica.changes(origin: me, after: 6, limit: 10).isEmpty)
        #expect(try replica.changes(origin: "someone-else", after: 0, limit: 10).isEmpty)
        #expect(try replica.changes(after: VersionVector([(me, 4)])).map(\.stamp.sequence) == [5, 6])
    }
}

// MARK: - Queries

@Suite struct ReplicaQueryTests {
    struct Fixture {
        let replica: Replica
        let e1, e2, e3, e4, e5: LogEntry
    }

    static func fixture() throws -> Fixture {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 12)
        let e1 = try replica.add(json: entryJSON("Buy groceries", timestamp: "2026-11-20T08:00:00Z", category: "food",
                                                 source: "phone", tags: ["shopping"]))
        let e2 = try replica.add(json: entryJSON("Walked to the park", timestamp: "2026-11-21T09:00:00Z", category: "mood",
                                                 source: "watch", tags: ["morning", "walking"], metric: ("mood", 4)))
        let e3 = try replica.add(json: entryJSON("Grocery run, milk and bread", timestamp: "2026-11-22T10:00:00Z", category: "food",
                                                 source: "watch", tags: ["dinner"], metric: ("cost", 12.5)))
        let e4 = try replica.add(json: entryJSON(nil, timestamp: "2026-11-23T11:00:00Z", source: "drafts"))
        let e5 = try replica.add(json: entryJSON("Feeling GREAT", timestamp: "2026-11-24T12:00:00Z", category: "mood",
                                                 source: "phone", tags: ["walk"], metric: ("mood", 8)))
        return Fixture(replica: replica, e1: e1, e2: e2, e3: e3, e4: e4, e5: e5)
    }

    private func ids(_ f: Fixture, _ query: EntryQuery) throws -> [String] {
        try f.replica.entries(matching: query).map(\.id)
    }

    @Test func everythingNewestFirst() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery()) == [f.e5.id, f.e4.id, f.e3.id, f.e2.id, f.e1.id])
        #expect(try f.replica.entries(matching: EntryQuery()).first == f.e5)
        #expect(try f.replica.allEntries().map(\.id) == [f.e1.id, f.e2.id, f.e3.id, f.e4.id, f.e5.id])
    }

    @Test func sinceAndUntilAreInclusive() throws {
        let f = try Self.fixture()
        let at = try Timestamp(iso8601: "2026-11-22T10:00:00Z")
        #expect(try ids(f, EntryQuery(since: at)) == [f.e5.id, f.e4.id, f.e3.id])
        #expect(try ids(f, EntryQuery(until: at)) == [f.e3.id, f.e2.id, f.e1.id])
        #expect(try ids(f, EntryQuery(since: at, until: at)) == [f.e3.id])
        // The same instant written with an offset.
        let sameInstant = try Timestamp(iso8601: "2026-11-22T11:00:00+01:00")
        #expect(try ids(f, EntryQuery(since: sameInstant, until: sameInstant)) == [f.e3.id])
        let justAfter = Timestamp(millisecondsSince1970: at.millisecondsSince1970 + 1)
        #expect(try ids(f, EntryQuery(since: justAfter)) == [f.e5.id, f.e4.id])
        #expect(try ids(f, EntryQuery(since: try Timestamp(iso8601: "2027-01-01T00:00:00Z"))).isEmpty)
        #expect(try ids(f, EntryQuery(since: justAfter, until: at)).isEmpty)
    }

    @Test func categoryAndSourceMatchExactly() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(category: "food")) == [f.e3.id, f.e1.id])
        #expect(try ids(f, EntryQuery(category: "mood")) == [f.e5.id, f.e2.id])
        #expect(try ids(f, EntryQuery(category: "FOOD")).isEmpty)
        #expect(try ids(f, EntryQuery(category: "foo")).isEmpty)
        #expect(try ids(f, EntryQuery(source: "watch")) == [f.e3.id, f.e2.id])
        #expect(try ids(f, EntryQuery(source: "drafts")) == [f.e4.id])
        #expect(try ids(f, EntryQuery(source: "mac")).isEmpty)
    }

    @Test func tagMatchesWholeTagsOnly() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(tag: "walk")) == [f.e5.id])
        #expect(try ids(f, EntryQuery(tag: "walking")) == [f.e2.id])
        #expect(try ids(f, EntryQuery(tag: "morning")) == [f.e2.id])
        #expect(try ids(f, EntryQuery(tag: "shop")).isEmpty)
        #expect(try ids(f, EntryQuery(tag: "Morning")).isEmpty)
    }

    @Test func searchIsCaseInsensitiveAndStems() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(search: "grocery")) == [f.e3.id, f.e1.id])
        #expect(try ids(f, EntryQuery(search: "GROCERIES")) == [f.e3.id, f.e1.id])
        #expect(try ids(f, EntryQuery(search: "great")) == [f.e5.id])
        #expect(try ids(f, EntryQuery(search: "walking")) == [f.e2.id])
        #expect(try ids(f, EntryQuery(search: "par")) == [f.e2.id])
        #expect(try ids(f, EntryQuery(search: "milk bread")) == [f.e3.id])
        #expect(try ids(f, EntryQuery(search: "milk park")).isEmpty)
        #expect(try ids(f, EntryQuery(search: "xyzzy")).isEmpty)
    }

    @Test func textSearchRule() {
        #expect(TextSearch(query: "grocery").matches("Buy groceries"))
        #expect(TextSearch(query: "Grocery").matches("BUY GROCERIES"))
        #expect(TextSearch(query: "walking").matches("walked home"))
        #expect(!TextSearch(query: "walking").matches("talked home"))
        #expect(TextSearch(query: "buy, milk!").matches("milk: buy it"))
        #expect(!TextSearch(query: "buy milk").matches("buy bread"))
        #expect(TextSearch(query: "  ").isEmpty)
    }

    @Test func filtersCombine() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(category: "food", search: "milk")) == [f.e3.id])
        #expect(try ids(f, EntryQuery(category: "mood", source: "phone")) == [f.e5.id])
        #expect(try ids(f, EntryQuery(since: try Timestamp(iso8601: "2026-11-21T00:00:00Z"), source: "watch", tag: "dinner")) == [f.e3.id])
        #expect(try ids(f, EntryQuery(category: "food", tag: "walk")).isEmpty)
    }

    @Test func limitAndOffsetPage() throws {
        let f = try Self.fixture()
        #expect(try ids(f, EntryQuery(limit: 2)) == [f.e5.id, f.e4.id])
        #expect(try ids(f, EntryQuery(limit: 2, offset: 2)) == [f.e3.id, f.e2.id])
        #expect(try ids(f, EntryQuery(limit: 2, offset: 4)) == [f.e1.id])
        #expect(try ids(f, EntryQuery(limit: 2, offset: 10)).isEmpty)
        #expect(try ids(f, EntryQuery(limit: 0)).isEmpty)
        #expect(try ids(f, EntryQuery(category: "food", limit: 1, offset: 1)) == [f.e1.id])
    }

    @Test func entriesAtTheSameTimeAreOrderedByIDAndPagesNeverOverlap() throws {
        let replica = try ReplicaFixtures.replica(role: .mac, seed: 13)
        var added: [String] = []
        for i in 0..<7 { added.append(try replica.add(json: ReplicaFixtures.entryJSON(text: "same \(i)")).id) }
        var paged: [String] = []
        for page in 0..<4 { paged += try replica.entries(matching: EntryQuery(limit: 2, offset: page * 2)).map(\.id) }
        #expect(paged == added.sorted(by: >))
    }

    @Test func statsCountLiveEntries() throws {
        let f = try Self.fixture()
        var stats = try f.replica.stats()
        #expect(stats.total == 5)
        #expect(stats.byCategory.map(\.key) == ["(none)", "food", "mood"])
        #expect(stats.byCategory.map(\.count) == [1, 2, 2])
        #expect(stats.bySource.map(\.key) == ["drafts", "phone", "watch"])
        #expect(stats.bySource.map(\.count) == [1, 2, 2])
        #expect(stats.byDay.map(\.key) == ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"])
        #expect(stats.byDay.map(\.count) == [1, 1, 1, 1, 1])
        #expect(stats.metrics == [
            EntryStats.MetricSummary(name: "cost", count: 1, average: 12.5, minimum: 12.5, maximum: 12.5),
            EntryStats.MetricSummary(name: "mood", count: 2, average: 6, minimum: 4, maximum: 8),
        ])
        let json = stats.json
        #expect(json["total"] == .number(5))
        #expect(json["by_category"]?["food"] == .number(2))
        #expect(json["metrics"]?["mood"]?["average"] == .number(6))

        try f.replica.delete(id: f.e5.id)
        stats = try f.replica.stats()
        #expect(stats.total == 4)
        #expect(stats.byCategory.map(\.count) == [1, 2, 1])
        #expect(stats.metrics.last == EntryStats.MetricSummary(name: "mood", count: 1, average: 4, minimum: 4, maximum: 4))
    }

    @Test func statsOfAnEmptyReplica() throws {
        let stats = try ReplicaFixtures.replica(role: .phone).stats()
        #expect(stats.total == 0)
        #expect(stats.byCategory.isEmpty && stats.bySource.isEmpty && stats.byDay.isEmpty && stats.metrics.isEmpty)
    }
}

// MARK: - Import

@Suite struct ReplicaImportTests {
    static func entries(_ count: Int, seed: UInt64 = 40) -> [LogEntry] {
        let random = SeededRandom(seed: seed)
        return (0..<count).map { i in
            LogEntry(id: Identifier.make(role: .mac, random: random), timestamp: Timestamp(millisecondsSince1970: t0 - Int64(i) * 60_000),
                     recordedAt: Timestamp(millisecondsSince1970: t0), source: "mac", deviceId: "mac_import",
                     category: "imported", data: LogData(text: "entry \(i)", tags: ["import"]))
        }
    }

    @Test func importWritesEverything() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(3)
        #expect(try replica.importEntries(batch) == 3)
        for entry in batch { #expect(try replica.entry(id: entry.id) == entry) }
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 3)
    }

    @Test func aDuplicateIDInTheInputRollsBackEverything() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let existing = try replica.add(json: ReplicaFixtures.entryJSON(text: "before"))
        let batch = Self.entries(3)
        var again = batch[0]
        again.data.text = "a second copy"
        expectReplicaError("duplicate in input", {
            try replica.importEntries([batch[0], batch[1], again, batch[2]])
        }, matches: { invalidField($0) == "entry 3: id" })
        for entry in batch { #expect(throws: ReplicaError.notFound(id: entry.id)) { try replica.entry(id: entry.id) } }
        #expect(try replica.liveEntryCount() == 1)
        #expect(try replica.entry(id: existing.id) == existing)
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 1)
        #expect(try replica.changes(after: VersionVector()).map(\.id) == [existing.id])
    }

    /// The same record twice in one input is as harmless as importing it twice: it is skipped.
    @Test func anIdenticalDuplicateInTheInputIsSkipped() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(2)
        #expect(try replica.importEntries([batch[0], batch[1], batch[0]], positionName: { "line \($0 + 1)" }) == 2)
        #expect(try replica.liveEntryCount() == 2)
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 2)
    }

    @Test func reImportingIdenticalEntriesIsSkipped() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(4)
        #expect(try replica.importEntries(batch) == 4)
        let hash = try replica.canonicalHash()
        let vector = try replica.replicaVector()
        #expect(try replica.importEntries(batch) == 0)
        #expect(try replica.importEntries(batch.reversed()) == 0)
        #expect(try replica.canonicalHash() == hash)
        #expect(try replica.replicaVector() == vector)
        // Identical old ones are skipped while new ones are written.
        let more = Self.entries(6)  // same seed: the first four are the same entries
        #expect(try replica.importEntries(more) == 2)
        #expect(try replica.liveEntryCount() == 6)
    }

    @Test func reImportingWithAnotherRecordedAtIsStillTheSameEntry() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(2)
        try replica.importEntries(batch)
        var later = batch[0]
        later.recordedAt = Timestamp(millisecondsSince1970: t0 + 86_400_000)
        #expect(later.isSameContent(as: batch[0]))
        #expect(try replica.importEntries([later, batch[1]]) == 0)
        #expect(try replica.entry(id: batch[0].id) == batch[0])
        var edited = later
        edited.data.text = "edited"
        #expect(!edited.isSameContent(as: batch[0]))
    }

    @Test func importingOtherContentUnderATakenIDIsRefusedWhole() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(2)
        try replica.importEntries(batch)
        var changed = batch[1]
        changed.category = "edited"
        let fresh = Self.entries(1, seed: 41)[0]
        expectReplicaError("changed content", {
            try replica.importEntries([fresh, changed])
        }, matches: { invalidField($0) == "entry 2: id" })
        #expect(throws: ReplicaError.notFound(id: fresh.id)) { try replica.entry(id: fresh.id) }
        #expect(try replica.entry(id: batch[1].id) == batch[1])
    }

    @Test func importingADeletedIDIsRefused() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(1)
        try replica.importEntries(batch)
        try replica.delete(id: batch[0].id)
        expectReplicaError("deleted", { try replica.importEntries(batch) }, matches: { invalidField($0) == "entry 1: id" })
        #expect(try replica.liveEntryCount() == 0)
        #expect(try replica.tombstoneCount() == 1)
    }
}

// MARK: - Replication between two replicas

@Suite struct ReplicaSyncTests {
    struct Pair {
        let a: Replica, b: Replica
        let clockA: ManualClock, clockB: ManualClock
    }

    static func pair() throws -> Pair {
        let clockA = ManualClock(milliseconds: t0), clockB = ManualClock(milliseconds: t0)
        return Pair(a: try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA),
                    b: try ReplicaFixtures.replica(role: .mac, seed: 2, clock: clockB), clockA: clockA, clockB: clockB)
    }

    @Test func syncCopiesEntriesAndAdvancesTheVector() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "x"))
        let y = try p.a.add(json: ReplicaFixtures.entryJSON(text: "y"))
        let outcome = try ReplicaFixtures.sync(from: p.a, to: p.b)
        #expect(outcome.applied == 2)
        #expect(outcome.conflicts == 0)
        #expect(try p.b.entry(id: x.id) == x)
        #expect(try p.b.entry(id: y.id) == y)
        #expect(try p.b.versionStamp(id: x.id) == (try p.a.versionStamp(id: x.id)))
        #expect(try p.b.replicaVector()[p.a.identity.incarnation] == 2)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        // Nothing more to send; a repeat is a no-op.
        #expect(try p.a.changes(after: try p.b.replicaVector()).isEmpty)
        let again = try ReplicaFixtures.sync(from: p.a, to: p.b)
        #expect(again.applied == 0)
        #expect(try p.b.replicaVector()[p.a.identity.incarnation] == 2)
    }

    @Test func applyingTheSameChangesTwiceIsIdempotent() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "x"))
        _ = try p.a.update(id: x.id, patch: .object([("category", .string("c"))]))
        _ = try p.a.add(json: ReplicaFixtures.entryJSON(text: "z"))
        let changes = try p.a.changes(after: VersionVector())
        let first = try p.b.apply(changes, through: try p.a.replicaVector())
        let hash = try p.b.canonicalHash()
        let second = try p.b.apply(changes, through: try p.a.replicaVector())
        #expect(first.applied == 2)
        #expect(second.applied == 0)
        #expect(second.unchanged == 2)
        #expect(try p.b.canonicalHash() == hash)
        #expect(hash == (try p.a.canonicalHash()))
    }

    @Test func aReceivedOriginIsKnownAndCanBeNamed() throws {
        let p = try Self.pair()
        _ = try p.a.add(json: ReplicaFixtures.entryJSON(text: "x"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        let learned = try #require(try p.b.knownOrigins().first { $0.origin == p.a.identity.incarnation })
        #expect(learned.sequence == 1)
        try p.b.recordOrigin(p.a.identity.incarnation, nodeID: p.a.identity.nodeID, role: .phone)
        let named = try #require(try p.b.knownOrigins().first { $0.origin == p.a.identity.incarnation })
        #expect(named.nodeID == p.a.identity.nodeID)
        #expect(named.role == .phone)
        #expect(named.sequence == 1)
    }

    /// Both sides edit the same entry without seeing each other's edit; B's clock is later.
    @Test func concurrentUpdatesPickOneWinnerAndKeepTheLoser() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockA.advance(by: 1_000)
        p.clockB.advance(by: 2_000)
        let fromA = try p.a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        let fromB = try p.b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        let stampA = try #require(try p.a.versionStamp(id: x.id))
        let stampB = try #require(try p.b.versionStamp(id: x.id))
        #expect(stampA.hlc < stampB.hlc)

        let toB = try ReplicaFixtures.sync(from: p.a, to: p.b)
        let toA = try ReplicaFixtures.sync(from: p.b, to: p.a)
        #expect(toB.conflicts == 1)
        #expect(toB.applied == 0)
        #expect(toA.applied == 1)
        #expect(toA.conflicts == 1)
        #expect(try p.a.entry(id: x.id) == fromB)
        #expect(try p.b.entry(id: x.id) == fromB)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        #expect(try p.a.versionStamp(id: x.id)?.vector == (try p.b.versionStamp(id: x.id)?.vector))

        // Both sides keep A's version as the loser: B because it kept its own, A because its own
        // edit was replaced ("keep the local copy as backup").
        for replica in [p.a, p.b] {
            let conflicts = try replica.conflicts()
            #expect(conflicts.count == 1)
            let conflict = try #require(conflicts.first)
            #expect(conflict.entryID == x.id)
            #expect(conflict.loser.origin == p.a.identity.incarnation)
            #expect(conflict.loser.sequence == stampA.sequence)
            #expect(conflict.loser.hlc == stampA.hlc)
            #expect(!conflict.loser.deleted)
            #expect(conflict.loserEntry == fromA)
            #expect(conflict.winner.origin == p.b.identity.incarnation)
            #expect(conflict.winner.sequence == stampB.sequence)
            #expect(conflict.winner.hlc == stampB.hlc)
            #expect(conflict.detectedAt == replica.now)
            #expect(conflict.json["loser"]?["entry"]?["category"] == .string("a-side"))
            #expect(conflict.json["entry_id"] == .string(x.id))
        }

        // Syncing again, or re-delivering everything, records nothing new.
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        _ = try p.b.apply(try p.a.changes(after: VersionVector()), through: VersionVector())
        _ = try p.a.apply(try p.b.changes(after: VersionVector()), through: VersionVector())
        _ = try p.b.apply([Change(id: x.id, stamp: stampA, entry: fromA)], through: VersionVector())
        #expect(try p.a.conflicts().count == 1)
        #expect(try p.b.conflicts().count == 1)
        #expect(try p.b.entry(id: x.id) == fromB)
    }

    /// The same concurrent edits delivered the other way round: A hears of B's edit first.
    @Test func concurrentUpdatesDeliveredTheOtherWayRecordTheLoserOnTheLosingSide() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockA.advance(by: 1_000)
        p.clockB.advance(by: 2_000)
        let fromA = try p.a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        let fromB = try p.b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        let toA = try ReplicaFixtures.sync(from: p.b, to: p.a)
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        #expect(toA.conflicts == 1)
        #expect(try p.a.entry(id: x.id) == fromB)
        #expect(try p.b.entry(id: x.id) == fromB)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        let conflict = try #require(try p.a.conflicts().first)
        #expect(conflict.loserEntry == fromA)
        #expect(conflict.loser.origin == p.a.identity.incarnation)
    }

    /// DESIGN.md: "The losing concurrent version is kept in a conflicts table ('keep the local copy
    /// as backup')". When the winner's side hears of the loser first, the winner's row absorbs the
    /// loser's vector; sent back, it dominates the loser's own replica, which then overwrites its
    /// local edit without keeping it.
    @Test func theReplicaWhoseLocalEditLostKeepsItAsBackup() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockA.advance(by: 1_000)
        p.clockB.advance(by: 2_000)
        let fromA = try p.a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        _ = try p.b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        try ReplicaFixtures.sync(from: p.a, to: p.b)  // B keeps its edit, records A's as the loser
        let toA = try ReplicaFixtures.sync(from: p.b, to: p.a)  // A's own edit is replaced here
        #expect(toA.applied == 1)
        #expect(try p.a.entry(id: x.id).category == "b-side")
        #expect(toA.conflicts == 1, "A's local edit was overwritten by a concurrent one without being counted")
        #expect(try p.a.conflicts().contains { $0.loserEntry == fromA },
                "A's conflicts table does not hold A's own overwritten edit")
    }

    /// A write that had seen the stored version is causally later: no conflict may be recorded for it,
    /// even when it reaches a replica through a relay that never saw every version.
    @Test func aRelayedCausallyLaterWriteRecordsNoConflict() throws {
        let clockA = ManualClock(milliseconds: t0), clockB = ManualClock(milliseconds: t0), clockD = ManualClock(milliseconds: t0)
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA)
        let b = try ReplicaFixtures.replica(role: .mac, seed: 2, clock: clockB)
        let d = try ReplicaFixtures.replica(role: .watch, seed: 3, clock: clockD)
        let x = try a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: a, to: b)
        try ReplicaFixtures.sync(from: a, to: d)
        clockA.advance(by: 1_000)
        clockB.advance(by: 2_000)
        _ = try a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        _ = try b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        let genuine = try ReplicaFixtures.sync(from: b, to: a)  // a real conflict: A's edit loses
        #expect(genuine.conflicts == 1)
        try ReplicaFixtures.sync(from: b, to: d)
        try ReplicaFixtures.sync(from: a, to: d)
        // D edits the version it holds (B's), after seeing it.
        clockD.advance(by: 3_000)
        let fromD = try d.update(id: x.id, patch: .object([("category", .string("d-side"))]))
        let stampD = try #require(try d.versionStamp(id: x.id))
        #expect(stampD.vector[b.identity.incarnation] == 1)  // D had seen B's edit
        let outcome = try ReplicaFixtures.sync(from: d, to: a)
        #expect(try a.entry(id: x.id) == fromD)
        #expect(outcome.conflicts == 0, "B's version was superseded by D's causally later edit, not concurrent with it")
        let losers = try a.conflicts().map(\.loser.origin)
        #expect(losers == [a.identity.incarnation], "conflicts on A: \(losers)")
    }

    @Test func equalClocksAreBrokenByOriginTheSameWayEverywhere() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        // Neither clock moves: both updates get the same HLC.
        _ = try p.a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        _ = try p.b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        let stampA = try #require(try p.a.versionStamp(id: x.id)), stampB = try #require(try p.b.versionStamp(id: x.id))
        #expect(stampA.hlc == stampB.hlc)
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        let expected = p.a.identity.incarnation > p.b.identity.incarnation ? "a-side" : "b-side"
        #expect(try p.a.entry(id: x.id).category == expected)
        #expect(try p.b.entry(id: x.id).category == expected)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        #expect(try p.b.conflicts().count == 1)
        #expect(try p.b.conflicts().first?.loser.hlc == stampA.hlc)
    }

    @Test func aLaterConcurrentUpdateBeatsADelete() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockB.advance(by: 5_000)
        try p.a.delete(id: x.id)
        let kept = try p.b.update(id: x.id, patch: .object([("category", .string("kept"))]))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        #expect(try p.a.entry(id: x.id) == kept)
        #expect(try p.b.entry(id: x.id) == kept)
        #expect(try p.a.tombstoneCount() == 0)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        let conflict = try #require(try p.b.conflicts().first)
        #expect(conflict.loser.deleted)
        #expect(conflict.loserEntry == nil)
        #expect(conflict.json["loser"]?["entry"] == .null)
    }

    @Test func aLaterConcurrentDeleteBeatsAnUpdateAndKeepsIt() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockB.advance(by: 5_000)
        let lost = try p.a.update(id: x.id, patch: .object([("category", .string("lost"))]))
        try p.b.delete(id: x.id)
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        for replica in [p.a, p.b] {
            #expect(throws: ReplicaError.notFound(id: x.id)) { try replica.entry(id: x.id) }
            #expect(try replica.tombstoneCount() == 1)
            #expect(try replica.liveEntryCount() == 0)
            #expect(try replica.versionStamp(id: x.id)?.deleted == true)
        }
        let conflict = try #require(try p.b.conflicts().first)
        #expect(conflict.loserEntry == lost)
        #expect(conflict.winner.deleted)
        #expect(!conflict.loser.deleted)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
    }

    @Test func aCausallyLaterUpdateWinsWithoutAConflict() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        let later = try p.b.update(id: x.id, patch: .object([("category", .string("later"))]))
        let outcome = try ReplicaFixtures.sync(from: p.b, to: p.a)
        #expect(outcome.applied == 1)
        #expect(outcome.conflicts == 0)
        #expect(try p.a.entry(id: x.id) == later)
        #expect(try p.a.conflicts().isEmpty)
        let stamp = try #require(try p.a.versionStamp(id: x.id))
        #expect(stamp.vector == VersionVector([(p.a.identity.incarnation, 1), (p.b.identity.incarnation, 1)]))
    }

    @Test func aStampFarInTheFutureIsCountedAsSkew() throws {
        let clockA = ManualClock(milliseconds: t0 + 86_400_000)  // a day ahead
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA)
        let b = try ReplicaFixtures.replica(role: .mac, seed: 2)
        _ = try a.add(json: ReplicaFixtures.entryJSON(text: "from the future"))
        let outcome = try ReplicaFixtures.sync(from: a, to: b)
        #expect(outcome.applied == 1)
        #expect(outcome.clockSkewed == 1)
        // B's own next write is stamped near its own clock, not a day ahead.
        let mine = try b.add(json: ReplicaFixtures.entryJSON(text: "mine"))
        let stamp = try #require(try b.versionStamp(id: mine.id))
        #expect(stamp.hlc.milliseconds <= t0 + HybridLogicalClock.defaultMaximumDrift + 1)
    }

    @Test func canonicalDumpListsLiveEntriesAndTombstonesInIDOrder() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "x"))
        let y = try p.a.add(json: ReplicaFixtures.entryJSON(text: "y"))
        try p.a.delete(id: y.id)
        let lines = try p.a.canonicalDump().split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.contains { $0.hasPrefix("E ") && $0.contains(x.id) })
        #expect(lines.contains { $0.hasPrefix("T ") && $0.hasSuffix(y.id) })
        #expect(try p.a.canonicalHash().count == 64)
        #expect(try p.a.canonicalHash() != (try p.b.canonicalHash()))
    }
}
