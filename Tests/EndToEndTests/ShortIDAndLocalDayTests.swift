import Foundation
import Testing
import TestSupport

/// What a person reads fits 80 columns, and what they copy from it works: `list` and `changes`
/// show an entry by the shortest start of its ID no other entry shares, and `get`, `update` and
/// `delete` take that start (refusing one that is unknown or shared). `stats` counts the days
/// the person lives, in their time zone.
@Suite struct ShortIDAndLocalDayTests {
    /// Two entries whose IDs share their first eight digits, and one of another source.
    static func twins(_ sandbox: Sandbox) throws -> (a: String, b: String, other: String) {
        let a = "phone_ce2c2334-37fe-4f2c-b879-40c5f036b99e", b = "phone_ce2c2334-aaaa-4bbb-8ccc-0123456789ab"
        let other = "mac_0badcafe-1234-4567-89ab-cdef01234567"
        let long = String(repeating: "a long day of walking by the river and thinking ", count: 4)
        let lines = [
            #"{"id": "\#(a)", "timestamp": "2026-11-22T08:00:00Z", "category": "note", "data": {"text": "\#(long)", "tags": ["walk", "river"]}}"#,
            #"{"id": "\#(b)", "timestamp": "2026-11-22T09:00:00Z", "category": "mood", "data": {"metric": {"name": "mood", "value": 7, "scale_min": 1, "scale_max": 10}, "text": "\#(long)"}}"#,
            #"{"id": "\#(other)", "timestamp": "2026-11-22T10:00:00Z", "category": "a-category-name-far-too-long-for-a-column", "data": {"text": "hi"}}"#,
        ]
        let file = sandbox.file("twins.ndjson")
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        try #require(try sandbox.run(["import", file]).status == 0)
        return (a, b, other)
    }

    @Test func listLinesFitEightyColumnsWithIDsThatCommandsTake() throws {
        let sandbox = try Sandbox(role: "phone")
        let (a, b, other) = try Self.twins(sandbox)
        let listed = try sandbox.run(["list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3 && lines.allSatisfy { $0.count <= 80 }, "\(lines.map { "\($0.count): \($0)" })")
        // The twins need more than eight digits to be told apart; the mac's entry does not.
        let shown = lines.compactMap { $0.split(separator: " ").last.map(String.init) }
        #expect(shown == ["mac_0badcafe", "phone_ce2c2334-a", "phone_ce2c2334-3"], "\(listed.stdout)")
        #expect(lines[2].contains("#walk") == false && lines[2].contains("…"), "the data is cut to fit: \(lines[2])")

        // Each shown start addresses its entry, and so does the start of the UUID alone.
        let got = try sandbox.run(["get", shown[1]])
        #expect(got.status == 0 && got.stdout.contains(b), "\(got.stdout)\(got.stderr)")
        #expect(try sandbox.run(["get", "0badcafe"]).stdout.contains(other))
        let updated = try sandbox.run(["update", shown[2], "--json", #"{"category": "walk"}"#])
        #expect(updated.status == 0 && updated.stdout == a + "\n", "\(updated.stdout)\(updated.stderr)")

        // A start two entries share is refused, naming them; one no entry has, as not found.
        let ambiguous = try sandbox.run(["delete", "phone_ce2c2334"])
        #expect(ambiguous.status == 1 && ambiguous.stderr.contains(a) && ambiguous.stderr.contains(b)
                && ambiguous.stderr.contains("give more of it"), "\(ambiguous.stderr)")
        let unknown = try sandbox.run(["get", "phone_ffff"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no entry's ID starts with 'phone_ffff'"), "\(unknown.stderr)")
        #expect(try sandbox.entryCount() == 3, "nothing deleted by a refused start")

        let deleted = try sandbox.run(["delete", shown[0]])
        #expect(deleted.status == 0 && deleted.stdout == "deleted \(other)\n", "\(deleted.stdout)\(deleted.stderr)")
        // A whole ID keeps its old answer when nothing has it.
        let gone = try sandbox.run(["get", other])
        #expect(gone.status == 1 && gone.stderr.contains("no entry with id \(other)"), "\(gone.stderr)")
        // A recording is attached to an entry by its shown start too.
        try Data("RIFF".utf8).write(to: URL(fileURLWithPath: sandbox.file("note.m4a")))
        #expect(try sandbox.run(["attach", sandbox.file("note.m4a"), "--entry", shown[2]]).status == 0)
        let attached = try sandbox.run(["recordings", "--json"])
        #expect(attached.stdout.contains(a), "\(attached.stdout)")
        expectRefused(try sandbox.run(["attach", sandbox.file("note.m4a"), "--entry", "phone_ce2c2334"]), status: 1, mentioning: ["give more of it"])

        // The twins remain, still told apart; --ids shows them whole.
        #expect(try sandbox.run(["list", "--ids"]).stdout.split(separator: "\n").map { String($0.split(separator: " ").last ?? "") } == [b, a])
    }

    @Test func changesLinesFitEightyColumns() throws {
        let sandbox = try Sandbox(role: "phone")
        let (a, _, _) = try Self.twins(sandbox)
        let changes = try sandbox.run(["changes"])
        let lines = changes.stdout.split(separator: "\n").map(String.init)
        #expect(changes.status == 0 && lines.count == 3 && lines.allSatisfy { $0.count <= 80 }, "\(lines.map { "\($0.count): \($0)" })")
        #expect(lines.contains { $0.contains("  phone_ce2c2334-3  ") }, "\(changes.stdout)")
        #expect(try sandbox.run(["changes", "--ids"]).stdout.contains("  \(a)  "))
    }

    /// Saturday 23:30 in Auckland (UTC+13 in November) is 10:30 UTC that Saturday, and Sunday
    /// 09:00 there is 20:00 UTC on Saturday: two of the person's days, one UTC day.
    @Test func statsCountsTheDaysOfTheLocalTimeZone() throws {
        let sandbox = try Sandbox(role: "phone")
        try sandbox.add(["--category", "note", "--text", "late", "--timestamp", "2026-11-21T23:30:00+13:00"])
        try sandbox.add(["--category", "mood", "--metric", "mood=6", "--timestamp", "2026-11-22T09:00:00+13:00"])
        func byDay(_ zone: String) throws -> [String: Int] {
            let result = try LifeSyncBinary.run(["stats", "--json", "--db", sandbox.db], environment: ["TZ": zone])
            #expect(result.status == 0, "\(result.stderr)")
            let stats = try #require(try parseJSON(result.stdout) as? [String: Any])
            return (stats["by_day"] as? [String: Any] ?? [:]).compactMapValues { integer($0) }
        }
        #expect(try byDay("Pacific/Auckland") == ["2026-11-21": 1, "2026-11-22": 1])
        #expect(try byDay("UTC") == ["2026-11-21": 2])
        #expect(try byDay("America/New_York") == ["2026-11-21": 2])
        let text = try LifeSyncBinary.run(["stats", "--db", sandbox.db], environment: ["TZ": "Pacific/Auckland"])
        #expect(text.stdout.contains("by day:\n  2026-11-21    1\n  2026-11-22    1\n"), "\(text.stdout)")
        // The days a bare date means and the days counted agree: Sunday in Auckland holds the mood.
        let sunday = try LifeSyncBinary.run(["stats", "--json", "--since", "2026-11-22", "--db", sandbox.db], environment: ["TZ": "Pacific/Auckland"])
        #expect(integer((try parseJSON(sunday.stdout) as? [String: Any])?["total"]) == 1, "\(sunday.stdout)")
    }
}
