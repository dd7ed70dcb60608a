import Foundation
@testable import LifeSync
import Testing
import TestSupport

/// A new replica gets its schema from one script made by running every step once a process
/// (`Schema.freshScript`); a replica of an older version goes through the steps after its own.
/// Both must give the same database.
@Suite struct FreshSchemaTests {
    /// A database brought from empty to the current version one step at a time.
    static func stepByStep(at path: String) throws -> Database {
        let db = try Database(path: path)
        try db.transaction {
            try Schema.runSteps(db, after: 0)
            try db.setUserVersion(Schema.currentVersion)
        }
        return db
    }

    @Test func theScriptGivesWhatTheStepsGive() throws {
        let directory = TemporaryDirectory("fresh-schema")
        let replica = try Replica.create(path: directory.path + "/new.sqlite", role: .phone, clock: ManualClock(milliseconds: 0), random: SeededRandom(seed: 1))
        let made = try Database(path: directory.path + "/new.sqlite", create: false)
        // The rows `Replica.create` writes go (its identity); everything else is the schema's.
        try made.execute("""
            DELETE FROM meta WHERE key IN ('node_id', 'role', 'incarnation', 'created_at', 'hlc');
            DELETE FROM replica_vector; DELETE FROM own_incarnations; DELETE FROM origins
            """)
        let stepped = try Self.stepByStep(at: directory.path + "/stepped.sqlite")
        let (script, expected) = (try Schema.script(of: made), try Schema.script(of: stepped))
        let lines = script.split(separator: "\n"), wanted = expected.split(separator: "\n")
        #expect(script == expected, "only by the script: \(lines.filter { !wanted.contains($0) }.prefix(3)); only by the steps: \(wanted.filter { !lines.contains($0) }.prefix(3))")
        #expect(try made.userVersion == Schema.currentVersion)
        #expect(try made.rows("PRAGMA integrity_check") { $0.string(0) } == ["ok"])
        // The comparison sees what it compares: an index less, and the scripts differ.
        try made.execute("DROP INDEX idx_entries_feed")
        #expect(try Schema.script(of: made) != Schema.script(of: stepped))
        _ = replica
    }

    /// The text index (a virtual table making tables of its own) works in a replica made by the
    /// script: an entry added is found by a word of it.
    @Test func aNewReplicaSearchesItsText() throws {
        let directory = TemporaryDirectory("fresh-schema")
        let replica = try Replica.create(path: directory.path + "/r.sqlite", role: .phone, clock: ManualClock(milliseconds: 1_795_305_600_000), random: SeededRandom(seed: 2))
        _ = try replica.add(json: .object([("category", .string("note")), ("data", .object([("text", .string("Buy groceries"))]))]))
        #expect(try replica.entries(matching: EntryQuery(search: "grocery")).count == 1)
    }
}
