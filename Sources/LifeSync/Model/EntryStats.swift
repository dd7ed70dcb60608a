/// The dashboard aggregations of the LifeLog document over the live entries.
package struct EntryStats: Equatable, Sendable {
    package struct MetricSummary: Equatable, Sendable {
        package var name: String
        package var count: Int
        package var average: Double
        package var minimum: Double
        package var maximum: Double
    }

    package var total: Int
    /// Sorted by key; uncategorised entries count under "(none)".
    package var byCategory: [(key: String, count: Int)]
    package var bySource: [(key: String, count: Int)]
    /// UTC days, `YYYY-MM-DD`.
    package var byDay: [(key: String, count: Int)]
    package var metrics: [MetricSummary]

    package static func == (a: EntryStats, b: EntryStats) -> Bool {
        func same(_ x: [(key: String, count: Int)], _ y: [(key: String, count: Int)]) -> Bool {
            x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.count == $1.count }
        }
        return a.total == b.total && same(a.byCategory, b.byCategory) && same(a.bySource, b.bySource)
            && same(a.byDay, b.byDay) && a.metrics == b.metrics
    }

    package var json: JSONValue {
        func counts(_ list: [(key: String, count: Int)]) -> JSONValue {
            .object(list.map { ($0.key, .number(Double($0.count))) })
        }
        return .object([
            ("total", .number(Double(total))),
            ("by_category", counts(byCategory)),
            ("by_source", counts(bySource)),
            ("by_day", counts(byDay)),
            ("metrics", .object(metrics.map { metric in
                (metric.name, .object([("count", .number(Double(metric.count))), ("average", .number(metric.average)),
                                       ("min", .number(metric.minimum)), ("max", .number(metric.maximum))]))
            })),
        ])
    }
}
