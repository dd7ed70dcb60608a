import Foundation
@testable import LifeSync
import Testing
import TestSupport

private let t0 = ReplicaFixtures.epoch  // 2026-11-22T00:00:00Z

private func tableNames(_ path: String) throws -> [String] {
    let db = try Database(path: path, create: false)
    return try db.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") { $0.string(0) }
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

    /// Opening a replica at the current version takes no lock: `status` or `list` beside an
    /// import (which holds the write lock for its whole run) read at once. They waited out the
    /// 5 s busy timeout and failed with "database is locked (in: BEGIN IMMEDIATE)".
    @Test func aReplicaOpensAndReadsWhileAnotherProcessWrites() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("mac.sqlite")
            do {
                let replica = try ReplicaFixtures.replica(role: .mac, seed: 6, path: path)
                _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "before the import"))
            }
            let writer = try Database(path: path, create: false)
            try writer.execute("BEGIN IMMEDIATE; INSERT INTO meta(key, value) VALUES ('an import', 'running')")
            defer { try? writer.execute("ROLLBACK") }
            let reader = try Replica(path: path, clock: ManualClock(milliseconds: t0), random: SeededRandom(seed: 7))
            #expect(try reader.liveEntryCount() == 1)
            #expect(try reader.stats().total == 1)
        }
        // A write that waits out the lock says so in words.
        let busy = SQLiteError(code: 5, message: "database is locked", sql: "BEGIN IMMEDIATE")
        #expect(busy.description.hasPrefix("the replica is busy: another process"))
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
