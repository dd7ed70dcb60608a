import Foundation
import Testing
import TestSupport

/// The command line's shared rules: bare dates and the same filters for list, export and stats,
/// `--json` wherever a command reports, no empty entries, one exit-code rule, `--version`,
/// reasons for unreadable files, and CSV a spreadsheet cannot misread.
@Suite struct CLIRulesTests {
    typealias Journal = ListExportStatsTests.Journal

    /// e1 … e5 are 2026-11-20 … 2026-11-24 at 08:00 UTC.
    @Test(arguments: [
        (["--since", "2026-11-22"], ["e5", "e4", "e3"]),
        (["--until", "2026-11-22"], ["e3", "e2", "e1"]),
        (["--since", "2026-11-22", "--until", "2026-11-22"], ["e3"]),
        (["--until", "2026-11-21T08:00:00Z"], ["e2", "e1"]),
        (["--since", "2026-11-25"], []),
    ])
    func bareDatesAreWholeUTCDays(arguments: [String], expected: [String]) throws {
        #expect(try Journal().labels(arguments) == expected)
    }

    @Test func exportAndStatsTakeTheListsFilters() throws {
        let journal = try Journal()
        let filters = ["--since", "2026-11-21", "--until", "2026-11-23", "--tag", "errand"]
        #expect(try journal.labels(filters) == ["e3"])
        let export = try journal.sandbox.run(["export"] + filters)
        #expect(export.status == 0, "\(export.stderr)")
        let exported = try #require(try parseJSON(export.stdout) as? [[String: Any]])
        #expect(exported.compactMap { $0["id"] as? String } == [journal.ids["e3"]])

        let csv = try journal.sandbox.run(["export", "--format", "csv", "--category", "mood"])
        #expect(parseCSV(csv.stdout).dropFirst().map { $0[0] } == [journal.ids["e2"], journal.ids["e5"]])

        let stats = try journal.sandbox.run(["stats", "--json", "--category", "mood", "--until", "2026-11-21"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let counted = try #require(try parseJSON(stats.stdout) as? [String: Any])
        #expect(integer(counted["total"]) == 1)
        #expect((counted["by_day"] as? [String: Any])?.keys.sorted() == ["2026-11-21"])
        let mood = try #require((counted["metrics"] as? [String: Any])?["mood"] as? [String: Any])
        #expect(integer(mood["count"]) == 1 && double(mood["average"]) == 7)
        let searched = try journal.sandbox.run(["stats", "--search", "grocery"])
        #expect(searched.stdout.hasPrefix("entries: 3\n"), "\(searched.stdout)")
        expectRefused(try journal.sandbox.run(["stats", "--since", "soon"]), status: 1, mentioning: ["--since", "YYYY-MM-DD"])
    }

    /// A merge patch's null removes a member; for a required field that used to mean its default
    /// (`"timestamp": null` moved the entry to now). It is refused, naming the field, and nothing
    /// is written.
    @Test func aPatchCannotRemoveARequiredField() throws {
        let journal = try Journal()
        let id = try #require(journal.ids["e1"])
        let before = try journal.sandbox.run(["get", id]).stdout
        for field in ["timestamp", "source", "device_id", "data"] {
            let refused = try journal.sandbox.run(["update", id, "--json", "{\"\(field)\": null}"])
            #expect(refused.status == 1 && refused.stderr.contains("\(field): is required; null would remove it"), "\(field): \(refused.stderr)")
        }
        #expect(try journal.sandbox.run(["get", id]).stdout == before)
    }

    /// `lifesync --db x.sqlite list`: the replica may be named before the command too.
    @Test func theReplicaMayBeNamedBeforeTheCommand() throws {
        let journal = try Journal()
        for arguments in [["--db", journal.sandbox.db, "list", "--json"], ["--db=" + journal.sandbox.db, "list", "--json"]] {
            let listed = try LifeSyncBinary.run(arguments)
            #expect(listed.status == 0, "\(arguments): \(listed.stderr)")
            #expect((try? parseJSON(listed.stdout) as? [Any])??.count == 5, "\(arguments): \(listed.stdout)")
        }
    }

    @Test func getTakesJSON() throws {
        let sandbox = try Sandbox()
        let id = try sandbox.add(["--text", "hello"])
        let plain = try sandbox.run(["get", id])
        let json = try sandbox.run(["get", id, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout == plain.stdout)
        #expect((try parseJSON(json.stdout) as? [String: Any])?["id"] as? String == id)
    }

    @Test func addRefusesAnEntryOfNothing() throws {
        let sandbox = try Sandbox()
        expectRefused(try sandbox.run(["add", "--json", "{}"]), status: 1, mentioning: ["no content"])
        expectRefused(try sandbox.run(["add", "--json", #"{"data": {}, "timestamp": "2026-11-22T08:00:00Z"}"#]), status: 1, mentioning: ["no content"])
        #expect(try sandbox.entryCount() == 0)
        try sandbox.add(["--category", "mood"])
        try sandbox.add(["--tag", "x"])
        #expect(try sandbox.entryCount() == 2)
    }

    static let exitCases: [([String], Int32)] = [
        (["list", "--limit", "ten"], 1), (["list", "--since", "soon"], 1), (["export", "--format", "xml"], 1),
        (["init", "--role", "tablet"], 1), (["add", "--lat", "north", "--lon", "1"], 1), (["add", "--metric", "mood"], 1),
        (["simulate", "--nodes", "phone,tablet"], 1), (["simulate", "--plant", "nothing"], 1), (["simulate", "--runs", "0"], 1),
        (["list", "--colour"], 2), (["list", "--limit"], 2), (["get"], 2), (["add", "--lat", "1"], 2), (["init"], 2),
    ]

    /// One rule: 2 when the command line cannot be understood, 1 when a value is refused.
    @Test(arguments: exitCases)
    func exitCodesFollowOneRule(arguments: [String], status: Int32) throws {
        let sandbox = try Sandbox()
        // `simulate` keeps no replica, so it takes no --db.
        let result = arguments[0] == "simulate" ? try LifeSyncBinary.run(arguments) : try sandbox.run(arguments)
        expectRefused(result, status: status, mentioning: [arguments.count > 1 ? arguments[1] : arguments[0]])
    }

    @Test func versionNamesTheProtocol() throws {
        for form in ["--version", "version"] {
            let result = try LifeSyncBinary.run([form])
            #expect(result.status == 0)
            #expect(result.stdout.hasPrefix("lifesync ") && result.stdout.hasSuffix(" (sync protocol 2)\n"), "\(result.stdout)")
        }
    }

    @Test func unreadableFilesSayWhy() throws {
        let sandbox = try Sandbox()
        let missing = sandbox.file("none.json")
        expectRefused(try LifeSyncBinary.run(["simulate", "--scenario", missing]), status: 1,
                      mentioning: ["cannot read \(missing): No such file or directory"])
        let locked = sandbox.file("locked.ndjson")
        try "{}".write(toFile: locked, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: locked)
        let denied = try sandbox.run(["import", locked])
        // Root reads any file; everyone else is told why not.
        if getuid() != 0 { expectRefused(denied, status: 1, mentioning: ["cannot read \(locked): Permission denied"]) }
    }

    /// Tags are a JSON array in their cell, so `a;b` is one tag; text a spreadsheet could run as
    /// a formula starts with an apostrophe, honest text starting with a sign keeps its form;
    /// numbers stay numbers, negative ones too.
    @Test func csvIsUnambiguousAndInert() throws {
        let sandbox = try Sandbox()
        try sandbox.add(["--text", "=HYPERLINK(\"http://x\",\"y\")", "--tag", "a;b", "--tag", "c", "--category", "@cmd",
                         "--lat", "-33.9", "--lon", "-70.5", "--place", "+61", "--timestamp", "2026-11-20T08:00:00Z"])
        try sandbox.add(["--text", "-1+1", "--metric", "delta=-2", "--unit", "\tx", "--timestamp", "2026-11-21T08:00:00Z"])
        try sandbox.add(["--text", "\rcr", "--tag", "plain", "--timestamp", "2026-11-22T08:00:00Z"])
        try sandbox.add(["--json", #"{"timestamp": "2026-11-23T08:00:00Z", "category": "-2+cmd|' /C calc'!A0", "#
                         + #""data": {"text": "- buy milk", "location": {"latitude": 1, "longitude": 2, "place_name": "-5 degrees"}}}"#])
        let result = try sandbox.run(["export", "--format", "csv"])
        let rows = parseCSV(result.stdout)
        try #require(rows.count == 5, "\(rows)")
        let column = Dictionary(uniqueKeysWithValues: ListExportStatsTests.csvHeader.enumerated().map { ($1, $0) })
        let (first, second, third) = (rows[1], rows[2], rows[3])
        #expect(first[column["text"]!] == "'=HYPERLINK(\"http://x\",\"y\")")
        #expect(first[column["tags"]!] == #"["a;b","c"]"#)
        #expect(first[column["category"]!] == "'@cmd" && first[column["place_name"]!] == "+61")
        #expect(first[column["latitude"]!] == "-33.9" && first[column["longitude"]!] == "-70.5")
        #expect(second[column["text"]!] == "'-1+1" && second[column["metric_value"]!] == "-2" && second[column["metric_unit"]!] == "'\tx")
        #expect(second[column["tags"]!] == "")
        #expect(third[column["text"]!] == "'\rcr" && third[column["tags"]!] == #"["plain"]"#)
        // Honest text starting with a sign keeps its form; a DDE payload behind one does not.
        let fourth = rows[4]
        #expect(fourth[column["text"]!] == "- buy milk" && fourth[column["place_name"]!] == "-5 degrees")
        #expect(fourth[column["category"]!] == "'-2+cmd|' /C calc'!A0")
    }
}
