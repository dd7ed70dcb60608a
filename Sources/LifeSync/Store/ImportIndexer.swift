/// Indexes the rows an import writes as it writes them, from the entries in hand: each row's
/// text into `entries_text`, and the journal's counts (EntrySummary) counted here and added to
/// its tables a bounded number of keys at a time. What `Replica.indexTextBacklog` would do at
/// the end, without reading every row back and parsing its JSON in SQL, and without grouping
/// the rows in SQL again (the counts' pass over a 100k import's rows took a tenth of it).
///
/// Its rows must be the whole backlog: made after the backlog was caught up, in the same
/// transaction, and every row written meanwhile handed to `add`; `finish` moves the mark past them.
struct ImportIndexer {
    private let database: Database
    private let text: Statement
    /// `entry_summary`'s (kind, key), `metric_summary`'s (name, value), and `hour_summary`'s
    /// (hour, kind, key), a metric's per value, each with how many rows it counts.
    private var counts: [Key: Int64] = [:]
    private var metrics: [Key: Int64] = [:]
    private var hours: [HourKey: Int64] = [:]
    private var latest: Int64?

    private struct Key: Hashable {
        var kind: String
        var key: String
    }

    private struct HourKey: Hashable {
        var hour: String
        var kind: String
        var key: String
        /// A metric's value, in its canonical JSON form, which SQLite reads as it reads it from `data`.
        var value: String?
    }

    /// Hour keys held before they are added to the counts (the other tables hold fewer): a
    /// bound on memory whatever the import's size.
    static let groupLimit = 1_024

    init(database: Database) throws {
        self.database = database
        text = try database.prepare("INSERT INTO entries_text(rowid, text) VALUES (?1, ?2)")
    }

    /// Indexes `entry`, just written with feed number `feed`; `hour`: its stored timestamp's
    /// first 13 characters (`RecordWriter.storedHour`). What EntrySummary's keys make of a row.
    mutating func add(_ entry: LogEntry, feed: Int64, hour: String) throws {
        text.bind(feed, at: 1)
        text.bind(entry.data.text, at: 2)
        defer { text.clearBindings() }
        try text.execute()
        let category = entry.category ?? "(none)"
        counts[Key(kind: "all", key: ""), default: 0] += 1
        counts[Key(kind: "category", key: category), default: 0] += 1
        counts[Key(kind: "source", key: entry.source), default: 0] += 1
        counts[Key(kind: "hour", key: hour), default: 0] += 1
        hours[HourKey(hour: hour, kind: "category", key: category), default: 0] += 1
        hours[HourKey(hour: hour, kind: "source", key: entry.source), default: 0] += 1
        if let metric = entry.data.metric {
            let value = JSONValue.numberText(metric.value)
            metrics[Key(kind: metric.name, key: value), default: 0] += 1
            hours[HourKey(hour: hour, kind: "metric", key: metric.name, value: value), default: 0] += 1
        }
        latest = feed
        if hours.count >= Self.groupLimit { try addCounts() }
    }

    /// Adds what is counted to the tables and moves the mark past the rows indexed.
    mutating func finish() throws {
        try addCounts()
        guard let latest else { return }
        try database.run("UPDATE meta SET value = ? WHERE key = ?", [.text(String(latest)), .text(Replica.textBacklogKey)])
    }

    private mutating func addCounts() throws {
        // (kind, key, count) into the counts, then the metrics.
        for (table, sql) in [(counts, EntrySummary.addCountSQL), (metrics, EntrySummary.addMetricSQL)] {
            let add = try database.prepare(sql)
            for (key, n) in table {
                add.bind(key.kind, at: 1)
                add.bind(key.key, at: 2)
                add.bind(n, at: 3)
                try add.execute()
            }
        }
        let hourCount = try database.prepare(EntrySummary.addHourCountSQL)
        let hourMetric = try database.prepare(EntrySummary.addHourMetricSQL)
        for (key, n) in hours {
            if let value = key.value {
                hourMetric.bind(key.hour, at: 1)
                hourMetric.bind(key.key, at: 2)
                hourMetric.bind(n, at: 3)
                hourMetric.bind(value, at: 4)
                try hourMetric.execute()
            } else {
                hourCount.bind(key.hour, at: 1)
                hourCount.bind(key.kind, at: 2)
                hourCount.bind(key.key, at: 3)
                hourCount.bind(n, at: 4)
                try hourCount.execute()
            }
        }
        counts.removeAll(keepingCapacity: true)
        metrics.removeAll(keepingCapacity: true)
        hours.removeAll(keepingCapacity: true)
    }
}
