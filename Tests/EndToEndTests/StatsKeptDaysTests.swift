import Foundation
import LifeSync
import Testing
import TestSupport

/// `lifesync stats` over the whole journal counts local days from the counts it keeps per UTC
/// hour; with a filter it reads the entries. Both must give every entry the same day in zones
/// whose offsets change within a day (daylight saving: Berlin's at a whole UTC hour, St. John's
/// at half past one, Lord Howe's by half an hour) or split UTC hours (India's, half an hour off).
/// POSIX zone rules, so the test needs no time zone database.
@Suite struct StatsKeptDaysTests {
    static let zones = ["CET-1CEST,M3.5.0,M10.5.0/3", "NST3:30NDT,M3.2.0,M11.1.0", "LHST-10:30LHDT-11,M10.1.0,M4.1.0", "IST-5:30", "UTC0"]

    /// An entry every ten minutes over three days around each change of offset.
    static func entries() -> String {
        let windows = ["2026-03-07", "2026-03-28", "2026-10-02", "2026-10-24"]
        var lines: [String] = []
        for (w, first) in windows.enumerated() {
            let start = Int64(try! Timestamp(iso8601: first + "T00:00:00Z").millisecondsSince1970)
            for i in 0..<(3 * 144) {
                let time = Timestamp(millisecondsSince1970: start + Int64(i) * 600_000).iso8601
                let metric = i % 3 == 0 ? #", "metric": {"name": "mood", "value": \#(1 + (i + w) % 10)}"# : ""
                lines.append(#"{"id": "lifelog_\#(String(format: "%08x", w * 10_000 + i))-0000-4000-8000-000000000000", "timestamp": "\#(time)", "category": "c\#(i % 4)", "data": {"text": "e\#(i)"\#(metric)}}"#)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func keptAndScannedDaysAgreeInZonesThatChangeOrSplitHours() throws {
        let sandbox = try Sandbox(role: "phone")
        let file = sandbox.file("entries.ndjson")
        try Data(Self.entries().utf8).write(to: URL(fileURLWithPath: file))
        let imported = try sandbox.run(["import", file])
        try #require(imported.status == 0, "import: \(imported.stderr)")
        for zone in Self.zones {
            func stats(_ filter: [String]) throws -> [String: Any] {
                let result = try LifeSyncBinary.run(["stats", "--json", "--db", sandbox.db] + filter, environment: ["TZ": zone])
                try #require(result.status == 0, "stats \(filter) in \(zone): \(result.stderr)")
                return try #require(try parseJSON(result.stdout) as? [String: Any])
            }
            let kept = try stats([]), scanned = try stats(["--since", "2000-01-01"])
            let keptDays = kept["by_day"] as? [String: Int] ?? [:], scannedDays = scanned["by_day"] as? [String: Int] ?? [:]
            #expect(keptDays.count >= 12 && keptDays.values.reduce(0, +) == 4 * 3 * 144, "\(zone): \(keptDays)")
            #expect(keptDays == scannedDays, "\(zone): kept \(keptDays.sorted { $0.key < $1.key }) scanned \(scannedDays.sorted { $0.key < $1.key })")
            #expect(NSDictionary(dictionary: kept).isEqual(to: scanned), "\(zone): kept \(kept) scanned \(scanned)")
        }
    }
}
