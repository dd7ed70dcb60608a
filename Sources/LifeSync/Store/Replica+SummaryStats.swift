extension EntryQuery {
    /// Whether the query selects every live entry (its page, `limit` and `offset`, aside).
    var selectsEveryEntry: Bool { !hasTimeWindow && selectsEveryEntryInItsWindow }

    /// Whether the query selects by time only (since, until, or both).
    var selectsATimeWindowOnly: Bool { hasTimeWindow && selectsEveryEntryInItsWindow }

    private var hasTimeWindow: Bool { since != nil || until != nil }
    private var selectsEveryEntryInItsWindow: Bool { category == nil && source == nil && tag == nil && search == nil && !hasLocation }
}

/// Where a UTC hour's entries fall on a clock (`StatsDays`): all on one day; on two, before and
/// after the UTC instant (`split`, ISO 8601) of that day's end; or to be told entry by entry.
enum HourDay {
    case one(String)
    case two(String, String, split: String)
    case byEntry
}

extension Replica {
    /// `stats` over the whole journal from its kept counts (EntrySummary), without reading the
    /// entries: what `lifesync stats` and the dashboard ask first, at any size.
    func summaryStats(days: StatsDays) throws -> EntryStats {
        EntryStats(total: try summaryTotal("all"), byCategory: try summaryCounts("category"), bySource: try summaryCounts("source"),
                   byDay: try dayCounts(fromHours: try summaryCounts("hour"), days: days), metrics: try summaryMetrics())
    }

    /// Counts by `days`' day from counts by UTC hour (`YYYY-MM-DDTHH`, sorted): an hour on one
    /// day adds to it; one a day's end divides is counted in its two time ranges, and one to be
    /// told entry by entry is, both through the time index. Days with no entry are left out.
    func dayCounts(fromHours hours: [(key: String, count: Int)], days: StatsDays) throws -> [(key: String, count: Int)] {
        var counts: [(key: String, count: Int)] = []
        let placed = try hourDays(hours.map(\.key), days: days)
        let range = try database.prepare("SELECT count(*) FROM entries WHERE timestamp >= ?1 AND timestamp < ?2")
        func count(from lower: String, to upper: String) throws -> Int {
            range.bind(lower, at: 1)
            range.bind(upper, at: 2)
            defer { range.reset() }
            return try range.step() ? Int(range.int64(0)) : 0
        }
        let entryDays = try database.prepare("""
            SELECT \(days.dayExpression), count(*) FROM entries WHERE timestamp >= ?1 AND timestamp < ?1 || ';' GROUP BY 1
            """)
        for (hour, day) in zip(hours, placed) {
            switch day {
            case .one(let day): counts.append((key: day, count: hour.count))
            case .two(let before, let after, let split):
                // The hour's timestamps all begin `YYYY-MM-DDTHH:`, and ';' sorts right after ':'.
                counts += [(key: before, count: try count(from: hour.key, to: split)), (key: after, count: try count(from: split, to: hour.key + ";"))]
            case .byEntry:
                entryDays.bind(hour.key, at: 1)
                defer { entryDays.reset() }
                while try entryDays.step() { counts.append((key: entryDays.string(0), count: Int(entryDays.int64(1)))) }
            }
        }
        // A divided hour whose entries all lie on one side names no entry of the other day.
        return merged(counts).filter { $0.count > 0 }
    }

