extension Replica {
    /// The journal's counts of `kind` (EntrySummary: all, tombstones, category, source, hour) by
    /// key, sorted by key, keys with nothing left out: the kept counts plus the rows above their
    /// mark, counted now through the feed index. Every write transaction leaves none (schema
    /// step 30); what a reader still finds there was written past the writer (a user's own SQL).
    package func summaryCounts(_ kind: String) throws -> [(key: String, count: Int)] {
        // Two reads, not one grouped union: the kept rows come in key order from their primary
        // key, where grouping them with the backlog in one statement sorted them all again (the
        // 17,000 hours of a million entries written one a minute).
        let kept = try database.rows("SELECT key, count FROM entry_summary WHERE kind = ? AND count > 0 ORDER BY key", [.text(kind)]) {
            (key: $0.string(0), count: Int($0.int64(1)))
        }
        let backlog = EntrySummary.keys(kind == "tombstones" ? "tombstones" : "entries", where: "feed_seq > \(EntrySummary.mark)")
        let recent = try database.rows("SELECT key, count(*) FROM (\(backlog)) WHERE kind = ? GROUP BY key", [.text(kind)]) {
            (key: $0.string(0), count: Int($0.int64(1)))
        }
        return recent.isEmpty ? kept : merged(kept + recent).filter { $0.count > 0 }
    }

    /// The number of `kind` (all: live entries, tombstones), kept up to date as above.
    func summaryTotal(_ kind: String) throws -> Int {
        try summaryCounts(kind).first?.count ?? 0
    }

    /// Each metric's count, average, minimum and maximum over the live entries, from the kept
    /// count of each value plus the backlog's. The average is the sum of value × count over
    /// count: the same as SQLite's `avg` over the rows up to rounding (summed in another order).
    package func summaryMetrics() throws -> [EntryStats.MetricSummary] {
        try database.rows("""
            SELECT name, sum(n), sum(value * n) / sum(n), min(value), max(value) FROM (
                SELECT name, value, count AS n FROM metric_summary WHERE count > 0
                UNION ALL SELECT name, value, count(*) FROM (\(EntrySummary.metrics(where: "feed_seq > \(EntrySummary.mark)")))
                    GROUP BY name, value)
            GROUP BY name HAVING sum(n) > 0 ORDER BY name
            """) {
            EntryStats.MetricSummary(name: $0.string(0), count: Int($0.int64(1)), average: $0.double(2),
                                     minimum: $0.double(3), maximum: $0.double(4))
        }
    }
}
