import Foundation
import Testing
import TestSupport

/// `import` of LifeLog data as it is: the backend's SQLite file (`--from-sqlite`), bare
/// uppercase UUIDs, `created_at` and `synced`, and records without IDs; re-importing any of it
/// writes nothing.
@Suite struct LifeLogImportTests {
    static let upper = "550E8400-E29B-41D4-A716-446655440000"
    static let drafts = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"

    /// The LifeLog document's schema.sql, as its backend creates it.
    static let schema = """
        CREATE TABLE IF NOT EXISTS entries (
            id TEXT PRIMARY KEY, timestamp TEXT NOT NULL, recorded_at TEXT NOT NULL, source TEXT NOT NULL,
            device_id TEXT NOT NULL, category TEXT, data TEXT NOT NULL, created_at TEXT DEFAULT (datetime('now')));
        CREATE INDEX IF NOT EXISTS idx_timestamp ON entries(timestamp DESC);
        CREATE TABLE IF NOT EXISTS api_keys (key_hash TEXT PRIMARY KEY, name TEXT NOT NULL,
            created_at TEXT DEFAULT (datetime('now')), last_used TEXT);
        """

    /// Three rows the way the backend stores them: the iPhone app's, a Drafts action's, and
    /// one whose ID is NULL (SQLite lets a TEXT primary key be NULL).
    static let rows = """
        INSERT INTO entries (id, timestamp, recorded_at, source, device_id, category, data) VALUES
          ('\(upper)', '2026-03-01T07:30:00Z', '2026-03-01T07:30:02Z', 'iphone', 'A1B2', 'mood',
           '{"metric":{"name":"mood","value":7,"scale_min":1,"scale_max":10},"text":"slept well"}'),
          ('\(drafts)', '2026-03-01T09:15:00.000Z', '2026-03-01T09:15:00.000Z', 'drafts', 'iPad', 'note',
           '{"text":"Buy groceries","tags":["errand","home"]}'),
          (NULL, '2026-03-02T12:00:00+01:00', '2026-03-02T11:00:00Z', 'shortcut', 'iPhone', 'location',
           '{"location":{"latitude":52.52,"longitude":13.4,"place_name":"Berlin"}}');
        """

    /// A backend database with `sql` run after the schema.
    static func backend(in sandbox: Sandbox, _ sql: String = rows, schema: String = schema) throws -> String {
        let path = sandbox.file("lifelog-\(UUID().uuidString.prefix(8)).sqlite")
        let made = try SQLiteShell.run(path, schema + sql)
        try #require(made.status == 0, "sqlite3 failed: \(made.stderr)")
        return path
    }

    @Test func theBackendsEntriesGoInOnceWithTheirIDs() throws {
        let sandbox = try Sandbox(role: "phone")
        let file = try Self.backend(in: sandbox)
        let before = try #require(fileBytes(file))
        let first = try sandbox.run(["import", "--from-sqlite", file])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "imported 3 entries\n")
        #expect(fileBytes(file) == before, "the backend file was changed")

        let mood = try sandbox.get("lifelog_" + Self.upper.lowercased())
        #expect(mood["source"] as? String == "iphone" && mood["recorded_at"] as? String == "2026-03-01T07:30:02.000Z")
        #expect(((mood["data"] as? [String: Any])?["metric"] as? [String: Any])?["name"] as? String == "mood")
        #expect(try sandbox.get("lifelog_" + Self.drafts.lowercased())["category"] as? String == "note")
        let berlin = try #require(try sandbox.list(["--category", "location"]).first)
        #expect((berlin["id"] as? String)?.hasPrefix("lifelog_") == true && berlin["timestamp"] as? String == "2026-03-02T11:00:00.000Z")

