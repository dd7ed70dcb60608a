/// Whose days `stats` counts by: UTC's, the process's local zone's (`TZ`, daylight saving
/// included: the CLI's), or a fixed offset east of UTC in minutes (a browser's, sent to the API).
package enum StatsDays: Equatable, Sendable {
    case utc
    case local
    case offset(minutes: Int)

    /// The offsets a zone on Earth has: UTC−12:00 … UTC+14:00.
    package static let offsetRange = -720...840

    /// The SQL expression of an entry's day (`YYYY-MM-DD`) from its UTC `timestamp` column.
    var dayExpression: String { modifier.map { "date(timestamp, \($0))" } ?? "substr(timestamp, 1, 10)" }

    /// SQLite's date modifier from UTC to these days' clock (nil: UTC itself).
    var modifier: String? {
        switch self {
        case .utc: nil
        case .local: "'localtime'"
        case .offset(let minutes): "'\(min(max(minutes, Self.offsetRange.lowerBound), Self.offsetRange.upperBound)) minutes'"
        }
    }
}

extension Replica {
    /// Counts by category, source and day (`days`' days), and per-metric averages, over the
    /// live entries `filter` selects (its `limit` and `offset` do not apply).
    package func stats(matching filter: EntryQuery = EntryQuery(), days: StatsDays = .utc) throws -> EntryStats {
        if filter.selectsEveryEntry { return try summaryStats(days: days) }
        if filter.selectsATimeWindowOnly, let window = try windowStats(filter, days: days, perDay: false) { return window.stats }
        return try scannedStats(matching: filter, days: days)
    }

    /// `stats` by reading every entry `filter` selects: the meaning the kept counts must match.
    package func scannedStats(matching filter: EntryQuery = EntryQuery(), days: StatsDays = .utc) throws -> EntryStats {
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
                          bySource: try counts("source"), byDay: try counts(days.dayExpression), metrics: metrics)
    }

    /// Each metric's summary per day (`days`' days) over the entries `filter` selects, by name
    /// then day: what a chart of a month draws, in a row per day however many entries it holds.
    package func metricsByDay(matching filter: EntryQuery = EntryQuery(), days: StatsDays = .utc) throws
        -> [(day: String, metric: EntryStats.MetricSummary)] {
        if filter.selectsATimeWindowOnly, let window = try windowStats(filter, days: days, perDay: true) { return window.byDay }
        return try scannedMetricsByDay(matching: filter, days: days)
    }

    /// `metricsByDay` by reading every entry `filter` selects: the meaning the kept counts must match.
    package func scannedMetricsByDay(matching filter: EntryQuery = EntryQuery(), days: StatsDays = .utc) throws
        -> [(day: String, metric: EntryStats.MetricSummary)] {
        let (clause, values) = try self.filter(filter)
        return try database.rows("""
            SELECT name, day, count(*), avg(value), min(value), max(value) FROM (
                SELECT json_extract(data, '$.metric.name') AS name, json_extract(data, '$.metric.value') AS value,
                       \(days.dayExpression) AS day
                FROM entries \(clause))
            WHERE name IS NOT NULL GROUP BY name, day ORDER BY name, day
            """, values) {
            (day: $0.string(1), metric: EntryStats.MetricSummary(name: $0.string(0), count: Int($0.int64(2)), average: $0.double(3),
                                                                  minimum: $0.double(4), maximum: $0.double(5)))
        }
    }
}
