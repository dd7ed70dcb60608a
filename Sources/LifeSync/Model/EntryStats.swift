/// The dashboard aggregations of the LifeLog document over the live entries.
public struct EntryStats: Equatable, Sendable {
    public struct MetricSummary: Equatable, Sendable {
        public var name: String
        public var count: Int
        public var average: Double
        public var minimum: Double
        public var maximum: Double
    }

    public var total: Int
    /// Sorted by key; uncategorised entries count under "(none)".
    public var byCategory: [(key: String, count: Int)]
    public var bySource: [(key: String, count: Int)]
    /// UTC days, `YYYY-MM-DD`.
    public var byDay: [(key: String, count: Int)]
    public var metrics: [MetricSummary]

    public static func == (a: EntryStats, b: EntryStats) -> Bool {
        func same(_ x: [(key: String, count: Int)], _ y: [(key: String, count: Int)]) -> Bool {
            x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.count == $1.count }
        }
        return a.total == b.total && same(a.byCategory, b.byCategory) && same(a.bySource, b.bySource)
            && same(a.byDay, b.byDay) && a.metrics == b.metrics
    }

    public var json: JSONValue {
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
