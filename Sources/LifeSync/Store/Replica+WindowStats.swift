/// A metric's summary as it is added up from parts: count, sum, minimum, maximum.
struct MetricTally {
    var count = 0
    var sum = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity

    mutating func add(_ row: Statement, from column: Int32) {
        count += Int(row.int64(column))
        sum += row.double(column + 1)
        minimum = min(minimum, row.double(column + 2))
        maximum = max(maximum, row.double(column + 3))
    }

    func summary(_ name: String) -> EntryStats.MetricSummary {
        EntryStats.MetricSummary(name: name, count: count, average: sum / Double(count), minimum: minimum, maximum: maximum)
    }
}

extension Replica {
    /// `stats` (and with `perDay`, `metricsByDay`) over a window of time: its whole UTC hours
    /// from the hours' kept counts (EntrySummary's `hour_summary`, plus the backlog's rows), the
    /// parts of hours at its ends from their entries. What the dashboard asks for a day and for
    /// the last 30 days costs the hours in the window, whatever the entries in it. Nil when the
    /// window holds no whole hour (its entries are few: read them).
    func windowStats(_ filter: EntryQuery, days: StatsDays, perDay: Bool) throws
        -> (stats: EntryStats, byDay: [(day: String, metric: EntryStats.MetricSummary)])? {
        let hour: Int64 = 3_600_000
        let first = filter.since.map { ($0.millisecondsSince1970 + hour - 1).floorDiv(hour) * hour }
        let end = filter.until.map { ($0.millisecondsSince1970 + 1).floorDiv(hour) * hour }
        for bound in [first, end].compactMap({ $0 }) where !Timestamp.representable.contains(bound) { return nil }
        // Hour keys (`YYYY-MM-DDTHH`): every timestamp of an hour sorts after its key and before
        // the next hour's; "" and "~" sort before and after every timestamp. The backlog's rows
        // are found by the feed index (`+timestamp` keeps SQLite off the time index, which would
        // read every entry of the window to find the few above the mark).
        let firstKey = first.map { String(Timestamp(millisecondsSince1970: $0).iso8601.prefix(13)) } ?? ""
        let endKey = end.map { String(Timestamp(millisecondsSince1970: $0).iso8601.prefix(13)) } ?? "~"
        guard firstKey < endKey else { return nil }
        var ends: [String] = [], values: [SQLValue] = []
        if let since = filter.since { ends.append("(timestamp >= ? AND timestamp < ?)"); values += [.text(since.iso8601), .text(firstKey)] }
        if let until = filter.until { ends.append("(timestamp >= ? AND timestamp <= ?)"); values += [.text(endKey), .text(until.iso8601)] }
        let ending = ends.joined(separator: " OR ")

        var total = 0, categories: [(key: String, count: Int)] = [], sources: [(key: String, count: Int)] = []
        var hourTotals: [String: Int] = [:], metricHours: [(hour: String, name: String, tally: MetricTally)] = []
        var metrics: [[UInt8]: MetricTally] = [:]
        func take(_ row: Statement) {
            let count = Int(row.int64(3))
            switch row.string(1) {
            case "category":
                categories.append((key: row.string(2), count: count))
                total += count
                hourTotals[row.string(0), default: 0] += count
            case "source": sources.append((key: row.string(2), count: count))
            default:
                var tally = MetricTally()
                tally.add(row, from: 3)
                metrics[Array(row.string(2).utf8), default: MetricTally()].add(tally)
                metricHours.append((hour: row.string(0), name: row.string(2), tally: tally))
            }
        }
        // The kept hours as their primary key orders them, and the backlog's apart: grouping the
        // two in one statement sorted every hour of the window again.
        try database.forEachRow("""
            SELECT hour, kind, key, count, total, low, high FROM hour_summary WHERE hour >= ?1 AND hour < ?2 AND count > 0
            """, [.text(firstKey), .text(endKey)], take)
        try database.forEachRow("""
            SELECT hour, kind, key, count(*), sum(value), min(value), max(value)
            FROM (\(EntrySummary.hourKeys(where: "feed_seq > \(EntrySummary.mark) AND +timestamp >= ?1 AND +timestamp < ?2"))) GROUP BY hour, kind, key
            """, [.text(firstKey), .text(endKey)], take)
        let hours = hourTotals.filter { $0.value != 0 }.sorted { $0.key < $1.key }.map { (key: $0.key, count: $0.value) }
        var byDay = try dayCounts(fromHours: hours, days: days)
        if !ends.isEmpty {
            try database.forEachRow("""
                SELECT kind, key, count(*), sum(value), min(value), max(value) FROM (\(EntrySummary.hourKeys(where: ending))) GROUP BY kind, key
                """, values + values + values) { row in
                let count = Int(row.int64(2))
                switch row.string(0) {
                case "category": categories.append((key: row.string(1), count: count)); total += count
                case "source": sources.append((key: row.string(1), count: count))
                default: metrics[Array(row.string(1).utf8), default: MetricTally()].add(row, from: 2)
                }
            }
            byDay += try database.rows("SELECT \(days.dayExpression), count(*) FROM entries WHERE \(ending) GROUP BY 1", values) {
                (key: $0.string(0), count: Int($0.int64(1)))
            }
        }
        let stats = EntryStats(total: total, byCategory: merged(categories), bySource: merged(sources), byDay: merged(byDay),
                               metrics: metrics.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { $0.value.summary(String(decoding: $0.key, as: UTF8.self)) })
        guard perDay else { return (stats, []) }
        return (stats, try metricsByDay(hours: metricHours, ending: ending.isEmpty ? nil : (ending, values), days: days))
    }

