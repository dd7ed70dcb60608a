import Foundation
import Testing
import TestSupport

/// `list` with every filter, `export` as CSV and JSON, and `stats`.
@Suite struct ListExportStatsTests {
    /// Five entries one day apart, e1 oldest … e5 newest, imported in a scrambled order.
    struct Journal {
        let sandbox: Sandbox
        var ids: [String: String] = [:]

        init() throws {
            sandbox = try Sandbox(role: "phone")
            let records: [(String, String)] = [
                ("e3", #"{"timestamp": "2026-11-22T08:00:00Z", "category": "work", "data": {"text": "Grocery list for the office", "tags": ["errand", "work"]}}"#),
                ("e1", #"{"timestamp": "2026-11-20T08:00:00Z", "category": "shopping", "source": "shortcut", "data": {"text": "Buy groceries", "tags": ["errand"]}}"#),
                ("e5", #"{"timestamp": "2026-11-24T09:00:00+01:00", "category": "mood", "data": {"text": "GROCERIES delivered", "metric": {"name": "mood", "value": 5, "scale_min": 1, "scale_max": 10}}}"#),
                ("e2", #"{"timestamp": "2026-11-21T08:00:00Z", "category": "mood", "data": {"metric": {"name": "mood", "value": 7, "scale_min": 1, "scale_max": 10}, "tags": ["morning"]}}"#),
                ("e4", #"{"timestamp": "2026-11-23T08:00:00Z", "category": "note", "source": "drafts", "data": {"text": "walked the dog"}}"#),
            ]
            var lines: [String] = []
            for (label, record) in records {
                let id = newEntryID(label == "e1" ? "shortcut" : "phone")
                ids[label] = id
                lines.append(#"{"id": "\#(id)", "# + record.dropFirst())
            }
            let file = sandbox.file("journal.ndjson")
            try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
            let result = try sandbox.run(["import", file])
            try #require(result.status == 0, "import failed: \(result.stderr)")
            try #require(result.stdout == "imported 5 entries\n")
        }

        /// The labels of the entries `list --json arguments…` prints, in order.
        func labels(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
            let byID = Dictionary(uniqueKeysWithValues: ids.map { ($0.value, $0.key) })
            return try sandbox.list(arguments, sourceLocation: sourceLocation).map { byID[$0["id"] as? String ?? ""] ?? "?" }
        }
    }

    @Test func listJSONIsNewestFirst() throws {
        let journal = try Journal()
        #expect(try journal.labels([]) == ["e5", "e4", "e3", "e2", "e1"])
        let timestamps = try journal.sandbox.list().compactMap { $0["timestamp"] as? String }
        #expect(timestamps == ["2026-11-24T08:00:00.000Z", "2026-11-23T08:00:00.000Z", "2026-11-22T08:00:00.000Z",
                               "2026-11-21T08:00:00.000Z", "2026-11-20T08:00:00.000Z"])
        // Entries in the JSON list carry the same snake_case fields as `get`.
        let first = try #require(try journal.sandbox.list(["--limit", "1"]).first)
        #expect(first["recorded_at"] != nil && first["device_id"] != nil)
    }

    @Test(arguments: [
        (["--since", "2026-11-22T00:00:00Z"], ["e5", "e4", "e3"]),
        (["--since", "2026-11-22T08:00:00Z"], ["e5", "e4", "e3"]),
        (["--since", "2026-11-22T09:00:00+01:00"], ["e5", "e4", "e3"]),
        (["--until", "2026-11-21T08:00:00Z"], ["e2", "e1"]),
        (["--since", "2026-11-21T00:00:00Z", "--until", "2026-11-23T12:00:00Z"], ["e4", "e3", "e2"]),
        (["--category", "mood"], ["e5", "e2"]),
        (["--category", "Mood"], []),
        (["--source", "drafts"], ["e4"]),
        (["--source", "shortcut"], ["e1"]),
        (["--source", "phone"], ["e5", "e3", "e2"]),
        (["--tag", "errand"], ["e3", "e1"]),
        (["--tag", "err"], []),
        (["--search", "grocery"], ["e5", "e3", "e1"]),
        (["--search", "GROCERIES"], ["e5", "e3", "e1"]),
        (["--search", "buy"], ["e1"]),
        (["--search", "dog"], ["e4"]),
        (["--search", "zebra"], []),
        (["--category", "mood", "--search", "grocery"], ["e5"]),
        (["--limit", "2"], ["e5", "e4"]),
        (["--limit", "2", "--offset", "2"], ["e3", "e2"]),
        (["--offset", "4"], ["e1"]),
        (["--offset", "5"], []),
        (["--limit", "0"], []),
        (["--tag", "errand", "--limit", "1", "--offset", "1"], ["e1"]),
    ])
    func listFilters(arguments: [String], expected: [String]) throws {
        let journal = try Journal()
        #expect(try journal.labels(arguments) == expected, "list --json \(arguments)")
    }

    @Test func listTextShowsOneLinePerEntry() throws {
        let journal = try Journal()
        // A person reads local time (TZ; UTC in the tests) to the minute, and the ID's short start.
        let result = try journal.sandbox.run(["list", "--category", "mood"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(result.stdout)")
        #expect(lines.first?.hasPrefix("2026-11-24 08:00  mood") == true, "\(result.stdout)")
        #expect(lines.first?.contains("mood 5 (1–10)") == true)
        #expect(lines.first?.contains("\"GROCERIES delivered\"") == true)
        #expect(lines.first?.hasSuffix("  " + journal.ids["e5"]!.prefix("phone_".count + 8)) == true, "\(result.stdout)")
        let whole = try journal.sandbox.run(["list", "--category", "mood", "--ids"])
        #expect(whole.stdout.split(separator: "\n").first?.hasSuffix("  " + journal.ids["e5"]!) == true, "\(whole.stdout)")
        #expect(lines.last?.contains("#morning") == true)

        let none = try journal.sandbox.run(["list", "--search", "zebra"])
        #expect(none.status == 0)
        #expect(none.stdout == "no entries\n")
    }

    @Test func listRefusesBadFilterValues() throws {
        let journal = try Journal()
        expectRefused(try journal.sandbox.run(["list", "--since", "2026-11-22T08:00:00"]), status: 1, mentioning: ["--since", "zone"])
        expectRefused(try journal.sandbox.run(["list", "--until", "yesterday"]), status: 1, mentioning: ["--until"])
        expectRefused(try journal.sandbox.run(["list", "--limit", "ten"]), status: 1, mentioning: ["--limit"])
        expectRefused(try journal.sandbox.run(["list", "--limit", "-1"]), status: 1, mentioning: ["--limit"])
        expectRefused(try journal.sandbox.run(["list", "--offset", "x"]), status: 1, mentioning: ["--offset"])
        expectRefused(try journal.sandbox.run(["list", "--since", "2026-02-30"]), status: 1, mentioning: ["--since", "day out of range"])
        #expect(try journal.sandbox.entryCount() == 5)
    }

    static let csvHeader = ["id", "timestamp", "recorded_at", "source", "device_id", "category", "text",
                            "metric_name", "metric_value", "metric_unit", "metric_scale_min", "metric_scale_max",
                            "latitude", "longitude", "accuracy", "altitude", "place_name", "tags", "extra"]

    @Test func exportCSVHasAHeaderAndQuotesPerRFC4180() throws {
        let sandbox = try Sandbox(role: "mac")
        let tricky = "He said \"hi\", then\nleft"
        let quotedID = try sandbox.add(["--category", "note", "--text", tricky, "--timestamp", "2026-11-20T08:00:00Z"])
        let plainID = try sandbox.add(["--category", "mood", "--metric", "mood=7", "--scale", "1..10", "--unit", "pts",
                                       "--lat", "52.5", "--lon", "13.4", "--place", "Berlin", "--tag", "a", "--tag", "b",
                                       "--timestamp", "2026-11-21T08:00:00Z"])
        let extraID = try sandbox.addJSON(#"{"timestamp": "2026-11-22T08:00:00Z", "data": {"weather": {"sky": "clear", "degrees": 7}, "image_url": "u"}}"#)

        let result = try sandbox.run(["export", "--format", "csv"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"He said \"\"hi\"\", then\nleft\""), "the field is quoted and its quotes doubled: \(result.stdout)")

        let records = parseCSV(result.stdout)
        #expect(records.count == 4, "header and three rows: \(records)")
        #expect(records.first == Self.csvHeader)
        guard records.count == 4 else { return }
        let column = Dictionary(uniqueKeysWithValues: Self.csvHeader.enumerated().map { ($1, $0) })
        let first = records[1], second = records[2]
        #expect(first.count == Self.csvHeader.count && second.count == Self.csvHeader.count)
        #expect(first[column["id"]!] == quotedID, "export is oldest first")
        #expect(first[column["text"]!] == tricky, "the tricky text survives a round trip through CSV")
        #expect(first[column["timestamp"]!] == "2026-11-20T08:00:00.000Z")
        #expect(first[column["source"]!] == "mac" && first[column["device_id"]!] == sandbox.nodeID)
        #expect(second[column["id"]!] == plainID)
        #expect(second[column["category"]!] == "mood")
        #expect(second[column["metric_name"]!] == "mood" && second[column["metric_value"]!] == "7")
        #expect(second[column["metric_unit"]!] == "pts")
        #expect(second[column["metric_scale_min"]!] == "1" && second[column["metric_scale_max"]!] == "10")
        #expect(second[column["latitude"]!] == "52.5" && second[column["longitude"]!] == "13.4")
        #expect(second[column["place_name"]!] == "Berlin")
        #expect(second[column["tags"]!] == #"["a","b"]"#)
        #expect(second[column["text"]!] == "" && second[column["extra"]!] == "")
        // Members of data beyond the document's four, as one canonical JSON object.
        #expect(records[3][column["id"]!] == extraID)
        #expect(records[3][column["extra"]!] == #"{"image_url":"u","weather":{"degrees":7,"sky":"clear"}}"#)
    }

    /// Text with a line break but no comma or quote still needs quoting.
    static func csvTextRoundTrip(_ text: String) throws {
        let sandbox = try Sandbox()
        try sandbox.add(["--text", text, "--timestamp", "2026-11-20T08:00:00Z"])
        try sandbox.add(["--text", "after", "--timestamp", "2026-11-21T08:00:00Z"])
        let result = try sandbox.run(["export", "--format", "csv"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"" + text + "\""), "the field is not quoted: \(result.stdout.debugDescription)")
        let records = parseCSV(result.stdout)
        #expect(records.count == 3, "a line break in a field split the row: \(records)")
        #expect(records.dropFirst().first?[6] == text)
        #expect(records.last?[6] == "after")
    }

    @Test func exportCSVQuotesALoneLineFeedOrCarriageReturn() throws {
        try Self.csvTextRoundTrip("line one\nline two")
        try Self.csvTextRoundTrip("line one\rline two")
    }

    /// `CSVExport.quote` tests Characters for "\n" and "\r", but in Swift "\r\n" is a single
    /// Character equal to neither, so a Windows line break goes out unquoted.
    @Test
    func exportCSVQuotesACRLFLineBreak() throws {
        try Self.csvTextRoundTrip("line one\r\nline two")
    }

    @Test func exportJSONToAFile() throws {
        let sandbox = try Sandbox()
        let older = try sandbox.add(["--text", "older", "--timestamp", "2026-11-20T08:00:00Z"])
        let newer = try sandbox.add(["--text", "newer", "--timestamp", "2026-11-21T08:00:00Z"])
        let out = sandbox.file("export.json")

        let result = try sandbox.run(["export", "--format", "json", "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty, "with --out nothing goes to stdout")
        #expect(result.stderr.contains("exported 2 entries to \(out)"))
        let written = try #require(fileBytes(out), "export did not write \(out)")
        let array = try #require(try JSONSerialization.jsonObject(with: written) as? [[String: Any]])
        #expect(array.compactMap { $0["id"] as? String } == [older, newer])
        #expect(!fileExists(out + ".partial"), "the temporary file is renamed away")

        // Without --out the same JSON goes to stdout; json is the default format.
        let stdout = try sandbox.run(["export"])
        #expect(stdout.status == 0)
        let printed = try #require(try parseJSON(stdout.stdout) as? [[String: Any]])
        #expect(printed.compactMap { $0["id"] as? String } == [older, newer])
        #expect(Data(stdout.stdout.utf8) == written)

        // A CSV file too.
        let csvOut = sandbox.file("export.csv")
        #expect(try sandbox.run(["export", "--format=csv", "--out=\(csvOut)"]).status == 0)
        let csv = try #require(fileBytes(csvOut))
        #expect(parseCSV(String(decoding: csv, as: UTF8.self)).count == 3)
    }

    @Test func exportRefusesAnUnknownFormatOrUnwritableFile() throws {
        let sandbox = try Sandbox()
        try sandbox.add(["--text", "x"])
        expectRefused(try sandbox.run(["export", "--format", "xml"]), status: 1, mentioning: ["--format", "xml"])
        let nowhere = sandbox.file("no/such/dir/out.json")
        expectRefused(try sandbox.run(["export", "--out", nowhere]), status: 1, mentioning: ["cannot write \(nowhere): No such file or directory"])
        #expect(!fileExists(nowhere))
    }

    @Test func exportOfAnEmptyReplica() throws {
        let sandbox = try Sandbox()
        let csv = try sandbox.run(["export", "--format", "csv"])
        #expect(csv.status == 0)
        #expect(parseCSV(csv.stdout) == [Self.csvHeader])
        let json = try sandbox.run(["export"])
        #expect(json.status == 0)
        #expect((try parseJSON(json.stdout) as? [Any])?.isEmpty == true)
    }

    @Test func statsCountsAndAverages() throws {
        let journal = try Journal()
        let json = try journal.sandbox.run(["stats", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let stats = try #require(try parseJSON(json.stdout) as? [String: Any])
        #expect(integer(stats["total"]) == 5)
        let byCategory = try #require(stats["by_category"] as? [String: Any])
        #expect(integer(byCategory["mood"]) == 2 && integer(byCategory["work"]) == 1 && integer(byCategory["shopping"]) == 1)
        let bySource = try #require(stats["by_source"] as? [String: Any])
        #expect(integer(bySource["phone"]) == 3 && integer(bySource["drafts"]) == 1 && integer(bySource["shortcut"]) == 1)
        let byDay = try #require(stats["by_day"] as? [String: Any])
        #expect(byDay.count == 5 && integer(byDay["2026-11-24"]) == 1)
        let mood = try #require((stats["metrics"] as? [String: Any])?["mood"] as? [String: Any])
        #expect(integer(mood["count"]) == 2)
        #expect(double(mood["average"]) == 6 && double(mood["min"]) == 5 && double(mood["max"]) == 7)

        let text = try journal.sandbox.run(["stats"])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("entries: 5\n"))
        for section in ["by category:", "by source:", "by day:", "metrics:"] { #expect(text.stdout.contains(section)) }
        #expect(text.stdout.contains("mood: n=2 avg=6.00 min=5.00 max=7.00"), "\(text.stdout)")
    }
}
