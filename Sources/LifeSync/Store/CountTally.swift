/// The journal's counts (EntrySummary) of the rows written since the counts' mark, gathered by
/// the replica's writer (`RecordWriter`) from the entries in hand as it stores them, and added to
/// the tables when the write transaction ends (`flush`), or before, once it holds `groupLimit`
/// hour keys. Each flush moves the mark past the rows it counted, so the tables count exactly
/// the rows at or below the mark and the tally exactly those above it.
///
/// Counting from the entries in hand, not from the rows in SQL: a grouped pass over a received
/// batch's rows read each row's JSON again, and cost a sync a sixth of its speed.
///
/// A row above the mark that is about to be replaced or deleted (written earlier in the same
/// transaction) is handled by flushing first: the row is then at or below the mark, and taken
/// out of the tables as any counted row is (`RecordWriter.retire`). A tally could not take a
/// metric's value out of an hour's minimum or maximum.
///
/// One per replica, open only within a write transaction (`Replica.deferringTextIndex`); a
/// transaction that fails discards what it gathered, as SQLite discards what it flushed.
final class CountTally {
    /// How many entries were counted in each group, and how many tombstones.
    private var groups: [Group: Int64] = [:]
    private var tombstones: Int64 = 0
    /// The feed number of the latest row counted (nil: none since the last flush).
    private var latest: Int64?
    private(set) var isOpen = false

    /// What EntrySummary's keys make of an entry (`EntrySummary.groups`): one dictionary
    /// entry a row, where a key a table (all, category, source, hour, and per hour) cost a
    /// sizeable share of counting.
    private struct Group: Hashable {
        var hour: String
        var category: String
        var source: String
        var metric: String?
        var value: Double?
    }

    /// Groups held before they are added to the tables: a bound on memory whatever the
    /// transaction's size.
    static let groupLimit = 1_024

    /// Counts `entry`, just written with feed number `feed`; `hour`: its stored timestamp's
    /// first 13 characters (`RecordWriter.storedHour`).
    func add(_ entry: LogEntry, feed: Int64, hour: String) {
        precondition(isOpen, "rows are counted within a write transaction")
        let metric = entry.data.metric
        groups[Group(hour: hour, category: entry.category ?? "(none)", source: entry.source,
                     metric: metric?.name, value: metric?.value), default: 0] += 1
        latest = feed
    }

    /// Counts a tombstone just written with feed number `feed`.
    func addTombstone(feed: Int64) {
        precondition(isOpen, "rows are counted within a write transaction")
        tombstones += 1
        latest = feed
    }

    /// Whether it holds as many groups as it may.
    var isFull: Bool { groups.count >= Self.groupLimit }

    func open() {
        precondition(!isOpen && latest == nil, "one write transaction at a time")
        isOpen = true
    }

    /// Forgets what it gathered: the transaction failed.
    func discard() {
        groups.removeAll()
        tombstones = 0
        latest = nil
        isOpen = false
    }

    /// Adds what it gathered to the tables and moves the mark past the rows counted, inside the
    /// caller's transaction. With `closing`, the transaction's last flush. The groups are
    /// spread over each table's keys here, and each key added once: grouping them in SQL (a
    /// sort of every group three times over) took a sync 7% of its time, and an upsert per
    /// metric value in each hour most of what was left. Values go to SQLite as their JSON text,
    /// which it reads as it reads them from `data` (what taking a row out computes).
    /// - Throws: what SQLite reports.
    func flush(into database: Database, closing: Bool = false) throws {
        defer { if closing { isOpen = false } }
        guard let latest else { return }
        var counts: [Key: Int64] = [:], metrics: [MetricKey: Int64] = [:]
        var hours: [Key: [String: Int64]] = [:], hourMetrics: [MetricKey: HourMetric] = [:]
        if tombstones > 0 { counts[Key(kind: "tombstones", key: "")] = tombstones }
        for (group, n) in groups {
            for key in [Key(kind: "all", key: ""), Key(kind: "category", key: group.category), Key(kind: "source", key: group.source),
                        Key(kind: "hour", key: group.hour)] {
                counts[key, default: 0] += n
            }
            hours[Key(kind: "category", key: group.category), default: [:]][group.hour, default: 0] += n
            hours[Key(kind: "source", key: group.source), default: [:]][group.hour, default: 0] += n
            if let metric = group.metric, let value = group.value {
                metrics[MetricKey(name: metric, key: JSONValue.numberText(value)), default: 0] += n
                hourMetrics[MetricKey(name: metric, key: group.hour), default: HourMetric(low: value, high: value)].add(value, times: n)
            }
        }
        let addCount = try database.prepare(EntrySummary.addCountSQL)
        for (key, n) in counts {
            addCount.bind(key.kind, at: 1)
            addCount.bind(key.key, at: 2)
            addCount.bind(n, at: 3)
            try addCount.execute()
        }
        let addMetric = try database.prepare(EntrySummary.addMetricSQL)
        for (key, n) in metrics {
            addMetric.bind(key.name, at: 1)
            addMetric.bind(key.key, at: 2)
            addMetric.bind(n, at: 3)
            try addMetric.execute()
        }
        let hourCount = try database.prepare(EntrySummary.addHourCountSQL)
        for (key, byHour) in hours {
            for (hour, n) in byHour {
                hourCount.bind(hour, at: 1)
                hourCount.bind(key.kind, at: 2)
                hourCount.bind(key.key, at: 3)
                hourCount.bind(n, at: 4)
                try hourCount.execute()
            }
        }
        let hourMetric = try database.prepare(EntrySummary.addHourMetricSQL)
        for (key, metric) in hourMetrics {
            hourMetric.bind(key.key, at: 1)
            hourMetric.bind(key.name, at: 2)
            hourMetric.bind(metric.count, at: 3)
            try hourMetric.bind(.real(metric.total), at: 4)
            hourMetric.bind(JSONValue.numberText(metric.low), at: 5)
            hourMetric.bind(JSONValue.numberText(metric.high), at: 6)
            try hourMetric.execute()
        }
        try database.run("UPDATE meta SET value = ? WHERE key = ?", [.text(String(latest)), .text(EntrySummary.markKey)])
        groups.removeAll(keepingCapacity: true)
        tombstones = 0
        self.latest = nil
    }

    /// `entry_summary`'s (kind, key).
    private struct Key: Hashable {
        var kind: String
        var key: String
    }

    /// A metric `name` and a value's JSON text (`metric_summary`), or an hour (`hour_summary`).
    private struct MetricKey: Hashable {
        var name: String
        var key: String
    }

    /// An hour's entries of one metric.
    private struct HourMetric {
        var count: Int64 = 0
        var total = 0.0
        var low: Double
        var high: Double

        init(low: Double, high: Double) {
            self.low = low
            self.high = high
        }

        mutating func add(_ value: Double, times n: Int64) {
            count += n
            total += value * Double(n)
            low = min(low, value)
            high = max(high, value)
        }
    }
}
