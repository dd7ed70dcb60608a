import Dispatch
import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

/// The HTTP API under load, each figure beside a floor or a rival measured in the same run:
/// - writes: N entries POSTed to `/api/entries` in batches of 1,000 over one keep-alive
///   connection, against `lifesync import` of the same entries (a whole process, as a user runs
///   it) and raw SQLite inserts into the LifeLog schema;
/// - reads: filtered `GET /api/entries` pages over those N entries from several keep-alive
///   clients at once (latency percentiles and requests/s), and, when `datasette` is on the PATH,
///   the same questions asked of Datasette serving the same replica file read-only.
enum HTTPBench {
    static let batchSize = 1_000

    /// One question, as our API and as Datasette's table API ask it: newest first, 100 rows.
    struct Query {
        var name: String
        var ours: String
        var datasette: String
    }

    static func queries(workload entries: [LogEntry]) -> [Query] {
        let middle = entries[entries.count / 2].timestamp
        let from = Timestamp(millisecondsSince1970: middle.millisecondsSince1970 - 3_600_000 * 24).iso8601
        let to = middle.iso8601
        let table = "/replica/entries.json?_shape=array&_nocount=1&_nofacet=1&_sort_desc=timestamp&_size=100"
        return [
            Query(name: "category", ours: "/api/entries?category=mood&limit=100", datasette: table + "&category=mood"),
            Query(name: "time range", ours: "/api/entries?since=\(from)&until=\(to)&limit=100",
                  datasette: table + "&timestamp__gte=\(from)&timestamp__lte=\(to)"),
            Query(name: "text", ours: "/api/entries?search=market&category=note&limit=100",
                  datasette: table + "&data__contains=market&category=note"),
            Query(name: "source", ours: "/api/entries?source=watch&limit=100", datasette: table + "&source=watch"),
        ]
    }

    static func run(count: Int, clients: Int, requests: Int, directory: String) throws -> BenchReport {
        let binary = try SyncBench.selfExecutable()
        let entries = BenchWorkload.entries(count: count)
        let rawPath = directory + "/raw.sqlite", cliPath = directory + "/cli.sqlite", replicaPath = directory + "/replica.sqlite"
        for path in [rawPath, cliPath, replicaPath] { ImportBench.removeDatabase(path) }
        let rows = RawSQLiteBaseline.rows(entries)
        var rawRuns = [try RawSQLiteBaseline.timedRun(rows, path: rawPath)]

        // `lifesync import` as a user runs it: the process, reading NDJSON, all in one transaction.
        let ndjson = directory + "/entries.ndjson"
        try Data(entries.map { $0.json.canonicalText }.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: ndjson))
        try runToEnd(binary, ["init", "--db", cliPath, "--role", "watch"], log: directory + "/init.log")
        let importStart = MonotonicClock.seconds()
        try runToEnd(binary, ["import", ndjson, "--db", cliPath], log: directory + "/import.log")
        let importSeconds = MonotonicClock.seconds() - importStart
        rawRuns.append(try RawSQLiteBaseline.timedRun(rows, path: rawPath))

        // The node under test, written to over HTTP only.
        let replica = try Replica.create(path: replicaPath, role: .watch, clock: SystemClock(), random: SystemRandom())
        let key = try replica.createAPIKey(name: "bench")
        let port = try SyncBench.freeLoopbackPort()
        let log = directory + "/serve.log"
        let node = try SyncBench.spawn(binary, ["serve", "--db", replicaPath, "--http", "\(port)"], log: log)
        defer { _ = node.terminate() }
        try SyncBench.waitUntilListening(log: log)
        let authorization = [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")]
        let bodies = stride(from: 0, to: entries.count, by: batchSize).map { start in
            Array(JSONValue.array(entries[start..<min(start + batchSize, entries.count)].map(\.json)).canonicalText.utf8)
        }
        let writer = try BenchHTTPClient(port: port)
        let postStart = MonotonicClock.seconds()
        for body in bodies {
            let (status, answer) = try writer.request("POST", "/api/entries", headers: authorization, body: body)
            guard status == 200 else { throw CLIError.refused("bench http: POST answered \(status): \(String(decoding: answer.prefix(300), as: UTF8.self))") }
        }
        let postSeconds = MonotonicClock.seconds() - postStart
        let stored = try replica.liveEntryCount()
        precondition(stored == count, "bench http: the node holds \(stored) of \(count) entries POSTed")
        rawRuns.append(try RawSQLiteBaseline.timedRun(rows, path: rawPath))

        let questions = queries(workload: entries)
        let ours = try LoadRun.measure(port: port, targets: questions.map(\.ours), headers: authorization, clients: clients, requests: requests)
        _ = node.terminate()

        var rival: LoadRun?
        if let datasette = executable(named: "datasette") {
            // Datasette reads the file immutable (-i): everything must be in the main file first.
            replica.checkpoint()  // the node is stopped: nothing holds a frame back
            let datasettePort = try SyncBench.freeLoopbackPort()
            let datasetteLog = directory + "/datasette.log"
            let server = try SyncBench.spawn(datasette, ["serve", "-i", replicaPath, "-h", "127.0.0.1", "-p", "\(datasettePort)"], log: datasetteLog)
            defer { _ = server.terminate() }
            let up = waitUntil(timeout: 60, every: 0.1) { (try? BenchHTTPClient(port: datasettePort, timeoutSeconds: 5).request("GET", "/-/versions.json").status) == 200 }
            guard up else { throw CLIError.refused("bench http: datasette did not answer within 60 s (see \(datasetteLog))") }
            rival = try LoadRun.measure(port: datasettePort, targets: questions.map(\.datasette), headers: [], clients: clients, requests: requests)
        }

        let rawRate = Double(count) / BenchReport.median(rawRuns)
        let importRate = Double(count) / importSeconds, postRate = Double(count) / postSeconds
        var figures: [(name: String, value: Double, unit: String)] = [
            ("raw SQLite inserts", rawRate, "entries/s"),
            ("lifesync import (process)", importRate, "entries/s"),
            ("POST /api/entries, batches of \(batchSize)", postRate, "entries/s"),
            ("ratio POST / import", postRate / importRate, "x"),
            ("ratio POST / raw", postRate / rawRate, "x"),
            ("GET /api/entries requests/s", ours.requestsPerSecond, "req/s"),
            ("GET /api/entries p50", ours.percentile(0.50) * 1000, "ms"),
            ("GET /api/entries p99", ours.percentile(0.99) * 1000, "ms"),
        ]
        for (i, question) in questions.enumerated() {
            figures.append(("  p50 \(question.name)", ours.percentile(0.50, query: i) * 1000, "ms"))
        }
        if let rival {
            figures += [
                ("datasette requests/s", rival.requestsPerSecond, "req/s"),
                ("datasette p50", rival.percentile(0.50) * 1000, "ms"),
                ("datasette p99", rival.percentile(0.99) * 1000, "ms"),
            ] + questions.enumerated().map { i, question in ("  datasette p50 \(question.name)", rival.percentile(0.50, query: i) * 1000, "ms") } + [
                ("ratio lifesync / datasette req/s", ours.requestsPerSecond / rival.requestsPerSecond, "x"),
            ]
        }
        let postVerdict = postRate >= 0.5 * importRate ? "POST ≥ 0.5× import: met" : "POST ≥ 0.5× import: NOT met"
        return BenchReport(title: "http: \(count) entries; reads by \(clients) keep-alive clients × \(requests) requests (\(questions.map(\.name).joined(separator: ", ")))",
                           figures: figures, verdict: postVerdict + (rival == nil ? "; datasette not on PATH (pip install datasette), no comparison" : ""))
    }

