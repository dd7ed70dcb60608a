extension Replica {
    /// Counts by category, source and day, and per-metric averages, over the live entries
    /// `filter` selects (its `limit` and `offset` do not apply).
    public func stats(matching filter: EntryQuery = EntryQuery()) throws -> EntryStats {
        let (clause, values) = try self.filter(filter)
        func counts(_ expression: String) throws -> [(key: String, count: Int)] {
            try database.rows("SELECT \(expression) AS k, count(*) FROM entries \(clause) GROUP BY k ORDER BY k", values) {
                (key: $0.string(0), count: Int($0.int64(1)))
            }
        }
        let metrics = try database.rows("""
            SELECT name, count(*), avg(value), min(value), max(value) FROM (
                SELECT json_extract(data, '$.metric.name') AS name, json_extract(data, '$.metric.value') AS value
                FROM entries \(clause))
            WHERE name IS NOT NULL GROUP BY name ORDER BY name
            """, values) {
            EntryStats.MetricSummary(name: $0.string(0), count: Int($0.int64(1)), average: $0.double(2),
                                     minimum: $0.double(3), maximum: $0.double(4))
        }
        let total = Int(try database.firstRow("SELECT count(*) FROM entries \(clause)", values, { $0.int64(0) }) ?? 0)
        return EntryStats(total: total, byCategory: try counts("coalesce(category, '(none)')"),
                          bySource: try counts("source"), byDay: try counts("substr(timestamp, 1, 10)"), metrics: metrics)
    }

    /// Each metric's summary per UTC day over the entries `filter` selects, by name then day:
    /// what a chart of a month draws, in a row per day however many entries the day holds.
    public func metricsByDay(matching filter: EntryQuery = EntryQuery()) throws -> [(day: String, metric: EntryStats.MetricSummary)] {
        let (clause, values) = try self.filter(filter)
        return try database.rows("""
            SELECT name, day, count(*), avg(value), min(value), max(value) FROM (
                SELECT json_extract(data, '$.metric.name') AS name, json_extract(data, '$.metric.value') AS value,
                       substr(timestamp, 1, 10) AS day
                FROM entries \(clause))
            WHERE name IS NOT NULL GROUP BY name, day ORDER BY name, day
            """, values) {
            (day: $0.string(1), metric: EntryStats.MetricSummary(name: $0.string(0), count: Int($0.int64(2)), average: $0.double(3),
                                                                  minimum: $0.double(4), maximum: $0.double(5)))
        }
    }
}