    /// Where each UTC hour (`YYYY-MM-DDTHH`, sorted) falls on `days`' clock, a UTC day at a
    /// time. Over a UTC day whose clock keeps one offset from UTC (the same at its first and its
    /// last second: no zone changes its offset twice in a day), an hour lies in the day of its
    /// first second, unless that day ends inside it (a zone half an hour off UTC, such as
    /// India's). The hours of a day whose offset changes, and an hour whose day would fall
    /// outside the years 0000–9999, are told entry by entry. The offsets are SQLite's own, so
    /// each day is the one the scanning `stats` (`dayExpression`) gives each entry.
    func hourDays(_ hours: [String], days: StatsDays) throws -> [HourDay] {
        guard days.modifier != nil else { return hours.map { .one(String($0.prefix(10))) } }
        let day: Int64 = 86_400_000
        var placed: [HourDay] = []
        placed.reserveCapacity(hours.count)
        var utcDay: Int64?, offset: Int?
        var named: (day: Int64, text: String)?  // consecutive hours mostly share their day's name
        func name(_ midnight: Int64) -> String {
            if let named, named.day == midnight { return named.text }
            let text = Timestamp(millisecondsSince1970: midnight).day
            named = (midnight, text)
            return text
        }
        for hour in hours {
            guard let start = Self.hourStart(hour) else {
                placed.append(.byEntry)
                continue
            }
            if utcDay != start.floorDiv(day) {
                utcDay = start.floorDiv(day)
                offset = try steadyOffset(utcDay: String(hour.prefix(10)), days: days)
            }
            guard let offset else {
                placed.append(.byEntry)
                continue
            }
            let local = start + Int64(offset) * 1000
            let midnight = local.floorDiv(day) * day, into = local - midnight
            guard Timestamp.representable.contains(midnight), Timestamp.representable.contains(midnight + 2 * day - 1) else {
                placed.append(.byEntry)
                continue
            }
            if into + 3_600_000 <= day {
                placed.append(.one(name(midnight)))
            } else {
                // Midnight falls inside the hour, at this UTC instant.
                placed.append(.two(name(midnight), name(midnight + day),
                                   split: Timestamp(millisecondsSince1970: start + (day - into)).iso8601))
            }
        }
        return placed
    }

    /// The instant an hour key (`YYYY-MM-DDTHH`) starts, read digit by digit: a million-entry
    /// journal has some 20,000 of them to place.
    private static func hourStart(_ key: String) -> Int64? {
        var utf8 = key.utf8.makeIterator()
        func number(_ digits: Int, then separator: UInt8?) -> Int? {
            var value = 0
            for _ in 0..<digits {
                guard let byte = utf8.next(), (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            if let separator { guard utf8.next() == separator else { return nil } }
            return value
        }
        guard let year = number(4, then: 0x2D), let month = number(2, then: 0x2D), let day = number(2, then: 0x54),
              let hour = number(2, then: nil), utf8.next() == nil, (1...12).contains(month), day >= 1, day <= Timestamp.daysIn(month: month, year: year), hour < 24 else { return nil }
        return (Int64(Timestamp.daysSinceEpoch(year: year, month: month, day: day)) * 24 + Int64(hour)) * 3_600_000
    }

    /// The offset from UTC, in seconds, that `days`' clock keeps through the whole UTC day
    /// `utcDay` (`YYYY-MM-DD`), or nil if it changes within it.
    private func steadyOffset(utcDay: String, days: StatsDays) throws -> Int? {
        guard let modifier = days.modifier else { return 0 }
        let offsets = try database.prepare("""
            SELECT round((julianday(?1, \(modifier)) - julianday(?1)) * 86400), round((julianday(?2, \(modifier)) - julianday(?2)) * 86400)
            """)
        offsets.bind(utcDay + " 00:00:00", at: 1)
        offsets.bind(utcDay + " 23:59:59", at: 2)
        defer { offsets.reset() }
        guard try offsets.step(), !offsets.isNull(0), !offsets.isNull(1), offsets.double(0) == offsets.double(1) else { return nil }
        return Int(offsets.double(0))
    }

    /// Counts of the same key added up, sorted by key. Keys are compared as SQLite does (their
    /// UTF-8 bytes), not as Swift's strings (canonically equivalent spellings are one to it).
    func merged(_ counts: [(key: String, count: Int)]) -> [(key: String, count: Int)] {
        var byKey: [[UInt8]: Int] = [:]
        for item in counts { byKey[Array(item.key.utf8), default: 0] += item.count }
        return byKey.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { (key: String(decoding: $0.key, as: UTF8.self), count: $0.value) }
    }
}
