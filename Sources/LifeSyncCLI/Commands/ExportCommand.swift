import FoundationEssentials
import LifeSync
import LifeSyncAPI
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
            let name = arguments.value("--format") ?? "json"
            guard let format = ExportFormat(rawValue: name) else {
                throw CLIError.refused("--format must be json or csv, got '\(name)'")
            }
            let filter = try arguments.entryFilter()
            let export = EntryExportSource(replica: try context.openReplica(arguments), filter: filter, format: format)
            // Written a piece at a time (whole entries, about a MiB each): memory stays the same
            // whatever the journal's size.
            func pieces(_ write: ([UInt8]) throws -> Void) throws {
                while case .bytes(let piece) = try export.next(maximumBytes: 1 << 20) { try write(piece) }
            }
            if let out = arguments.value("--out") {
                do { try UserFile.replace(out, producing: { write in try pieces { try write($0) } }) } catch let error as RuntimeError {
                    throw CLIError.refused("\(error)")
                }
                context.reportDamaged(export.damaged)
                context.console.error("exported \(export.count) entries to \(out)")
            } else {
                try pieces { context.console.write($0) }
                context.reportDamaged(export.damaged)
            }
            return 0
        })
}

