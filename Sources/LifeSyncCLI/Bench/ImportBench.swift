import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

extension ImportBench {
    /// `lifesync import` of N entries as a user runs it (the process, reading an NDJSON file),
    /// alternating with raw inserts of the same rows, then what the replica costs on disk.
    static func run(count: Int, runs: Int, directory: String) throws -> BenchReport {
        let binary = try SyncBench.selfExecutable()
        let ndjson = directory + "/entries.ndjson"
        let rows: [[String?]]
        do {
            // The entries live only while the file and the raw rows are made.
            let entries = BenchWorkload.entries(count: count)
            rows = RawSQLiteBaseline.rows(entries)
            try BenchWorkload.writeNDJSON(entries, to: ndjson)
        }
        let rawPath = directory + "/raw.sqlite", replicaPath = directory + "/replica.sqlite"
        var raw: [Double] = [], imported: [Double] = [], peaks: [Double] = []
        for run in 0..<runs {
            removeDatabase(rawPath)
            raw.append(Double(count) / (try RawSQLiteBaseline.timedRun(rows, path: rawPath)))
            removeDatabase(replicaPath)
            try HTTPBench.runToEnd(binary, ["init", "--db", replicaPath, "--role", "watch"], log: directory + "/init.log")
            let (seconds, peak) = try timedImport(binary, ["import", ndjson, "--db", replicaPath], log: directory + "/import.log")
            imported.append(Double(count) / seconds)
            peaks.append(peak)
            if run < runs - 1 { removeDatabase(replicaPath) }
        }
        let stored = try Replica(path: replicaPath, clock: SystemClock(), random: SystemRandom()).liveEntryCount()
        precondition(stored == count, "the import bench lost entries")
        let sizes = try StorageCost.measure(path: replicaPath, entries: count)
        let rawSizes = try rawStorage(rows, path: rawPath, entries: count)
        let queries = try QueryBench.figures(binary: binary, replica: replicaPath, count: count, directory: directory)
        removeDatabase(replicaPath)
        unlink(ndjson)

        var figures: [(name: String, value: Double, unit: String)] = []
        func spread(_ name: String, _ values: [Double], _ unit: String) {
            figures.append((name + " median", BenchReport.median(values), unit))
            if values.count > 1 {
                figures.append((name + " min", values.min()!, unit))
                figures.append((name + " max", values.max()!, unit))
            }
        }
        spread("raw SQLite inserts", raw, "entries/s")
        spread("lifesync import (process)", imported, "entries/s")
        spread("ratio import / raw", zip(imported, raw).map { $0 / $1 }, "x")
        spread("import peak RSS", peaks, "MiB")
        figures.append(("replica bytes per entry", sizes.total, "B"))
        figures.append(("raw table bytes per entry", rawSizes, "B"))
        figures += sizes.parts.map { ("  " + $0.name, $0.bytesPerEntry, "B/entry") }
        figures += queries
        return BenchReport(title: "import \(count) entries, \(runs) run(s)", figures: figures)
    }

    /// Runs one `lifesync import`; its seconds and peak RSS (VmHWM, sampled every 10 ms until it ends).
    static func timedImport(_ binary: String, _ arguments: [String], log: String) throws -> (seconds: Double, peakMiB: Double) {
        let start = MonotonicClock.seconds()
        let process = try SyncBench.spawn(binary, arguments, log: log)
        var peak = 0.0
        while true {
            let sample = ProcessMemory.peak(process.pid)
            if let end = process.wait(timeout: 0.01) {
                guard end.exitStatus == 0 else { throw CLIError.refused("bench import: the import failed (see \(log))") }
                return (MonotonicClock.seconds() - start, peak)
            }
            peak = max(peak, sample)
            if MonotonicClock.seconds() - start > 1_800 {
                _ = process.kill()
                throw CLIError.refused("bench import: the import did not finish within 30 minutes (see \(log))")
            }
        }
    }

    /// Bytes per entry of the raw table with the LifeLog document's indexes, the same rows.
    static func rawStorage(_ rows: [[String?]], path: String, entries: Int) throws -> Double {
        removeDatabase(path)
        defer { removeDatabase(path) }
        _ = try RawSQLiteBaseline.insert(rows, path: path, now: MonotonicClock.seconds)
        return try StorageCost.measure(path: path, entries: entries).total
    }
}

/// What a database file costs, table by table and index by index (SQLite's dbstat), after a
/// checkpoint folds the WAL into it.
enum StorageCost {
    struct Part { var name: String; var bytesPerEntry: Double }

    static func measure(path: String, entries: Int) throws -> (total: Double, parts: [Part]) {
        let database = try Database(path: path, create: false)
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let pageSize = try database.firstRow("PRAGMA page_size", [], { $0.int64(0) }) ?? 4096
        let pages = try database.firstRow("PRAGMA page_count", [], { $0.int64(0) }) ?? 0
        let per = { (bytes: Int64) in Double(bytes) / Double(max(entries, 1)) }
        let parts = (try? database.rows("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC") {
            Part(name: $0.string(0), bytesPerEntry: per($0.int64(1)))
        }) ?? []
        return (per(pageSize * pages), parts.filter { $0.bytesPerEntry >= 0.5 })
    }
}
