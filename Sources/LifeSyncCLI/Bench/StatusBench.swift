import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

/// What a person waits for at any journal size (issue 30: under 100 ms at a million entries),
/// against a replica of N entries made by `lifesync import`:
/// - `status` and `stats` as processes (process start included, about 15 ms), each beside
///   `sqlite3` answering the plainest form of the question (`count(*)`, one `GROUP BY`): the floor;
/// - over HTTP from a `serve --http` node, one keep-alive connection on loopback, so the time is
///   the server's plus a loopback round trip: `/api/status`, `/api/entries/stats` as the
///   dashboard asks it, and the dashboard's whole first render (every request its page makes
///   before it is drawn, one after another: the server's share, whatever the browser overlaps).
/// `--binary` runs another build's processes throughout (its own replica, its own serve): an A/B
/// against a build from before, whose schema a newer build's replica would be refused by.
enum StatusBench {
    static func run(count: Int, runs: Int, binary other: String?, directory: String) throws -> BenchReport {
        let binary = try other ?? SyncBench.selfExecutable()
        let replica = directory + "/status.sqlite", ndjson = directory + "/status.ndjson"
        ImportBench.removeDatabase(replica)
        try writeWorkload(count: count, to: ndjson)
        try HTTPBench.runToEnd(binary, ["init", "--db", replica, "--role", "watch"], log: directory + "/init.log")
        try HTTPBench.runToEnd(binary, ["import", ndjson, "--db", replica], log: directory + "/import.log")
        unlink(ndjson)
        defer { ImportBench.removeDatabase(replica) }
        let keyLog = directory + "/key.log"
        try HTTPBench.runToEnd(binary, ["keys", "create", "bench", "--admin", "--json", "--db", replica], log: keyLog)
        guard let key = (try? JSONValue.parse(String(contentsOfFile: keyLog, encoding: .utf8)))?["key"]?.stringValue else {
            throw CLIError.refused("bench status: `keys create` printed no key (see \(keyLog))")
        }

        var samples: [String: [Double]] = [:]
        let sqlite3 = HTTPBench.executable(named: "sqlite3")
        let questions: [(name: String, arguments: [String], floor: String, floorName: String)] = [
            ("status (process)", ["status"], "SELECT count(*) FROM entries", "  floor: sqlite3 count(*)"),
            ("stats (process)", ["stats"], "SELECT category, count(*) FROM entries GROUP BY category", "  floor: sqlite3 GROUP BY"),
        ]
        for _ in 0..<runs {
            for question in questions {
                samples[question.name, default: []].append(try QueryBench.timed(binary, question.arguments + ["--db", replica], log: directory + "/query.log"))
                if let sqlite3 {
                    samples[question.floorName, default: []].append(
                        try QueryBench.timed(sqlite3, ["-readonly", replica, question.floor], log: directory + "/floor.log"))
                }
            }
        }
        try measureHTTP(binary: binary, replica: replica, key: key, runs: runs, directory: directory, into: &samples)

        var figures: [(name: String, value: Double, unit: String)] = []
        let order = questions.flatMap { [$0.name, $0.floorName] } + httpNames + firstRenderNames.map { "  render: " + $0 }
        for name in order {
            guard let values = samples[name], !values.isEmpty else { continue }
            figures.append((name + " median", BenchReport.median(values) * 1000, "ms"))
            guard !name.hasPrefix("  render: ") else { continue }  // the parts of the render: medians only
            figures.append((name + " min", values.min()! * 1000, "ms"))
            figures.append((name + " max", values.max()! * 1000, "ms"))
        }
        let worst = ["status (process)", "stats (process)", "GET /api/entries/stats", "dashboard first render"]
            .compactMap { samples[$0].map(BenchReport.median) }.max() ?? .infinity
        return BenchReport(title: "status and stats at \(count) entries, \(runs) run(s)\(other.map { " of " + $0 } ?? "")", figures: figures,
                           verdict: worst < 0.1 ? "each under 100 ms by the median: met" : "each under 100 ms by the median: NOT met")
    }

    static let httpNames = ["GET /api/status", "GET /api/entries/stats", "dashboard first render"]

    static let firstRenderNames = ["status", "journal page", "day's stats", "day's entries", "stats", "30 days per day",
                                   "recordings", "conflicts", "keys"]

    /// The requests the dashboard's page makes before its first drawing (dashboard.js `start`),
    /// named as `firstRenderNames`.
    static func firstRender(now: Timestamp) -> [String] {
        let day = String(now.iso8601.prefix(10))
        let month = Timestamp(millisecondsSince1970: now.millisecondsSince1970 - 30 * 86_400_000).iso8601
        return ["/api/status", "/api/entries?limit=51", "/api/entries/stats?since=\(day)T00:00:00Z&until=\(day)T23:59:59.999Z",
                "/api/entries?since=\(day)T00:00:00Z&until=\(day)T23:59:59.999Z&limit=1000", "/api/entries/stats?utc_offset=60",
                "/api/entries/stats?since=\(month)&per_day=true&utc_offset=60", "/api/recordings", "/api/conflicts", "/api/keys"]
    }

    static func measureHTTP(binary: String, replica: String, key: String, runs: Int, directory: String, into samples: inout [String: [Double]]) throws {
        let port = try SyncBench.freeLoopbackPort()
        let log = directory + "/serve.log"
        let node = try SyncBench.spawn(binary, ["serve", "--db", replica, "--http", "\(port)", "--no-discovery"], log: log)
        defer { _ = node.terminate() }
        try SyncBench.waitUntilListening(log: log)
        let client = try BenchHTTPClient(port: port)
        let headers = [("Authorization", "Bearer \(key)")]
        func timed(_ target: String) throws -> Double {
            let start = MonotonicClock.seconds()
            let (status, body) = try client.request("GET", target, headers: headers)
            guard status == 200 else { throw CLIError.refused("bench status: GET \(target) answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))") }
            return MonotonicClock.seconds() - start
        }
        _ = try timed("/api/status")  // the connection and the node's first reads, not counted
        let render = firstRender(now: Timestamp(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000)))
        for _ in 0..<runs {
            samples[httpNames[0], default: []].append(try timed("/api/status"))
            samples[httpNames[1], default: []].append(try timed("/api/entries/stats?utc_offset=60"))
            var total = 0.0
            for (name, target) in zip(firstRenderNames, render) {
                let seconds = try timed(target)
                samples["  render: " + name, default: []].append(seconds)
                total += seconds
            }
            samples[httpNames[2], default: []].append(total)
        }
    }

    /// BenchWorkload's entries as NDJSON, one a minute up to now, as a journal is (BenchWorkload's
    /// default start would put most of a million entries in the future, inside the dashboard's
    /// "last 30 days").
    static func writeWorkload(count: Int, to path: String) throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try BenchWorkload.writeNDJSON(BenchWorkload.entries(count: count, start: now - Int64(count) * 60_000), to: path)
    }
}
