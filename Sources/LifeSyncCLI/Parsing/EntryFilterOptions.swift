import LifeSync

/// The filters `list`, `export` and `stats` share (the LifeLog API's query parameters), one
/// meaning for all three.
extension CommandSpec {
    static let filterOptions: [OptionSpec] = [
        OptionSpec(name: "--since", kind: .value, valueName: "ISO|DATE", help: "at or after this time; a bare YYYY-MM-DD is that local day's start (TZ)"),
        OptionSpec(name: "--until", kind: .value, valueName: "ISO|DATE", help: "at or before this time; a bare YYYY-MM-DD is that whole local day (TZ)"),
        OptionSpec(name: "--category", kind: .value, valueName: "C", help: "only this category"),
        OptionSpec(name: "--source", kind: .value, valueName: "S", help: "only this source"),
        OptionSpec(name: "--tag", kind: .value, valueName: "T", help: "only entries with this tag"),
        OptionSpec(name: "--search", kind: .value, valueName: "TEXT", help: "case-insensitive partial match on the text"),
    ]
}

extension ParsedArguments {
    /// The filters given, with the default limit and offset.
    func entryFilter() throws(CLIError) -> EntryQuery {
        var query = EntryQuery()
        query.since = try time("--since", endOfDay: false)
        query.until = try time("--until", endOfDay: true)
        query.category = value("--category")
        query.source = value("--source")
        query.tag = value("--tag")
        query.search = value("--search")
        return query
    }

    /// An ISO 8601 time with a zone, or a bare `YYYY-MM-DD` read as a local day (TZ), as the
    /// CLI shows times: its first millisecond, or with `endOfDay` its last, so `--until
    /// 2026-03-01` includes all of that day.
    private func time(_ name: String, endOfDay: Bool) throws(CLIError) -> Timestamp? {
        guard let text = value(name) else { return nil }
        let bytes = Array(text.utf8)
        let isBareDate = bytes.count == 10 && bytes.enumerated().allSatisfy { i, b in
            i == 4 || i == 7 ? b == UInt8(ascii: "-") : (b >= 0x30 && b <= 0x39)
        }
        do {
            let time = try Timestamp(iso8601: isBareDate ? text + "T00:00:00.000Z" : text)  // checks the date
            return isBareDate ? LocalTime.day(text, endOfDay: endOfDay) : time
        } catch {
            throw CLIError.refused("\(name): not an ISO 8601 time with zone nor a YYYY-MM-DD date (\(error.reason)): '\(text)'")
        }
    }
}
