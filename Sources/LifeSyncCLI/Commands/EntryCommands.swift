import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let getCommand = Command(
        spec: CommandSpec(name: "get", summary: "print one entry as JSON", positionals: ["ID"],
                          options: [CommandSpec.dbOption, OptionSpec(name: "--json", kind: .flag, help: "JSON, as always: taken like every reporting command's")]),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            context.console.print(try replica.entry(id: replica.entryID(typed: arguments.positional(0)!)).json.prettyText)
            return 0
        })

    static let updateCommand = Command(
        spec: CommandSpec(
            name: "update", summary: "change an entry with a JSON merge patch (RFC 7396)", positionals: ["ID"],
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--json", kind: .value, valueName: "PATCH|-", help: "the merge patch (required); null removes a field")],
            details: "Example: lifesync update ID --json '{\"data\": {\"text\": \"better\", \"tags\": null}}'"),
        run: { arguments, context in
            guard let patchText = arguments.value("--json") else {
                throw CLIError.usage("--json PATCH is required", command: arguments.spec)
            }
            let patch = try parseJSONArgument(patchText, context: context, what: "--json")
            let replica = try context.openReplica(arguments)
            let entry = try replica.update(id: replica.entryID(typed: arguments.positional(0)!), patch: patch)
            context.console.print(entry.id)
            return 0
        })

    static let deleteCommand = Command(
        spec: CommandSpec(name: "delete", summary: "delete an entry or a recording (a tombstone that replicates)", positionals: ["ID"],
                          options: [CommandSpec.dbOption]),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let id = arguments.positional(0)!
            if try replica.isRecording(id: id) {
                // An explicit user delete: the one way a recording leaves every replica.
                try replica.deleteRecording(id: id, from: try FileRecordingStorage(replicaPath: replica.path))
                context.console.print("deleted recording \(id)")
                return 0
            }
            let entryID = try replica.entryID(typed: id)
            try replica.delete(id: entryID)
            context.console.print("deleted \(entryID)")
            return 0
        })
}

extension Replica {
    /// The live entry a person means by `given`: its whole ID (as `entryID(addressedBy:)` takes
    /// it), or a unique start of it as `list` shows it (`phone_ce2c2334`, or of the UUID part,
    /// `ce2c2334`). An unknown or ambiguous start is refused, naming what it matched.
    func entryID(typed given: String) throws -> String {
        let addressed = try entryID(addressedBy: given)
        if try entryIDs(startingWith: addressed, limit: 1) == [addressed] { return addressed }
        let matches = try entryIDs(startingWith: given, limit: 4)
        switch matches.count {
        case 1: return matches[0]
        case 0 where given.utf8.count >= 36: throw ReplicaError.notFound(id: addressed)  // a whole ID, as always
        case 0: throw CLIError.refused("no entry's ID starts with '\(given)' (lifesync list shows them)")
        default:
            throw CLIError.refused("'\(given)' starts more than one entry's ID (\(matches.prefix(3).joined(separator: ", "))"
                                   + (matches.count > 3 ? ", …" : "") + "): give more of it")
        }
    }
}
