import Foundation
import Testing
import TestSupport

/// Bad command lines and bad entries: the right exit code, stderr naming the problem, and
/// nothing written.
@Suite struct RefusedInputTests {
    /// A replica with one entry, and a check that a refused command left it as it was.
    struct Seeded {
        let sandbox: Sandbox
        let existing: String
        let before: [String: Any]

        init() throws {
            sandbox = try Sandbox()
            existing = try sandbox.add(["--text", "already here", "--timestamp", "2026-11-22T08:00:00Z"])
            before = try sandbox.status()
        }

        /// Entry count and the write vector are what they were.
        func expectNothingWritten(sourceLocation: SourceLocation = #_sourceLocation) throws {
            let after = try sandbox.status(sourceLocation: sourceLocation)
            #expect(integer(after["entries"]) == 1, "entries changed", sourceLocation: sourceLocation)
            #expect(integer(after["tombstones"]) == 0, sourceLocation: sourceLocation)
            let vector = { (s: [String: Any]) in (s["vector"] as? [String: Any] ?? [:]).mapValues { integer($0) ?? -1 } }
            #expect(vector(after) == vector(before), "the write vector moved", sourceLocation: sourceLocation)
            let rows = try sandbox.sqlite("SELECT count(*) FROM entries; SELECT count(*) FROM tombstones")
            #expect(rows.stdout == "1\n0\n", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Command line

    @Test(arguments: [
        (["add", "--bogus", "1"], ["unknown option --bogus", "'add'", "Usage: lifesync add"]),
        (["add", "--text", "x", "--colour", "red"], ["unknown option --colour"]),
        (["list", "-x"], ["unknown option -x"]),
        (["list", "--json=yes"], ["--json takes no value"]),
        (["status", "--verbose"], ["unknown option --verbose", "Usage: lifesync status"]),
        (["get"], ["missing ID", "Usage: lifesync get"]),
        (["delete"], ["missing ID"]),
        (["update", "--json", "{}"], ["missing ID"]),
        (["import"], ["missing FILE|-"]),
        (["get", "a", "b"], ["unexpected argument 'b'"]),
        (["add", "--text", "x", "--text", "y"], ["--text given more than once"]),
        (["add", "--json", "{}", "--text", "x"], ["--json cannot be combined with --text"]),
        (["init"], ["--role is required"]),
        // Options that need each other are the command line's shape, not a value.
        (["add", "--lat", "10"], ["--lat and --lon go together", "Usage: lifesync add"]),
        (["add", "--scale", "1..10"], ["--scale and --unit describe a --metric"]),
        (["add", "--place", "Home"], ["--place", "--lat and --lon"]),
        (["add"], ["nothing to add", "Usage: lifesync add"]),
        (["add", "--timestamp", "2026-11-22T08:00:00Z"], ["nothing to add"]),
        (["import", "--from-sqlite", "a.sqlite", "b.ndjson"], ["not both"]),
    ])
    func usageErrors(arguments: [String], needles: [String]) throws {
        let seeded = try Seeded()
        expectRefused(try seeded.sandbox.run(arguments), status: 2, mentioning: needles)
        try seeded.expectNothingWritten()
    }

    @Test func dbWithoutAValueIsAUsageError() throws {
        let directory = TemporaryDirectory("lifesync-e2e-usage")
        let result = try LifeSyncBinary.run(["status", "--db"], directory: directory.path)
        expectRefused(result, status: 2, mentioning: ["--db needs a value"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func unknownCommand() throws {
        let seeded = try Seeded()
        let result = try seeded.sandbox.run(["frobnicate"])
        expectRefused(result, status: 2, mentioning: ["unknown command 'frobnicate'", "Usage:"])
        try seeded.expectNothingWritten()
    }

    @Test func initWithoutARoleCreatesNoFile() throws {
        let directory = TemporaryDirectory("lifesync-e2e-init")
        let db = directory.file("new.sqlite")
        expectRefused(try LifeSyncBinary.run(["init", "--db", db]), status: 2, mentioning: ["--role"])
        expectRefused(try LifeSyncBinary.run(["init", "--db", db, "--role", "laptop"]), status: 1, mentioning: ["--role must be watch, phone or mac", "laptop"])
        #expect(!fileExists(db))
    }

    @Test func initWithAnotherRoleIsRefused() throws {
        let seeded = try Seeded()
        expectRefused(try seeded.sandbox.run(["init", "--role", "mac"]), status: 1,
                      mentioning: ["already initialised as phone", seeded.sandbox.nodeID])
        #expect(try seeded.sandbox.status()["role"] as? String == "phone")
        // The same role again is fine: the same node ID, nothing written.
        let again = try seeded.sandbox.run(["init", "--role", "phone"])
        #expect(again.status == 0 && again.stdout == seeded.sandbox.nodeID + "\n")
        try seeded.expectNothingWritten()
    }

    // MARK: - Entries

    @Test(arguments: [
        (#"{"category": "note", "colour": "red"}"#, ["colour", "unknown field"]),
        (#"{"data": {"txt": "typo"}}"#, ["data.txt", "unknown field"]),
        (#"{"data": {"metric": {"name": "mood", "value": 11, "scale_min": 1, "scale_max": 10}}}"#, ["data.metric.value", "above scale_max"]),
        (#"{"data": {"metric": {"name": "mood", "value": 0, "scale_min": 1, "scale_max": 10}}}"#, ["data.metric.value", "below scale_min"]),
        (#"{"data": {"metric": {"name": "mood", "value": 5, "scale_min": 10, "scale_max": 1}}}"#, ["data.metric.scale_min"]),
        (#"{"data": {"metric": {"name": "mood"}}}"#, ["data.metric.value", "is required"]),
        (#"{"timestamp": "2026-11-22T08:00:00"}"#, ["timestamp", "zone"]),
        (#"{"timestamp": "2026-02-30T08:00:00Z"}"#, ["timestamp", "day out of range"]),
        (#"{"timestamp": "yesterday"}"#, ["timestamp"]),
        (#"{"recorded_at": 12}"#, ["recorded_at", "must be a string"]),
        (#"{"data": {"location": {"latitude": 91, "longitude": 0}}}"#, ["data.location.latitude", "-90…90"]),
        (#"{"data": {"location": {"latitude": 0, "longitude": 180.5}}}"#, ["data.location.longitude"]),
        (#"{"data": {"location": {"latitude": 1, "longitude": 1, "accuracy": -3}}}"#, ["data.location.accuracy"]),
        (#"{"data": {"tags": "one"}}"#, ["data.tags", "array"]),
        (#"{"data": {"tags": ["ok", 5]}}"#, ["data.tags[1]"]),
        (#"{"category": ""}"#, ["category", "empty"]),
        (#"{"id": "not-an-id"}"#, ["id", "must be a UUID or {prefix}_{uuid-v4}"]),
        (#"{"id": "phone_550e8400-e29b-11d4-a716-446655440000"}"#, ["id", "must be a UUID or {prefix}_{uuid-v4}"]),
        (#"["a list"]"#, ["must be a JSON object"]),
        (#"{"category": "note","#, ["--json"]),
        (#"{"category": note}"#, ["--json"]),
        ("", ["--json"]),
    ])
    func addJSONRefusals(json: String, needles: [String]) throws {
        let seeded = try Seeded()
        expectRefused(try seeded.sandbox.run(["add", "--json", json]), status: 1, mentioning: needles)
        try seeded.expectNothingWritten()
    }

    @Test func addJSONFromStandardInputRefusals() throws {
        let seeded = try Seeded()
        expectRefused(try seeded.sandbox.run(["add", "--json", "-"], input: #"{"data": {"location": {"latitude": 91, "longitude": 0}}}"#),
                      status: 1, mentioning: ["data.location.latitude"])
        expectRefused(try seeded.sandbox.run(["add", "--json", "-"], input: "{not json"), status: 1, mentioning: ["--json"])
        expectRefused(try seeded.sandbox.run(["add", "--json", "-"], input: ""), status: 1, mentioning: ["--json"])
        let huge = #"{"data": {"text": "\#(String(repeating: "a", count: 65_537))"}}"#
        expectRefused(try seeded.sandbox.run(["add", "--json", "-"], input: huge), status: 1, mentioning: ["data.text", "longer than 65536 bytes"])
        try seeded.expectNothingWritten()
    }

    @Test(arguments: [
        (["--lat", "91", "--lon", "0"], ["data.location.latitude"]),
        (["--lat", "north", "--lon", "1"], ["--lat", "not a number"]),
        (["--metric", "mood=11", "--scale", "1..10"], ["data.metric.value", "above scale_max"]),
        (["--metric", "mood"], ["--metric", "NAME=VALUE"]),
        (["--metric", "mood=7", "--scale", "1-10"], ["--scale", "MIN..MAX"]),
        (["--timestamp", "2026-11-22T08:00"], ["timestamp", "zone"]),
        (["--timestamp", "2026-11-22 08:00:00+25:00"], ["timestamp"]),
        (["--category", ""], ["category", "empty"]),
        (["--tag", " "], ["data.tags[0]", "empty"]),
    ])
    func addFlagRefusals(arguments: [String], needles: [String]) throws {
        let seeded = try Seeded()
        expectRefused(try seeded.sandbox.run(["add"] + arguments), status: 1, mentioning: needles)
        try seeded.expectNothingWritten()
    }

    // MARK: - Import

    static func ndjson(_ count: Int, bad: [Int: String] = [:]) -> String {
        (1...count).map { line in
            bad[line] ?? #"{"timestamp": "2026-11-22T08:\#(String(format: "%02d", line)):00Z", "category": "note", "data": {"text": "line \#(line)"}}"#
        }.joined(separator: "\n") + "\n"
    }

    @Test(arguments: [
        (#"{"timestamp": "2026-11-22T08:00:00Z", "colour": "red"}"#, ["line 3", "colour", "unknown field"]),
        (#"{"timestamp": "2026-11-22T08:00:00Z", "data": {"metric": {"name": "m", "value": 11, "scale_max": 10}}}"#, ["line 3", "data.metric.value"]),
        (#"{"category": "note"}"#, ["line 3", "timestamp", "is required"]),
        (#"{"timestamp": "2026-11-22T08:00:00", "category": "note"}"#, ["line 3", "timestamp", "zone"]),
        (#"{"timestamp": "2026-11-22T08:00:00Z", "data": {"location": {"latitude": 91, "longitude": 0}}}"#, ["line 3", "data.location.latitude"]),
        (#"{"timestamp": "2026-11-22T08:00:00Z", "#, ["line 3"]),
        ("not json at all", ["line 3"]),
    ])
    func importNDJSONWithABadThirdLineWritesNothing(badLine: String, needles: [String]) throws {
        let seeded = try Seeded()
        let file = seeded.sandbox.file("bad.ndjson")
        try Self.ndjson(5, bad: [3: badLine]).write(toFile: file, atomically: true, encoding: .utf8)
        let result = try seeded.sandbox.run(["import", file])
        expectRefused(result, status: 1, mentioning: needles)
        #expect(!result.stderr.contains("line 1:") && !result.stderr.contains("line 2:") && !result.stderr.contains("line 4"))
        try seeded.expectNothingWritten()
    }

    @Test func importLineNumbersCountBlankLines() throws {
        let seeded = try Seeded()
        let good = #"{"timestamp": "2026-11-22T08:00:00Z"}"#
        let text = [good, "", #"{"timestamp": "2026-11-22T08:00:00Z", "oops": 1}"#, good].joined(separator: "\n")
        let result = try seeded.sandbox.run(["import", "-"], input: text)
        expectRefused(result, status: 1, mentioning: ["line 3", "oops"])
        try seeded.expectNothingWritten()
    }

    @Test func importJSONArrayWithABadRecordNamesItsIndex() throws {
        let seeded = try Seeded()
        let file = seeded.sandbox.file("bad.json")
        let records = [
            #"{"timestamp": "2026-11-22T08:00:00Z", "data": {"text": "zero"}}"#,
            #"{"timestamp": "2026-11-22T09:00:00Z", "data": {"text": "one"}}"#,
            #"{"timestamp": "2026-11-22T10:00:00Z", "data": {"location": {"latitude": 91, "longitude": 0}}}"#,
            #"{"timestamp": "2026-11-22T11:00:00Z", "data": {"text": "three"}}"#,
        ]
        try ("[\n" + records.joined(separator: ",\n") + "\n]\n").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try seeded.sandbox.run(["import", file])
        expectRefused(result, status: 1, mentioning: ["[2]", "data.location.latitude"])
        #expect(!result.stderr.contains("[0]") && !result.stderr.contains("[1]") && !result.stderr.contains("[3]"))
        try seeded.expectNothingWritten()

        // A malformed array and an array of non-objects are refused too.
        expectRefused(try seeded.sandbox.run(["import", "-"], input: "[{\"timestamp\": \"2026-11-22T08:00:00Z\"},"), status: 1, mentioning: ["import"])
        expectRefused(try seeded.sandbox.run(["import", "-"], input: #"[{"timestamp": "2026-11-22T08:00:00Z"}, 5]"#), status: 1, mentioning: ["[1]"])
        try seeded.expectNothingWritten()
    }

    /// Three complete records (recorded_at included) with their IDs.
    static func completeRecords() -> (ids: [String], text: String) {
        let ids = (0..<3).map { _ in newEntryID("drafts") }
        let text = ids.enumerated().map { i, id in
            #"{"id": "\#(id)", "timestamp": "2026-11-2\#(i)T08:00:00Z", "recorded_at": "2026-11-2\#(i)T08:00:05Z", "#
                + #""source": "drafts", "data": {"text": "stdin \#(i)"}}"#
        }.joined(separator: "\n")
        return (ids, text)
    }

    @Test func importFromStandardInput() throws {
        let seeded = try Seeded()
        let (ids, text) = Self.completeRecords()
        let result = try seeded.sandbox.run(["import", "-"], input: text)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "imported 3 entries\n")
        #expect(try seeded.sandbox.entryCount() == 4)
        for (i, id) in ids.enumerated() {
            let entry = try seeded.sandbox.get(id)
            #expect((entry["data"] as? [String: Any])?["text"] as? String == "stdin \(i)")
            #expect(entry["source"] as? String == "drafts")
            #expect(entry["recorded_at"] as? String == "2026-11-2\(i)T08:00:05.000Z")
        }

        // Importing the same complete records again is harmless.
        let again = try seeded.sandbox.run(["import", "-"], input: text)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == "imported 0 entries (3 already present)\n")
        #expect(try seeded.sandbox.entryCount() == 4)

        // The same ID with other content leaves the entry as it is here and takes the rest: an
        // import adds entries, never overwrites one.
        let fresh = newEntryID("drafts")
        let differing = #"{"id": "\#(fresh)", "timestamp": "2026-11-29T08:00:00Z"}"# + "\n"
            + #"{"id": "\#(ids[1])", "timestamp": "2026-11-21T08:00:00Z", "data": {"text": "changed"}}"#
        let kept = try seeded.sandbox.run(["import", "-"], input: differing)
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.stdout == "imported 1 entries (1 already here with other content, left as they are: \(ids[1]))\n")
        #expect((try seeded.sandbox.get(ids[1])["data"] as? [String: Any])?["text"] as? String == "stdin 1")
        #expect(try seeded.sandbox.entryCount() == 5)

        // One ID twice in one input with different content is refused, and nothing is written.
        let twice = newEntryID("drafts")
        let first = #"{"id": "\#(twice)", "timestamp": "2026-11-29T08:00:00Z", "data": {"text": "a"}}"#
        let second = #"{"id": "\#(twice)", "timestamp": "2026-11-29T08:00:00Z", "data": {"text": "b"}}"#
        expectRefused(try seeded.sandbox.run(["import", "-"], input: first + "\n" + second), status: 1, mentioning: ["line 2", twice, "also at line 1"])
        expectRefused(try seeded.sandbox.run(["get", twice]), status: 1, mentioning: ["no entry with id"])
        #expect(try seeded.sandbox.entryCount() == 5)
    }

    /// `import --help` says "Entries already present unchanged are skipped", yet importing the same
    /// file twice fails when its records leave `recorded_at` out (as NDJSON from other tools does):
    /// the second run fills `recorded_at` with a new "now", so every record counts as changed.
    @Test
    func reimportingRecordsWithoutRecordedAtIsHarmless() throws {
        let seeded = try Seeded()
        let id = newEntryID("drafts")
        let text = #"{"id": "\#(id)", "timestamp": "2026-11-22T08:00:00Z", "data": {"text": "from drafts"}}"#
        let first = try seeded.sandbox.run(["import", "-"], input: text)
        #expect(first.status == 0 && first.stdout == "imported 1 entries\n")
        let again = try seeded.sandbox.run(["import", "-"], input: text)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == "imported 0 entries (1 already present)\n")
        #expect(try seeded.sandbox.entryCount() == 2)
    }

    @Test func importNDJSONWithWindowsLineEndingsAndAJSONArray() throws {
        let seeded = try Seeded()
        let crlf = #"{"timestamp": "2026-11-22T08:00:00Z", "data": {"text": "crlf one"}}"# + "\r\n"
            + #"{"timestamp": "2026-11-22T09:00:00Z", "data": {"text": "crlf two"}}"# + "\r\n\r\n"
        let file = seeded.sandbox.file("windows.ndjson")
        try crlf.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try seeded.sandbox.run(["import", file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "imported 2 entries\n")
        #expect(try seeded.sandbox.list(["--search", "crlf"]).count == 2)

        let array = "  [\n" + #"{"timestamp": "2026-11-23T08:00:00Z", "category": "from-array"}"# + ",\n"
            + #"{"timestamp": "2026-11-23T09:00:00Z", "category": "from-array"}"# + "]\n"
        let fromArray = try seeded.sandbox.run(["import", "-"], input: array)
        #expect(fromArray.status == 0, "\(fromArray.stderr)")
        #expect(fromArray.stdout == "imported 2 entries\n")
        #expect(try seeded.sandbox.list(["--category", "from-array"]).count == 2)
        #expect(try seeded.sandbox.entryCount() == 5)
    }

    @Test func importOfAMissingFile() throws {
        let seeded = try Seeded()
        let missing = seeded.sandbox.file("nope.ndjson")
        expectRefused(try seeded.sandbox.run(["import", missing]), status: 1, mentioning: ["cannot read \(missing): No such file or directory"])
        expectRefused(try seeded.sandbox.run(["import", seeded.sandbox.directory.path]), status: 1, mentioning: ["it is a directory"])
        try seeded.expectNothingWritten()
    }

    @Test func importOfAnEmptyInputImportsNothing() throws {
        let seeded = try Seeded()
        let result = try seeded.sandbox.run(["import", "-"], input: "\n\n")
        expectNoCrash(result)
        #expect(result.status == 0)
        #expect(result.stdout == "imported 0 entries\n")
        try seeded.expectNothingWritten()
    }
}