    /// Each metric's summary per day from its summaries per whole hour, and from the entries of
    /// an hour a day's end divides and of the window's ends (`ending`), by name then day.
    private func metricsByDay(hours: [(hour: String, name: String, tally: MetricTally)], ending: (clause: String, values: [SQLValue])?,
                              days: StatsDays) throws -> [(day: String, metric: EntryStats.MetricSummary)] {
        var tallies: [[UInt8]: MetricTally] = [:]
        func key(_ name: String, _ day: String) -> [UInt8] { Array(name.utf8) + [0] + Array(day.utf8) }
        let distinct = Set(hours.map(\.hour)).sorted()
        var whereDay: [String: String] = [:], byEntry: [String] = []
        for (hour, day) in zip(distinct, try hourDays(distinct, days: days)) {
            if case .one(let day) = day { whereDay[hour] = day } else { byEntry.append(hour) }
        }
        for item in hours {
            guard let day = whereDay[item.hour] else { continue }
            let tally = item.tally
            tallies[key(item.name, day), default: MetricTally()].add(tally)
        }
        let perEntry = { (condition: String) in """
            SELECT name, day, count(*), sum(value), min(value), max(value) FROM (
                SELECT \(EntrySummary.metricName) AS name, \(EntrySummary.metricValue) AS value, \(days.dayExpression) AS day
                FROM entries WHERE \(condition))
            WHERE name IS NOT NULL AND value IS NOT NULL GROUP BY name, day
            """ }
        let parts = byEntry.map { (clause: "timestamp >= ? AND timestamp < ? || ';'", values: [SQLValue.text($0), .text($0)]) } + (ending.map { [$0] } ?? [])
        for part in parts {
            try database.forEachRow(perEntry(part.clause), part.values) { tallies[key($0.string(0), $0.string(1)), default: MetricTally()].add($0, from: 2) }
        }
        return tallies.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { entry in
            let split = entry.key.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
            return (day: String(decoding: split[1], as: UTF8.self), metric: entry.value.summary(String(decoding: split[0], as: UTF8.self)))
        }
    }
}

extension MetricTally {
    mutating func add(_ other: MetricTally) {
        count += other.count
        sum += other.sum
        minimum = min(minimum, other.minimum)
        maximum = max(maximum, other.maximum)
    }
}

extension Int64 {
    /// Division rounding toward minus infinity (instants before 1970 are negative).
    func floorDiv(_ divisor: Int64) -> Int64 { self >= 0 ? self / divisor : (self - divisor + 1) / divisor }
}
