import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let importCommand = Command(
        spec: CommandSpec(
            name: "import", summary: "import entries from NDJSON, a JSON array or a LifeLog backend database, all or nothing",
            positionals: ["FILE|-"], optionalPositionals: 1,
            options: [CommandSpec.dbOption, CommandSpec.jsonFlag,
                      OptionSpec(name: "--from-sqlite", kind: .value, valueName: "FILE",
                                 help: "read the entries table of a LifeLog backend database (opened read-only)")],
            details: """
            Each record is a LifeLog entry; `timestamp` is required. A bad record is refused naming its line
            (NDJSON), index (array) or row (--from-sqlite), and nothing is written.
            An entry is recognised by its ID: a bare UUID (any case) becomes lifelog_{uuid} in lowercase, and a
            record without one gets lifelog_{a UUID from the SHA-256 of its content}, the same on every node.
            An entry the replica already holds, changed or deleted here since, is left as it is, so
            re-importing is harmless. `created_at` and `synced` are accepted and dropped.
            """),
        run: { arguments, context in
            let records: [(position: String, json: JSONValue)]
            switch (arguments.positional(0), arguments.value("--from-sqlite")) {
            case (nil, nil):
                throw CLIError.usage("missing FILE|- (or give --from-sqlite FILE)", command: arguments.spec)
            case (_?, _?):
                throw CLIError.usage("give FILE or --from-sqlite FILE, not both", command: arguments.spec)
            case (nil, let database?):
                do { records = try LifeLogBackendFile.records(path: database).map { ($0.position, $0.json) } } catch {
                    throw CLIError.refused("import: \(error)")
                }
            case (let source?, nil):
                records = try parseImport(try readInput(source, context: context))
            }
            let replica = try context.openReplica(arguments)
            let defaults = replica.importDefaults()
            var entries: [LogEntry] = []
            entries.reserveCapacity(records.count)
            for record in records {
                do { entries.append(try LogEntry.validated(from: record.json, defaults: defaults)) } catch {
                    throw CLIError.refused("import: \(record.position): \(error)")
                }
            }
            let summary = try replica.importEntries(entries, positionName: { records[$0].position })
            if arguments.flag("--json") {
                context.console.print(summary.json.prettyText)
            } else {
                context.console.print(summary.line)
            }
            return 0
        })

    /// A FILE argument's bytes, or standard input's for `-`.
    static func readInput(_ source: String, context: CommandContext) throws -> [UInt8] {
        if source == "-" {
            guard let input = context.console.readInput() else { throw CLIError.refused("cannot read standard input") }
            return input
        }
        do { return try UserFile.read(source) } catch { throw CLIError.refused("\(error)") }
    }

    /// Splits NDJSON or a JSON array into records named by line or index; nothing is validated
    /// as an entry yet.
    static func parseImport(_ bytes: [UInt8]) throws -> [(position: String, json: JSONValue)] {
        let firstSignificant = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if firstSignificant == UInt8(ascii: "[") {
            let document: JSONValue
            do { document = try JSONValue.parse(bytes: bytes) } catch { throw CLIError.refused("import: \(error)") }
            guard case .array(let items) = document else { throw CLIError.refused("import: expected a JSON array") }
            return items.enumerated().map { ("record [\($0.offset)]", $0.element) }
        }
        var records: [(position: String, json: JSONValue)] = []
        var lineNumber = 0
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) { continue }
            do { records.append(("line \(lineNumber)", try JSONValue.parse(bytes: Array(line)))) } catch {
                throw CLIError.refused("import: line \(lineNumber): \(error)")
            }
        }
        return records
    }
}

extension ImportSummary {
    /// `imported 3 entries (2 already present; 1 already here with other content, left as they are: lifelog_…)`
    var line: String {
        func ids(_ list: [String]) -> String { list.prefix(5).joined(separator: ", ") + (list.count > 5 ? ", …" : "") }
        var notes: [String] = []
        if unchanged > 0 { notes.append("\(unchanged) already present") }
        if !keptAsHere.isEmpty { notes.append("\(keptAsHere.count) already here with other content, left as they are: \(ids(keptAsHere))") }
        if !deletedHere.isEmpty { notes.append("\(deletedHere.count) deleted here, not restored: \(ids(deletedHere))") }
        return "imported \(written) entries" + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")")
    }

    var json: JSONValue {
        .object([("imported", .number(Double(written))), ("already_present", .number(Double(unchanged))),
                 ("kept_as_here", .array(keptAsHere.map(JSONValue.string))),
                 ("deleted_here", .array(deletedHere.map(JSONValue.string)))])
    }
}