        let again = try sandbox.run(["import", "--from-sqlite", file])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == "imported 0 entries (3 already present)\n")
        #expect(try sandbox.entryCount() == 3)

        // The same entry as JSON (the app's encoding, with its `synced` flag) is the same entry.
        let json = #"{"id": "\#(Self.upper)", "timestamp": "2026-03-01T07:30:00Z", "recorded_at": "2026-03-01T07:30:02Z", "#
            + #""source": "iphone", "device_id": "A1B2", "category": "mood", "synced": true, "created_at": "2026-03-01 07:30:03", "#
            + #""data": {"text": "slept well", "metric": {"name": "mood", "value": 7, "scale_min": 1, "scale_max": 10}}}"#
        let asJSON = try sandbox.run(["import", "-"], input: json)
        #expect(asJSON.stdout == "imported 0 entries (1 already present)\n", "\(asJSON.stderr)")
    }

    /// Two nodes importing the same file hold the same entries under the same IDs, so syncing
    /// them later adds nothing twice.
    @Test func twoNodesGiveTheSameIDs() throws {
        let phone = try Sandbox(role: "phone")
        let watch = try Sandbox(role: "watch")
        let file = try Self.backend(in: phone)
        for node in [phone, watch] { #expect(try node.run(["import", "--from-sqlite", file]).status == 0) }
        let ids = { (node: Sandbox) in Set(try node.list().compactMap { $0["id"] as? String }) }
        #expect(try ids(phone).count == 3)
        #expect(try ids(phone) == (try ids(watch)))
    }

    @Test func recordsWithoutIDsAreRecognisedByContent() throws {
        let sandbox = try Sandbox(role: "mac")
        let text = (1...3).map { #"{"timestamp": "2026-03-0\#($0)T08:00:00Z", "category": "note", "data": {"text": "day \#($0)"}}"# }
            .joined(separator: "\n")
        #expect(try sandbox.run(["import", "-"], input: text).stdout == "imported 3 entries\n")
        let again = try sandbox.run(["import", "-"], input: text)
        #expect(again.stdout == "imported 0 entries (3 already present)\n", "\(again.stderr)")
        #expect(try sandbox.entryCount() == 3)
    }

    @Test func deletedEntriesAreNotRestored() throws {
        let sandbox = try Sandbox(role: "phone")
        let file = try Self.backend(in: sandbox)
        #expect(try sandbox.run(["import", "--from-sqlite", file]).status == 0)
        let id = "lifelog_" + Self.upper.lowercased()
        #expect(try sandbox.run(["delete", id]).status == 0)
        let again = try sandbox.run(["import", "--from-sqlite", file, "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        let report = try #require(try parseJSON(again.stdout) as? [String: Any])
        #expect(integer(report["imported"]) == 0 && integer(report["already_present"]) == 2)
        #expect(report["deleted_here"] as? [String] == [id])
        #expect(try sandbox.entryCount() == 2)
    }

    /// One bad row refuses the whole file (as a bad line refuses an NDJSON file), naming the row,
    /// its ID and the field.
    @Test(arguments: [
        (#"('\#(drafts)', '2026-03-01T09:15:00Z', '2026-03-01T09:15:00Z', 'drafts', 'iPad', 'mood', '{"metric":{"name":"mood","value":11,"scale_max":10}}')"#,
         ["row 2 (id \(drafts))", "data.metric.value", "above scale_max"]),
        (#"('\#(drafts)', '2026-03-01T09:15:00Z', '2026-03-01T09:15:00Z', 'drafts', 'iPad', 'note', '{"text": "unterminated')"#,
         ["row 2 (id \(drafts))", "data: not JSON"]),
        (#"('\#(drafts)', '2026-03-01 09:15:00', '2026-03-01T09:15:00Z', 'drafts', 'iPad', 'note', '{}')"#,
         ["row 2", "timestamp", "zone"]),
        (#"('draft-1', '2026-03-01T09:15:00Z', '2026-03-01T09:15:00Z', 'drafts', 'iPad', 'note', '{}')"#,
         ["row 2 (id draft-1)", "id: must be a UUID"]),
        (#"('\#(drafts)', '2026-03-01T09:15:00Z', '2026-03-01T09:15:00Z', 'drafts', 'iPad', 'note', x'00')"#,
         ["row 2", "data: a blob"]),
    ])
    func aBadRowRefusesTheWholeFile(row: String, needles: [String]) throws {
        let sandbox = try Sandbox(role: "phone")
        let first = #"('\#(Self.upper)', '2026-03-01T07:30:00Z', '2026-03-01T07:30:02Z', 'iphone', 'A1B2', 'mood', '{"text":"fine"}')"#
        let file = try Self.backend(in: sandbox, "INSERT INTO entries (id, timestamp, recorded_at, source, device_id, category, data) VALUES \(first), \(row);")
        expectRefused(try sandbox.run(["import", "--from-sqlite", file]), status: 1, mentioning: needles)
        #expect(try sandbox.entryCount() == 0)
    }

    @Test func filesThatAreNotTheBackendsAreRefused() throws {
        let sandbox = try Sandbox(role: "phone")
        let missing = sandbox.file("nope.sqlite")
        expectRefused(try sandbox.run(["import", "--from-sqlite", missing]), status: 1, mentioning: ["cannot read \(missing): No such file or directory"])
        let text = sandbox.file("notes.txt")
        try String(repeating: "not a database\n", count: 100).write(toFile: text, atomically: true, encoding: .utf8)
        expectRefused(try sandbox.run(["import", "--from-sqlite", text]), status: 1, mentioning: ["\(text) is not an SQLite database"])
        let other = try Self.backend(in: sandbox, "", schema: "CREATE TABLE notes (id TEXT);")
        expectRefused(try sandbox.run(["import", "--from-sqlite", other]), status: 1, mentioning: ["has no entries table"])
        let extra = try Self.backend(in: sandbox, "ALTER TABLE entries ADD COLUMN image_url TEXT;")
        expectRefused(try sandbox.run(["import", "--from-sqlite", extra]), status: 1, mentioning: ["column image_url"])
        expectRefused(try sandbox.run(["import", "--from-sqlite", extra, "x.ndjson"]), status: 2, mentioning: ["not both"])
        #expect(try sandbox.entryCount() == 0)
    }
}
