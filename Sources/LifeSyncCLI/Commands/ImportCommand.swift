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
            let source: ImportSource
            switch (arguments.positional(0), arguments.value("--from-sqlite")) {
            case (nil, nil):
                throw CLIError.usage("missing FILE|- (or give --from-sqlite FILE)", command: arguments.spec)
            case (_?, _?):
                throw CLIError.usage("give FILE or --from-sqlite FILE, not both", command: arguments.spec)
            case (nil, let database?):
                source = try ImportSource.backend(path: database)
            case ("-", nil):
                guard let input = context.console.readInput() else { throw CLIError.refused("cannot read standard input") }
                source = try ImportSource.bytes(input)
            case (let path?, nil):
                source = try ImportSource.file(path: path)
            }
            let replica = try context.openReplica(arguments)
            let defaults = replica.importDefaults()
            // Each record is parsed, validated and written before the next is read: a refusal
            // anywhere rolls the one transaction back, so nothing is written.
            let summary = try replica.importEntries(positionName: source.positionName) {
                try source.nextEntry(defaults: defaults)
            }
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
