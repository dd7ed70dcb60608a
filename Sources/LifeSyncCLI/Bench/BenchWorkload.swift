import Glibc
import LifeSync
import LifeSyncRuntime

/// Generated journals for benchmarks: the same entries for the same seed.
enum BenchWorkload {
    static let categories = ["mood", "work", "location", "health", "note"]

    static func entries(count: Int, role: Role = .watch, seed: UInt64 = 42, start: Int64 = 1_795_305_600_000) -> [LogEntry] {
        let random = SeededRandom(seed: seed)
        let device = Identifier.make(role: role, random: random)
        return (0..<count).map { i in
            let category = categories[i % categories.count]
            var data = LogData(text: "entry \(i): walked to the market, felt \(random.next(below: 10)) out of ten")
            switch category {
            case "mood", "health": data.metric = Metric(name: category == "mood" ? "mood" : "pain",
                                                        value: Double(1 + random.next(below: 10)), scaleMin: 1, scaleMax: 10)
            case "location": data.location = Location(latitude: 52.5 + random.nextUnit(), longitude: 13.4 + random.nextUnit(),
                                                      accuracy: 10, placeName: "Berlin")
            default: data.tags = ["bench", "t\(i % 7)"]
            }
            let time = Timestamp(millisecondsSince1970: start + Int64(i) * 60_000)
            return LogEntry(id: Identifier.make(role: role, random: random), timestamp: time, recordedAt: time,
                            source: role.rawValue, deviceId: device, category: category, data: data)
        }
    }

    /// `entries` as NDJSON at `path`, encoded and written 10,000 at a time.
    /// - Throws: `RuntimeError` when the file cannot be written.
    static func writeNDJSON(_ entries: [LogEntry], to path: String) throws {
        try UserFile.replace(path) { write in
            for start in stride(from: 0, to: entries.count, by: 10_000) {
                try write(Array(entries[start..<min(entries.count, start + 10_000)].map { $0.json.canonicalText + "\n" }.joined().utf8))
            }
        }
    }
}
