extension EntryQuery {
    /// Whether the query selects every live entry (its page, `limit` and `offset`, aside).
    var selectsEveryEntry: Bool {
        since == nil && until == nil && category == nil && source == nil && tag == nil && search == nil && !hasLocation
    }
}

extension Replica {
    /// `stats` over the whole journal from its kept counts (EntrySummary), without reading the
    /// entries: what `lifesync stats` and the dashboard ask first, at any size.
    func summaryStats(days: StatsDays) throws -> EntryStats {
        EntryStats(total: try summaryTotal("all"), byCategory: try summaryCounts("category"), bySource: try summaryCounts("source"),
                   byDay: try dayCounts(fromHours: try summaryCounts("hour"), days: days), metrics: try summaryMetrics())
    }

    /// Counts by `days`' day from counts by UTC hour (`YYYY-MM-DDTHH`). An hour lies in one
    /// day of any clock whose offset from UTC is a whole number of hours and does not change
    /// within it: its first and last second are on the same day, an hour apart. An hour that a
    /// day's end splits (a zone half an hour off UTC, such as India's) or that a change of
    /// offset falls inside is counted entry by entry, through the time index. The day of each
    /// instant is SQLite's own (`dayExpression`), as the scanning `stats` has it.
    func dayCounts(fromHours hours: [(key: String, count: Int)], days: StatsDays) throws -> [(key: String, count: Int)] {
        guard let modifier = days.modifier else {
            return merged(hours.map { (key: String($0.key.prefix(10)), count: $0.count) })
        }
        var counts: [(key: String, count: Int)] = []
        var split: [String] = []
        let bounds = try database.prepare("SELECT datetime(?1 || ':00:00', \(modifier)), datetime(?1 || ':59:59', \(modifier))")
        for hour in hours {
            bounds.bind(hour.key, at: 1)
            defer { bounds.reset() }
            guard try bounds.step(), let first = bounds.optionalString(0), let last = bounds.optionalString(1),
                  first.prefix(10) == last.prefix(10), let start = Self.secondOfDay(first), let end = Self.secondOfDay(last),
                  end - start == 3_599 else {
                split.append(hour.key)
                continue
            }
            counts.append((key: String(first.prefix(10)), count: hour.count))
        }
        let entryDays = try database.prepare("""
            SELECT \(days.dayExpression), count(*) FROM entries WHERE timestamp >= ?1 AND timestamp < ?1 || ';' GROUP BY 1
            """)
        for hour in split {
            // The hour's timestamps all begin `YYYY-MM-DDTHH:`, and ';' sorts right after ':'.
            entryDays.bind(hour, at: 1)
            defer { entryDays.reset() }
            while try entryDays.step() { counts.append((key: entryDays.string(0), count: Int(entryDays.int64(1)))) }
        }
        return merged(counts)
    }

    /// The seconds since midnight of SQLite's `YYYY-MM-DD HH:MM:SS`.
    private static func secondOfDay(_ text: String) -> Int? {
        let parts = text.dropFirst(11).split(separator: ":").compactMap { Int($0) }
        return parts.count == 3 ? parts[0] * 3_600 + parts[1] * 60 + parts[2] : nil
    }

    /// Counts of the same key added up, sorted by key.
    private func merged(_ counts: [(key: String, count: Int)]) -> [(key: String, count: Int)] {
        var byKey: [String: Int] = [:]
        for item in counts { byKey[item.key, default: 0] += item.count }
        return byKey.sorted { $0.key < $1.key }.map { (key: $0.key, count: $0.value) }
    }
}
