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
        // (kind, key) of `entry_summary` and (name, value) of `metric_summary`, each counted;
        // per (kind, key) of a category or source its count in each hour; per (metric, hour)
        // what its entries there hold.
        var counts: [Pair: Int64] = [:], metrics: [Pair: Int64] = [:]
        var hours: [Pair: [String: Int64]] = [:], hourMetrics: [Pair: HourMetric] = [:]
        if tombstones > 0 { counts[Pair("tombstones", "")] = tombstones }
        for (group, n) in groups {
            for key in [Pair("all", ""), Pair("category", group.category), Pair("source", group.source), Pair("hour", group.hour)] {
                counts[key, default: 0] += n
            }
            hours[Pair("category", group.category), default: [:]][group.hour, default: 0] += n
            hours[Pair("source", group.source), default: [:]][group.hour, default: 0] += n
            if let metric = group.metric, let value = group.value {
                metrics[Pair(metric, JSONValue.numberText(value)), default: 0] += n
                hourMetrics[Pair(metric, group.hour), default: HourMetric(low: value, high: value)].add(value, times: n)
            }
        }
        for (table, sql) in [(counts, EntrySummary.addCountSQL), (metrics, EntrySummary.addMetricSQL)] {
            let add = try database.prepare(sql)
            for (pair, n) in table {
                add.bind(pair.first, at: 1)
                add.bind(pair.second, at: 2)
                add.bind(n, at: 3)
                try add.execute()
            }
        }
        let hourCount = try database.prepare(EntrySummary.addHourCountSQL)
        for (pair, byHour) in hours {
            for (hour, n) in byHour {
                hourCount.bind(hour, at: 1)
                hourCount.bind(pair.first, at: 2)
                hourCount.bind(pair.second, at: 3)
                hourCount.bind(n, at: 4)
                try hourCount.execute()
            }
        }
        let hourMetric = try database.prepare(EntrySummary.addHourMetricSQL)
        for (pair, metric) in hourMetrics {
            hourMetric.bind(pair.second, at: 1)
            hourMetric.bind(pair.first, at: 2)
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

    /// Two texts a table's row is keyed by.
    private struct Pair: Hashable {
        var first: String
        var second: String

        init(_ first: String, _ second: String) {
            self.first = first
            self.second = second
        }
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
