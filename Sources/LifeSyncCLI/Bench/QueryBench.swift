import FoundationEssentials
import LifeSync
import LifeSyncRuntime

/// The read commands a user types, timed as whole processes against a replica of N entries,
/// each next to `sqlite3` answering the same question from the same file: the floor.
enum QueryBench {
    struct Question {
        var name: String
        var arguments: [String]
        /// What `sqlite3` runs for the floor (nil: none).
        var floor: String?
    }

    static func questions(count: Int) -> [Question] {
        let probe = count > 4_242 ? 4_242 : count / 2
        // The day of the middle entry (BenchWorkload writes one a minute).
        let middle = String(Timestamp(millisecondsSince1970: 1_795_305_600_000 + Int64(count / 2) * 60_000).iso8601.prefix(10))
        return [
            Question(name: "status", arguments: ["status"], floor: "SELECT count(*) FROM entries"),
            Question(name: "list", arguments: ["list"], floor: "SELECT * FROM entries ORDER BY timestamp DESC LIMIT 100"),
            Question(name: "list --category", arguments: ["list", "--category", "mood"],
                     floor: "SELECT * FROM entries WHERE category = 'mood' ORDER BY timestamp DESC LIMIT 100"),
            Question(name: "list --since --until", arguments: ["list", "--since", middle, "--until", middle],
                     floor: "SELECT * FROM entries WHERE timestamp BETWEEN '\(middle)' AND '\(middle)T23:59:59.999Z' ORDER BY timestamp DESC LIMIT 100"),
            Question(name: "list --search \"entry \(probe)\"", arguments: ["list", "--search", "entry \(probe)"],
                     floor: "SELECT * FROM entries WHERE json_extract(data, '$.text') LIKE '%entry \(probe)%' LIMIT 100"),
            Question(name: "stats", arguments: ["stats"], floor: "SELECT category, count(*) FROM entries GROUP BY category"),
            Question(name: "export --format csv", arguments: ["export", "--format", "csv"], floor: "SELECT * FROM entries"),
            Question(name: "export --format json", arguments: ["export", "--format", "json"], floor: "SELECT * FROM entries"),
        ]
    }

    /// Median seconds of `runs` runs of each question and of its floor, alternating.
    static func figures(binary: String, replica: String, count: Int, runs: Int = 3, directory: String) throws -> [(name: String, value: Double, unit: String)] {
        let sqlite3 = HTTPBench.executable(named: "sqlite3")
        var figures: [(name: String, value: Double, unit: String)] = []
        for question in questions(count: count) {
            var mine: [Double] = [], floor: [Double] = []
            for _ in 0..<runs {
                mine.append(try timed(binary, question.arguments + ["--db", replica], log: directory + "/query.log"))
                if let sql = question.floor, let sqlite3 {
                    floor.append(try timed(sqlite3, ["-readonly", replica, sql], log: directory + "/query-floor.log"))
                }
            }
            figures.append((question.name + " (ms)", BenchReport.median(mine) * 1000, "ms"))
            if !floor.isEmpty { figures.append(("  floor: sqlite3 (ms)", BenchReport.median(floor) * 1000, "ms")) }
        }
        return figures
    }

    /// One process run to its end, output to `log`; its wall seconds.
    static func timed(_ binary: String, _ arguments: [String], log: String) throws -> Double {
        let start = MonotonicClock.seconds()
        try HTTPBench.runToEnd(binary, arguments, log: log)
        return MonotonicClock.seconds() - start
    }
}