    /// Runs `binary arguments…` to its end (at most 10 minutes); throws unless it exits 0.
    static func runToEnd(_ binary: String, _ arguments: [String], log: String) throws {
        let process = try SyncBench.spawn(binary, arguments, log: log)
        guard let end = process.wait(timeout: 600) else {
            _ = process.kill()
            throw CLIError.refused("bench http: \(arguments.first ?? "") did not finish within 10 minutes (see \(log))")
        }
        guard end.exitStatus == 0 else { throw CLIError.refused("bench http: \(arguments.first ?? "") failed (see \(log))") }
    }

    /// The first executable file `name` on the PATH.
    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}

/// Several keep-alive clients on their own threads, each asking `requests` questions in turn;
/// every answer must be 200.
struct LoadRun {
    /// Each answer's time, with the index of the question asked.
    var samples: [(query: Int, seconds: Double)]
    var seconds: Double

    var requestsPerSecond: Double { Double(samples.count) / seconds }

    /// The `p` quantile of every answer's time, or of one question's (`query`).
    func percentile(_ p: Double, query: Int? = nil) -> Double {
        let sorted = samples.filter { query == nil || $0.query == query }.map(\.seconds).sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    static func measure(port: UInt16, targets: [String], headers: [(String, String)], clients: Int, requests: Int) throws -> LoadRun {
        precondition(clients > 0 && requests > 0 && !targets.isEmpty)
        // Warm-up: the first answers pay for opening files and filling caches, on both servers.
        let warm = try BenchHTTPClient(port: port)
        for target in targets + targets { _ = try warm.request("GET", target, headers: headers) }
        let results = Results()
        let group = DispatchGroup()
        let start = MonotonicClock.seconds()
        for client in 0..<clients {
            group.enter()
            detachThread(named: "bench-client") {
                defer { group.leave() }
                var mine: [(query: Int, seconds: Double)] = []
                mine.reserveCapacity(requests)
                do {
                    let connection = try BenchHTTPClient(port: port)
                    for i in 0..<requests {
                        let before = MonotonicClock.seconds()
                        let query = (client + i) % targets.count
                        let (status, body) = try connection.request("GET", targets[query], headers: headers)
                        guard status == 200, body.count > 2 else { throw BenchHTTPClient.Failure(description: "answer \(status), \(body.count) bytes") }
                        mine.append((query, MonotonicClock.seconds() - before))
                    }
                } catch {
                    results.fail("\(error)")
                }
                results.add(mine)
            }
        }
        guard group.wait(timeout: .now() + 600) == .success else { throw CLIError.refused("bench http: the clients did not finish within 10 minutes") }
        let seconds = MonotonicClock.seconds() - start
        let (samples, failure) = results.collected
        if let failure { throw CLIError.refused("bench http: a client failed: \(failure)") }
        return LoadRun(samples: samples, seconds: seconds)
    }

    /// What the client threads hand back, under a lock.
    final class Results: @unchecked Sendable {
        private let lock = Lock()
        private var samples: [(query: Int, seconds: Double)] = []
        private var failure: String?

        func add(_ mine: [(query: Int, seconds: Double)]) { lock.withLock { samples += mine } }
        func fail(_ reason: String) { lock.withLock { failure = failure ?? reason } }
        var collected: ([(query: Int, seconds: Double)], String?) { lock.withLock { (samples, failure) } }
    }
}
