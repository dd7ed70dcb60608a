import Foundation
import Testing
import TestSupport

/// Several `lifesync` processes writing one replica file at the same time.
@Suite struct ConcurrentWriterTests {
    /// NDJSON of `count` records with fresh IDs.
    static func batch(_ label: String, count: Int) -> (ids: [String], text: String) {
        let ids = (0..<count).map { _ in newEntryID("phone") }
        let lines = ids.enumerated().map { i, id in
            #"{"id": "\#(id)", "timestamp": "2026-11-22T10:\#(String(format: "%02d", i % 60)):00Z", "category": "\#(label)", "data": {"text": "\#(label) \#(i)"}}"#
        }
        return (ids, lines.joined(separator: "\n") + "\n")
    }

    /// Every ID in the replica, via `list --json`, and via the sqlite3 shell.
    static func expectExactly(_ expected: [String], in sandbox: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let listed = try sandbox.list(["--limit", "100000"], sourceLocation: sourceLocation).compactMap { $0["id"] as? String }
        #expect(listed.count == expected.count, "list shows \(listed.count) entries, expected \(expected.count)", sourceLocation: sourceLocation)
        #expect(Set(listed).count == listed.count, "an entry is listed twice", sourceLocation: sourceLocation)
        #expect(Set(listed) == Set(expected), "missing: \(Set(expected).subtracting(listed).prefix(3)), extra: \(Set(listed).subtracting(expected).prefix(3))",
                sourceLocation: sourceLocation)
        #expect(try sandbox.entryCount(sourceLocation: sourceLocation) == expected.count, sourceLocation: sourceLocation)
        let counts = try sandbox.sqlite("SELECT count(*), count(DISTINCT id), count(DISTINCT origin_seq) FROM entries")
        #expect(counts.stdout == "\(expected.count)|\(expected.count)|\(expected.count)\n", "\(counts.stdout)", sourceLocation: sourceLocation)
        let integrity = try sandbox.sqlite("PRAGMA integrity_check")
        #expect(integrity.stdout == "ok\n", "integrity_check: \(integrity.stdout) \(integrity.stderr)", sourceLocation: sourceLocation)
    }

    @Test(.timeLimit(.minutes(3)))
    func twoImportsAndManyAddsAtOnce() throws {
        let sandbox = try Sandbox()
        let a = Self.batch("alpha", count: 200), b = Self.batch("beta", count: 200)
        let fileA = sandbox.file("a.ndjson"), fileB = sandbox.file("b.ndjson")
        try a.text.write(toFile: fileA, atomically: true, encoding: .utf8)
        try b.text.write(toFile: fileB, atomically: true, encoding: .utf8)

        var runs: [BackgroundRun] = []
        runs.append(try BackgroundRun(["import", fileA, "--db", sandbox.db], in: sandbox.directory, label: "import-a"))
        for i in 0..<12 {
            if i == 6 { runs.append(try BackgroundRun(["import", "--db", sandbox.db, fileB], in: sandbox.directory, label: "import-b")) }
            runs.append(try BackgroundRun(["add", "--db", sandbox.db, "--category", "single", "--text", "single \(i)"],
                                          in: sandbox.directory, label: "add-\(i)"))
        }
        try waitBounded(runs.map(\.process), timeout: 45)

        var addedIDs: [String] = []
        for run in runs {
            #expect(run.status == 0, "\(run.arguments) exited \(run.status): \(run.stderr)")
            #expect(!run.stderr.contains("Fatal error"))
            if run.arguments.first == "add" {
                let id = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(isIdentifier(id, role: "phone"), "add printed \(id)")
                addedIDs.append(id)
            } else {
                #expect(run.stdout == "imported 200 entries\n")
            }
        }
        #expect(Set(addedIDs).count == 12, "every add got its own ID")
        try Self.expectExactly(a.ids + b.ids + addedIDs, in: sandbox)

        // Each write took its own sequence number: the vector counts all of them.
        let status = try sandbox.status()
        let incarnation = try #require(status["incarnation"] as? String)
        #expect(integer((status["vector"] as? [String: Any])?[incarnation]) == 412)
        #expect(try sandbox.list(["--category", "single"]).count == 12)
    }

    @Test(.timeLimit(.minutes(3)))
    func waveOfConcurrentAddsUpdatesAndDeletes() throws {
        let sandbox = try Sandbox(role: "mac")
        // Ten entries to update and delete concurrently while new ones are added.
        let seed = Self.batch("seed", count: 10)
        let seeded = try sandbox.run(["import", "-"], input: seed.text)
        try #require(seeded.status == 0, "\(seeded.stderr)")

        var runs: [BackgroundRun] = []
        for (i, id) in seed.ids.enumerated() {
            let arguments = i % 2 == 0 ? ["delete", id, "--db", sandbox.db]
                                       : ["update", id, "--db", sandbox.db, "--json", #"{"data": {"text": "updated \#(i)"}}"#]
            runs.append(try BackgroundRun(arguments, in: sandbox.directory, label: "change-\(i)"))
            runs.append(try BackgroundRun(["add", "--db=\(sandbox.db)", "--text", "wave \(i)"], in: sandbox.directory, label: "add-\(i)"))
        }
        try waitBounded(runs.map(\.process), timeout: 45)
        for run in runs { #expect(run.status == 0, "\(run.arguments) exited \(run.status): \(run.stderr)") }

        let added = runs.filter { $0.arguments.first == "add" }.map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
        let updated = seed.ids.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        try Self.expectExactly(updated + added, in: sandbox)
        for (i, id) in seed.ids.enumerated() where i % 2 == 1 {
            #expect((try sandbox.get(id)["data"] as? [String: Any])?["text"] as? String == "updated \(i)")
        }
        let status = try sandbox.status()
        #expect(integer(status["tombstones"]) == 5)
        let incarnation = try #require(status["incarnation"] as? String)
        #expect(integer((status["vector"] as? [String: Any])?[incarnation]) == 30, "10 imported + 10 changes + 10 adds")
    }
    @Test(.timeLimit(.minutes(3)))
    func concurrentInitOfOneNewFileAgreesOnTheNodeID() throws {
        let directory = TemporaryDirectory("lifesync-e2e-init-race")
        let db = directory.file("fresh.sqlite")
        let runs = try (0..<6).map { i in try BackgroundRun(["init", "--role", "watch", "--db", db], in: directory, label: "init-\(i)") }
        try waitBounded(runs.map(\.process), timeout: 30)
        for run in runs { #expect(run.status == 0, "init exited \(run.status): \(run.stderr)") }
        let printed = Set(runs.map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(printed.count == 1, "every init prints the same node ID: \(printed)")
        #expect(printed.allSatisfy { isIdentifier($0, role: "watch") })
        let status = try LifeSyncBinary.run(["status", "--json", "--db", db])
        #expect(status.status == 0)
        let nodeID = (try parseJSON(status.stdout) as? [String: Any])?["node_id"] as? String
        #expect(nodeID != nil && printed == [nodeID!])
        #expect(try SQLiteShell.run(db, "SELECT count(*) FROM meta WHERE key = 'node_id'").stdout == "1\n")
    }
}
