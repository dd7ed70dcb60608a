import Foundation
@testable import LifeSync
import Testing
import TestSupport

/// Schema step 27: the write tables and our own-write log name origins by number, and vectors
/// are varints. A replica of schema 26 opens as 27 with every value as it was.
@Suite struct CompactRowsMigrationTests {
    /// A journal of three origins: entries written here and received, edits of different fields
    /// made concurrently (kept writes), deletes, a recording, and our own-write log.
    static func journal(path: String) throws -> Replica {
        let clockA = ManualClock(milliseconds: ReplicaFixtures.epoch), clockB = ManualClock(milliseconds: ReplicaFixtures.epoch)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 81, clock: clockA, path: path)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 82, clock: clockB)
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 83)
        var ids: [String] = []
        for i in 0..<20 { ids.append(try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")).id) }
        for i in 0..<10 { ids.append(try watch.add(json: ReplicaFixtures.entryJSON(text: "watch \(i)")).id) }
        try ReplicaFixtures.sync(from: watch, to: mac)
        try ReplicaFixtures.sync(from: phone, to: mac)
        try ReplicaFixtures.sync(from: mac, to: phone)
        clockA.advance(by: 1_000)
        clockB.advance(by: 2_000)
        for id in ids[0..<5] + ids[20..<23] {
            try phone.update(id: id, patch: .object([("data", .object([("text", .string("edited here"))]))]))
            try mac.update(id: id, patch: .object([("category", .string("elsewhere"))]))
        }
        try phone.delete(id: ids[10])
        try mac.delete(id: ids[25])
        let recording = Identifier.make(role: .phone, random: SeededRandom(seed: 84))
        try phone.addRecording(Recording(id: recording, fileName: recording + ".m4a", size: 10, sha256: SHA256.hash([UInt8](repeating: 7, count: 10)),
                                         mediaType: "audio/mp4", entryID: ids[0], originNode: phone.identity.nodeID, createdAt: phone.now),
                               signedBy: TestKeys.key(for: phone.identity.nodeID))
        for _ in 0..<2 {
            try ReplicaFixtures.sync(from: mac, to: phone)
            try ReplicaFixtures.sync(from: phone, to: mac)
        }
        return phone
    }

    /// Everything a replica's rows say, through its functions.
    static func state(_ replica: Replica) throws -> [String] {
        var lines = try replica.canonicalDump().split(separator: "\n").map(String.init)
        let vector = try replica.replicaVector()
        lines.append("vector \(vector)")
        for change in try replica.changes(after: VersionVector()) {
            lines.append("change \(change.id) \(change.stamp) \(change.fields) \(String(describing: change.entry))")
        }
        for origin in vector.entries {
            for change in try replica.encodedChanges(origin: origin.origin, after: 0, limit: 1_000) {
                lines.append("encoded \(change.id) \(change.isDamaged) \(change.stamp) \(change.payload)")
            }
        }
        lines += try replica.database.rows("""
            SELECT (SELECT incarnation FROM origins WHERE number = origin_no), seq, hex(digest) FROM own_writes ORDER BY 1, 2
            """) { "own \($0.string(0)) \($0.int64(1)) \($0.string(2))" }
        return lines
    }

    /// The rebuilt tables as schema 26 had them, with origins and vectors as text.
    static let tables: [(name: String, columns: String)] = [
        ("entries", "id, timestamp, recorded_at, source, device_id, category, data, created_at, hlc, %, feed_seq, fields, own"),
        ("tombstones", "id, deleted_at, hlc, %, feed_seq"),
        ("kept_writes", "id, hlc, %, deleted, fields, content"),
        ("recordings", "id, file_name, size, sha256, media_type, entry_id, origin_node, created_at, deleted, hlc, %, origin_key, signature"),
    ]

    /// Writes `replica`'s file back as schema 26 at `path`: the schema made by steps 1-26, every
    /// row copied, origins and vectors written as they were then.
    static func downgrade(_ replica: Replica, source: String, to path: String) throws {
        let db = try Database(path: path)
        for step in Schema.migrations.prefix(26) { try db.execute(step) }
        try db.setUserVersion(26)
        try db.execute("ATTACH DATABASE '\(source)' AS src")
        let names = try db.rows("SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'") { $0.string(0) }
        let compact = Set(tables.map(\.name) + ["own_writes"])
        for name in names where !compact.contains(name) {
            try db.execute("INSERT OR REPLACE INTO main.\(name) SELECT * FROM src.\(name)")
        }
        let origin = "(SELECT incarnation FROM src.origins WHERE number = origin_no)"
        for table in tables {
            let columns = table.columns.replacing("%", with: "origin, origin_seq, vv")
            let copied = table.columns.replacing("%", with: "\(origin), origin_seq, ''")
            try db.execute("INSERT INTO main.\(table.name)(rowid, \(columns)) SELECT rowid, \(copied) FROM src.\(table.name)")
            let vectors = try replica.database.rows("SELECT hlc, origin_no, origin_seq, vector, rowid FROM \(table.name)") { row in
                (row.int64(4), try replica.stamp(from: row, deleted: false).vector.description)
            }
            for (rowid, vector) in vectors {
                try db.run("UPDATE main.\(table.name) SET vv = ? WHERE rowid = ?", [.text(vector), .integer(rowid)])
            }
        }
        try db.execute("INSERT INTO main.own_writes SELECT \(origin), seq, digest FROM src.own_writes")
        try db.execute("DETACH DATABASE src")
    }

    @Test func aReplicaOfSchema26OpensAs27WithEveryValueEqual() throws {
        let directory = TemporaryDirectory()
        let source = directory.path + "/now.sqlite", old = directory.path + "/schema26.sqlite"
        let replica = try Self.journal(path: source)
        let before = try Self.state(replica)
        #expect(try replica.database.firstRow("SELECT count(*) FROM kept_writes", [], { $0.int64(0) }) ?? 0 > 0)
        #expect(try replica.database.firstRow("SELECT count(*) FROM origins", [], { $0.int64(0) }) == 3)
        try Self.downgrade(replica, source: source, to: old)
        do {
            let db = try Database(path: old, create: false)
            #expect(try db.userVersion == 26)
            #expect(try db.firstRow("SELECT count(*) FROM entries WHERE origin = ? AND vv LIKE '%=%'",
                                    [.text(replica.identity.incarnation)], { $0.int64(0) }) ?? 0 > 10)
        }
        let reopened = try Replica(path: old, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 85))
        #expect(try reopened.database.userVersion == Schema.currentVersion)
        #expect(try reopened.database.firstRow("SELECT count(*) FROM pragma_table_info('entries') WHERE name IN ('origin', 'vv')", [], { $0.int64(0) }) == 0)
        let after = try Self.state(reopened)
        #expect(after == before)
        #expect(after.count == before.count && before.count > 60)
        // The numbered file keeps working: a write and an edit of a received entry.
        let added = try reopened.add(json: ReplicaFixtures.entryJSON(text: "after"))
        #expect(try reopened.entry(id: added.id).data.text == "after")
        #expect(try reopened.pendingCount(above: VersionVector()) == before.filter { $0.hasPrefix("change ") }.count + 1)
    }

    /// A vector that no longer parsed stays as it was, and reads back damaged as it did: the
    /// migration goes through, and the rest of the log flows.
    @Test func aDamagedVectorIsKeptAndStillReadsAsDamaged() throws {
        let directory = TemporaryDirectory()
        let source = directory.path + "/now.sqlite", old = directory.path + "/schema26.sqlite"
        let replica = try Self.journal(path: source)
        let own = replica.identity.incarnation
        let damaged = try #require(try replica.encodedChanges(origin: own, after: 0, limit: 1_000).first { $0.stamp.sequence == 12 && $0.kind == .entry })
        try Self.downgrade(replica, source: source, to: old)
        do {
            let db = try Database(path: old, create: false)
            try db.run("UPDATE entries SET vv = 'not a vector' WHERE id = ?", [.text(damaged.id)])
        }
        let reopened = try Replica(path: old, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 86))
        let log = try reopened.encodedChanges(origin: own, after: 0, limit: 1_000)
        #expect(log.filter(\.isDamaged).map(\.id) == [damaged.id])
        #expect(log.count == (try replica.encodedChanges(origin: own, after: 0, limit: 1_000)).count)
        #expect(throws: ReplicaError.self) { _ = try reopened.storedVersion(id: damaged.id) }
    }
}
