extension Replica {
    /// Counts by category, source and day, and per-metric averages, over live entries.
    public func stats() throws -> EntryStats {
        func counts(_ expression: String) throws -> [(key: String, count: Int)] {
            try database.rows("SELECT \(expression) AS k, count(*) FROM entries GROUP BY k ORDER BY k") {
                (key: $0.string(0), count: Int($0.int64(1)))
            }
        }
        let metrics = try database.rows("""
            SELECT json_extract(data, '$.metric.name') AS name, count(*), avg(json_extract(data, '$.metric.value')),
                   min(json_extract(data, '$.metric.value')), max(json_extract(data, '$.metric.value'))
            FROM entries WHERE name IS NOT NULL GROUP BY name ORDER BY name
            """) {
            EntryStats.MetricSummary(name: $0.string(0), count: Int($0.int64(1)), average: $0.double(2),
                                     minimum: $0.double(3), maximum: $0.double(4))
        }
        return EntryStats(total: try liveEntryCount(), byCategory: try counts("coalesce(category, '(none)')"),
                          bySource: try counts("source"), byDay: try counts("substr(timestamp, 1, 10)"), metrics: metrics)
    }
}
