import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let benchCommand = Command(
        spec: CommandSpec(
            name: "bench", summary: "measure throughput against a raw baseline in the same run",
            positionals: ["import|sync|transfer|handshake|http|status|mesh"],
            options: [OptionSpec(name: "--count", kind: .value, valueName: "N", help: "entries to generate (default 100000)"),
                      OptionSpec(name: "--size-mib", kind: .value, valueName: "N", help: "transfer: recording size in MiB (default 1024)"),
                      OptionSpec(name: "--runs", kind: .value, valueName: "N", help: "import: alternating runs of raw inserts and the import process (default 1)"),
                      OptionSpec(name: "--cycles", kind: .value, valueName: "N", help: "handshake: connect/handshake/close cycles (default 1000)"),
                      OptionSpec(name: "--clients", kind: .value, valueName: "N", help: "http: concurrent keep-alive readers (default 16)"),
                      OptionSpec(name: "--requests", kind: .value, valueName: "N", help: "http: requests per reader (default 200)"),
                      OptionSpec(name: "--nodes", kind: .value, valueName: "N", help: "mesh: paired nodes (default 20)"),
                      OptionSpec(name: "--binary", kind: .value, valueName: "PATH", help: "status: time another build's lifesync instead (A/B)"),
                      OptionSpec(name: "--dir", kind: .value, valueName: "DIR", help: "where to put the bench databases (default: a temporary folder)"),
                      CommandSpec.jsonFlag],
            details: """
            import   writes N generated entries as NDJSON and runs `lifesync import` on it (a process: parsing,
                     validation, HLC stamps, version vectors, change log), alternating --runs times with raw
                     inserts of the same rows (one prepared SQLite statement, the LifeLog schema); prints
                     medians and ranges of both rates, their ratio, the import's peak RSS (VmHWM) and the
                     replica's bytes per entry, table by table (dbstat).
                     The transfer bench's hash pass is the median of three runs.
            sync     replicates N entries written offline on a watch to a fresh phone over loopback TCP (two
                     `lifesync serve` processes; the watch is killed and restarted half-way), next to raw
                     SQLite inserts of the same rows; prints the rates, the phone's peak RSS and how many
                     entries it received twice.
            transfer sends one recording (1 GiB by default) watch → phone over loopback and times start to
                     confirmation next to one SHA-256 pass over the same file; prints the phone's peak RSS.
            handshake connects to a `lifesync serve` process over loopback N times (TCP, TLS 1.3 with both
                     certificates, HELLO both ways, close); prints the median, p90 and max cycle, the first and
                     last 100 cycles' medians and the node's RSS (VmRSS) after 100 and after N cycles, and a
                     verdict against the targets (median under 10 ms; flat RSS and cycle time).
            http     POSTs N entries to a `lifesync serve --http` node in batches of 1,000 next to `lifesync import`
                     of the same entries (the process) and raw SQLite inserts; then --clients keep-alive readers
                     ask filtered GET /api/entries pages (category, time range, text, source) --requests times
                     each: requests/s, p50 and p99. With `datasette` on the PATH, the same questions go to
                     Datasette serving the same replica file read-only (-i), and the ratio is printed.
            status   imports N entries, then times --runs times `status` and `stats` (processes) beside `sqlite3`
                     answering count(*) and one GROUP BY, and, from a `serve --http` node over one keep-alive
                     loopback connection, GET /api/status, GET /api/entries/stats and the dashboard's first
                     render (its requests in turn); medians and ranges, in ms. --binary PATH: another build.
            mesh     --nodes `serve` processes (a phone and macs, all paired, each dialling the nodes after it),
                     each with its share of N entries (default 10,000 here) written offline: time until every
                     node holds every entry, next to two nodes with the same entries in the same run; then
                     one write on the phone timed until every node holds it; changes each node received
                     beyond those it lacked; idle RSS.
            """),
        run: { arguments, context in
            let which = arguments.positional(0)!
            let count = try arguments.integer("--count", default: which == "mesh" ? 10_000 : 100_000, range: 1...10_000_000)
            let dir = arguments.value("--dir") ?? UserFile.temporaryDirectory + "lifesync-bench-\(getpid())"
            try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { if arguments.value("--dir") == nil { try? FileManager.default.removeItem(atPath: dir) } }
            switch which {
            case "import":
                let runs = try arguments.integer("--runs", default: 1, range: 1...50)
                let report = try ImportBench.run(count: count, runs: runs, directory: dir)
                context.console.print(arguments.flag("--json") ? report.json.prettyText : report.text)
            case "sync":
                let report = try SyncBench.run(count: count, directory: dir)
                context.console.print(arguments.flag("--json") ? report.json.prettyText : report.text)
            case "transfer":
                let size = try arguments.integer("--size-mib", default: 1024, range: 1...65_536)
                let report = try TransferBench.run(mebibytes: size, directory: dir)
                context.console.print(arguments.flag("--json") ? report.json.prettyText : report.text)
            case "handshake":
                let cycles = try arguments.integer("--cycles", default: 1_000, range: 1...1_000_000)
                let report = try HandshakeBench.run(cycles: cycles, directory: dir)
                context.console.print(arguments.flag("--json") ? report.json.prettyText : report.text)
            case "status":
                let runs = try arguments.integer("--runs", default: 5, range: 1...50)
                let report = try StatusBench.run(count: count, runs: runs, binary: arguments.value("--binary"), directory: dir)
                context.console.print(arguments.flag("--json") ? report.json.prettyText : report.text)
            case "http":
                let clients = try arguments.integer("--clients", default: 16, range: 1...256)
                let requests = try arguments.integer("--requests", default: 200, range: 1...100_000)
                let report = try HTTPBench.run(count: count, clients: clients, requests: requests, directory: dir)
                context.console.print(arguments.flag("--json") ? report.json.prettyText : report.text)
            case "mesh":
                let nodes = try arguments.integer("--nodes", default: 20, range: 2...64)
                let report = try MeshBench.run(nodes: nodes, count: count, directory: dir)
                context.console.print(arguments.flag("--json") ? report.json.prettyText : report.text)
            default:
                throw CLIError.usage("unknown benchmark '\(which)' (available: import, sync, transfer, handshake, http, status, mesh)", command: arguments.spec)
            }
            return 0
        })
}

/// A benchmark's figures, printed as text or JSON.
struct BenchReport {
    var title: String
    var figures: [(name: String, value: Double, unit: String)]
    /// A one-line judgement against the benchmark's targets, for those that have targets.
    var verdict: String? = nil

    /// Baselines are the median of a few runs: one run swings by a third on a shared machine.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    var text: String {
        ([title] + figures.map { "  " + $0.name + String(repeating: " ", count: max(0, 34 - $0.name.count)) + $0.value.fixed(2, width: 12) + " " + $0.unit })
            .joined(separator: "\n") + (verdict.map { "\n  verdict: " + $0 } ?? "")
    }

    var json: JSONValue {
        .object([("benchmark", .string(title)), ("figures", .object(figures.map { ($0.name, .number(($0.value * 1000).rounded() / 1000)) }))]
                + (verdict.map { [("verdict", .string($0))] } ?? []))
    }
}

enum ImportBench {
    static func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    }
}
