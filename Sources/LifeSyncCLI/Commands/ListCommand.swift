import LifeSync

extension LifeSyncCommandLine {
    static let listCommand = Command(
        spec: CommandSpec(
            name: "list", summary: "list entries, newest first",
            options: [CommandSpec.dbOption, CommandSpec.jsonFlag] + CommandSpec.filterOptions + [
                OptionSpec(name: "--limit", kind: .value, valueName: "N", help: "at most N entries (default 100)"),
                OptionSpec(name: "--offset", kind: .value, valueName: "N", help: "skip the first N"),
                OptionSpec(name: "--ids", kind: .flag, help: "whole entry IDs instead of their shortest unique start"),
            ]),
        run: { arguments, context in
            var query = try arguments.entryFilter()
            query.limit = try arguments.integer("--limit", default: EntryQuery.defaultLimit, range: 0...1_000_000)
            query.offset = try arguments.integer("--offset", default: 0, range: 0...Int(Int32.max))
            var damaged: [String] = []
            let replica = try context.openReplica(arguments)
            let entries = try replica.entries(matching: query, damaged: &damaged)
            context.reportDamaged(damaged)
            if arguments.flag("--json") {
                context.console.print(JSONValue.array(entries.map(\.json)).prettyText)
            } else if entries.isEmpty {
                context.console.print("no entries")
            } else {
                for entry in entries {
                    context.console.print(listLine(entry, id: arguments.flag("--ids") ? entry.id : try replica.uniquePrefix(of: entry.id)))
                }
            }
            return 0
        })

    /// `2026-11-22 09:30  mood      mood 7 (1–10) "slept well" #morning  watch_3f2a9c01`: the
    /// local minute, the category, the data cut to fit 80 columns, and `id` (the shortest start
    /// of the entry's ID that `get`, `update` and `delete` take, or with `--ids` all of it).
    static func listLine(_ entry: LogEntry, id: String) -> String {
        let category = fitted(entry.category ?? "-", width: 16)
        let head = "\(LocalTime.minute(entry.timestamp))  \(category.padded(to: max(8, category.count)))  "
        return head + fitted(summary(entry), width: max(8, columns - head.count - 2 - id.count)) + "  " + id
    }

    /// The entry's data in a few words.
    static func summary(_ entry: LogEntry) -> String {
        var parts: [String] = []
        if let metric = entry.data.metric {
            var text = "\(metric.name) \(JSONValue.number(metric.value).canonicalText)"
            if let unit = metric.unit { text += " \(unit)" }
            if let low = metric.scaleMin, let high = metric.scaleMax {
                text += " (\(JSONValue.number(low).canonicalText)–\(JSONValue.number(high).canonicalText))"
            }
            parts.append(text)
        }
        if let text = entry.data.text {
            let oneLine = text.split(whereSeparator: \.isNewline).joined(separator: " ")
            parts.append("\"" + (oneLine.count > 60 ? oneLine.prefix(59) + "…" : oneLine) + "\"")
        }
        if let location = entry.data.location {
            parts.append("@" + (location.placeName ?? "\(location.latitude),\(location.longitude)"))
        }
        for tag in entry.data.tags ?? [] { parts.append("#" + tag) }
        return parts.isEmpty ? "(no data)" : parts.joined(separator: " ")
    }
}
