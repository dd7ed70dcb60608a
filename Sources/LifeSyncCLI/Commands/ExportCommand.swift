import Foundation
import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let exportCommand = Command(
        spec: CommandSpec(
            name: "export", summary: "write the live entries as JSON or CSV",
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--format", kind: .value, valueName: "json|csv", help: "output format (default json)"),
                      OptionSpec(name: "--out", kind: .value, valueName: "FILE", help: "write to FILE instead of stdout")]
                + CommandSpec.filterOptions,
            details: """
            Every live entry, oldest first, or those the filters select.
            CSV (RFC 4180) has a header row; nested fields are flattened (metric_name, latitude, …) and tags are a
            JSON array in one cell (["a;b","c"]). A text cell starting with =, +, -, @, tab or carriage return gets
            a leading ' so a spreadsheet shows it as text instead of running it as a formula.
            """),
        run: { arguments, context in
            let format = arguments.value("--format") ?? "json"
            guard format == "json" || format == "csv" else {
                throw CLIError.refused("--format must be json or csv, got '\(format)'")
            }
            let filter = try arguments.entryFilter()
            var damaged: [String] = []
            let entries = try context.openReplica(arguments).allEntries(matching: filter, damaged: &damaged)
            context.reportDamaged(damaged)
            let text = format == "json" ? JSONValue.array(entries.map(\.json)).prettyText + "\n" : CSVExport.text(entries)
            if let out = arguments.value("--out") {
                do { try UserFile.replace(out, with: Array(text.utf8)) } catch { throw CLIError.refused("\(error)") }
                context.console.error("exported \(entries.count) entries to \(out)")
            } else {
                context.console.print(String(text.dropLast()))
            }
            return 0
        })
}

/// RFC 4180 CSV of entries, one row each, nested fields flattened.
enum CSVExport {
    static let header = ["id", "timestamp", "recorded_at", "source", "device_id", "category", "text",
                         "metric_name", "metric_value", "metric_unit", "metric_scale_min", "metric_scale_max",
                         "latitude", "longitude", "accuracy", "altitude", "place_name", "tags"]

    static func text(_ entries: [LogEntry]) -> String {
        var lines = [header.joined(separator: ",")]
        for entry in entries {
            let data = entry.data
            // Numbers are ours and stay numbers (a negative latitude is not a formula); every
            // string came from someone's input and is neutralised.
            func number(_ n: Double?) -> String { n.map { JSONValue.number($0).canonicalText } ?? "" }
            func text(_ s: String?) -> String { s.map(neutralised) ?? "" }
            let tags = data.tags.map { JSONValue.array($0.map(JSONValue.string)).canonicalText } ?? ""
            let fields: [String] = [
                text(entry.id), entry.timestamp.iso8601, entry.recordedAt.iso8601, text(entry.source), text(entry.deviceId),
                text(entry.category), text(data.text), text(data.metric?.name), number(data.metric?.value), text(data.metric?.unit),
                number(data.metric?.scaleMin), number(data.metric?.scaleMax), number(data.location?.latitude),
                number(data.location?.longitude), number(data.location?.accuracy), number(data.location?.altitude),
                text(data.location?.placeName), tags,
            ]
            lines.append(fields.map(quote).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A cell a spreadsheet would read as a formula (OWASP's list: =, +, -, @, tab, carriage
    /// return) gets a leading apostrophe, which spreadsheets show as text and do not display.
    static func neutralised(_ field: String) -> String {
        guard let first = field.unicodeScalars.first, ["=", "+", "-", "@", "\t", "\r"].contains(first) else { return field }
        return "'" + field
    }

    static func quote(_ field: String) -> String {
        // Scalars, not Characters: "\r\n" is one Character equal to neither "\r" nor "\n".
        guard field.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
