import LifeSync
import LifeSyncRuntime

/// The baseline every store benchmark is measured against: the same rows inserted with one
/// prepared statement in one transaction into the LifeLog document's own schema, with the same
/// journal and sync settings as a replica. No validation, no clocks, no replication metadata.
enum RawSQLiteBaseline {
    static let schema = """
        CREATE TABLE entries (id TEXT PRIMARY KEY, timestamp TEXT NOT NULL, recorded_at TEXT NOT NULL,
            source TEXT NOT NULL, device_id TEXT NOT NULL, category TEXT, data TEXT NOT NULL, created_at TEXT);
        CREATE INDEX idx_timestamp ON entries(timestamp DESC);
        CREATE INDEX idx_category ON entries(category);
        CREATE INDEX idx_source ON entries(source);
        """

    /// Rows prepared before timing, so only SQLite's work is measured.
    static func rows(_ entries: [LogEntry]) -> [[String?]] {
        entries.map { [$0.id, $0.timestamp.iso8601, $0.recordedAt.iso8601, $0.source, $0.deviceId, $0.category, $0.data.json.canonicalText] }
    }

    /// The median of three timed inserts into fresh databases at `path`: one run of about a
    /// second swings by a third on a shared machine, and the ratio inherits all of it.
    static func medianSeconds(_ rows: [[String?]], path: String) throws -> Double {
        var runs: [Double] = []
        for _ in 0..<3 { runs.append(try timedRun(rows, path: path)) }
        return BenchReport.median(runs)
    }

    /// One timed insert into a fresh database at `path`, removed afterwards.
    static func timedRun(_ rows: [[String?]], path: String) throws -> Double {
        ImportBench.removeDatabase(path)
        defer { ImportBench.removeDatabase(path) }
        return try insert(rows, path: path, now: MonotonicClock.seconds)
    }

    /// Inserts `rows` into a new database at `path`; returns the seconds it took.
    static func insert(_ rows: [[String?]], path: String, now: () -> Double) throws -> Double {
        let db = try Database(path: path)
        try db.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
        try db.execute(schema)
        let start = now()
        try db.transaction {
            let statement = try db.prepare("INSERT INTO entries(id, timestamp, recorded_at, source, device_id, category, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            for row in rows {
                for (i, value) in row.enumerated() { statement.bind(value, at: Int32(i + 1)) }
                statement.bind(row[1], at: 8)
                try statement.execute()
            }
        }
        return now() - start
    }
}
