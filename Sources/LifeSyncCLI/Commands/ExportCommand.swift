import Foundation
import LifeSync

extension LifeSyncCommandLine {
    static let exportCommand = Command(
        spec: CommandSpec(
            name: "export", summary: "write every live entry as JSON or CSV",
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--format", kind: .value, valueName: "json|csv", help: "output format (default json)"),
                      OptionSpec(name: "--out", kind: .value, valueName: "FILE", help: "write to FILE instead of stdout")],
            details: "CSV has a header row; nested fields are flattened (metric_name, latitude, …) and tags joined with ';'."),
        run: { arguments, context in
            let format = arguments.value("--format") ?? "json"
            guard format == "json" || format == "csv" else {
                throw CLIError.usage("--format must be json or csv, got '\(format)'", command: arguments.spec)
            }
            var damaged: [String] = []
            let entries = try context.openReplica(arguments).allEntries(damaged: &damaged)
            context.reportDamaged(damaged)
            let text = format == "json" ? JSONValue.array(entries.map(\.json)).prettyText + "\n" : CSVExport.text(entries)
            if let out = arguments.value("--out") {
                // Write beside the target and rename, so a failed export never leaves half a file.
                let temporary = out + ".partial"
                guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) else {
                    throw CLIError.refused("cannot write \(out)")
                }
                if rename(temporary, out) != 0 {
                    unlink(temporary)
                    throw CLIError.refused("cannot write \(out): \(String(cString: strerror(errno)))")
                }
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
            func number(_ n: Double?) -> String { n.map { JSONValue.number($0).canonicalText } ?? "" }
            let fields: [String] = [
                entry.id, entry.timestamp.iso8601, entry.recordedAt.iso8601, entry.source, entry.deviceId, entry.category ?? "",
                data.text ?? "", data.metric?.name ?? "", number(data.metric?.value), data.metric?.unit ?? "",
                number(data.metric?.scaleMin), number(data.metric?.scaleMax), number(data.location?.latitude),
                number(data.location?.longitude), number(data.location?.accuracy), number(data.location?.altitude),
                data.location?.placeName ?? "", (data.tags ?? []).joined(separator: ";"),
            ]
            lines.append(fields.map(quote).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func quote(_ field: String) -> String {
        // Scalars, not Characters: "\r\n" is one Character equal to neither "\r" nor "\n".
        guard field.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
