import LifeSync

extension LifeSyncCommandLine {
    static let conflictsCommand = Command(
        spec: CommandSpec(
            name: "conflicts", summary: "list the losing concurrent versions kept as backup; resolve or dismiss them",
            positionals: ["resolve|dismiss", "ENTRY"], optionalPositionals: 2,
            options: [CommandSpec.dbOption, CommandSpec.jsonFlag,
                      OptionSpec(name: "--keep", kind: .value, valueName: "winner|loser", help: "resolve: the side to keep (default winner)"),
                      OptionSpec(name: "--field", kind: .value, valueName: "F", help: "resolve --keep loser: take only this field of the loser (e.g. data.text, data.tags, category)"),
                      OptionSpec(name: "--loser", kind: .value, valueName: "NODE", help: "resolve --keep loser: the loser to keep when there are several (its node ID)"),
                      DeviceLabels.idsFlag],
            details: """
                Without arguments: each conflict with the devices that wrote both sides and, field by field, \
                what stands now beside what lost. `resolve` writes a new version that has seen both sides: it \
                replicates, and clears the record on every replica it reaches. `dismiss` forgets the record \
                here only and writes nothing.
                Example: lifesync conflicts resolve ENTRY --keep loser --field data.text
                """),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            guard let action = arguments.positional(0) else { return try listConflicts(replica, arguments, context) }
            guard let entryID = arguments.positional(1) else {
                throw CLIError.usage("\(action) needs the ENTRY whose conflicts it settles", command: arguments.spec)
            }
            switch action {
            case "resolve":
                let keepText = arguments.value("--keep") ?? ConflictSide.winner.rawValue
                guard let keep = ConflictSide(rawValue: keepText) else {
                    throw CLIError.usage("--keep takes winner or loser, not '\(keepText)'", command: arguments.spec)
                }
                let stamp = try replica.resolveConflict(entryID: entryID, keep: keep, field: arguments.value("--field"),
                                                        loserOrigin: arguments.value("--loser"))
                context.console.print("resolved \(entryID): kept the \(keep.rawValue)\(arguments.value("--field").map { "'s \($0)" } ?? "")"
                                      + " as a new version (\(stamp.hlc)); it clears the conflict on every replica it reaches")
            case "dismiss":
                let removed = try replica.dismissConflicts(entryID: entryID)
                context.console.print("dismissed \(removed) conflict record\(removed == 1 ? "" : "s") of \(entryID) on this replica")
            default:
                throw CLIError.usage("unknown action '\(action)': conflicts [resolve|dismiss ENTRY]", command: arguments.spec)
            }
            return 0
        })

    private static func listConflicts(_ replica: Replica, _ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let conflicts = try replica.conflicts()
        let devices = try replica.devices()
        if arguments.flag("--json") {
            context.console.print(JSONValue.array(conflicts.map { $0.json(device: { devices[$0] }) }).prettyText)
            return 0
        }
        if conflicts.isEmpty { context.console.print("no conflicts") }
        let labels = try DeviceLabels(replica, arguments)
        func device(_ stamp: VersionStamp) -> String {
            guard let known = devices[stamp.origin] else { return "origin \(stamp.origin.prefix(8))" }
            return labels.label(known.nodeID) + (known.role.map { " (\($0.rawValue))" } ?? "")
        }
        let console = context.console
        for conflict in conflicts {
            // What the entry is, as its person knows it: when, what kind, its first words.
            if let entry = conflict.current ?? conflict.loserEntry {
                console.print(Self.fitted("\(entry.timestamp.local)  \(entry.category ?? "-")  \(summary(entry))"))
            }
            console.print("  entry \(conflict.entryID)")
            if conflict.loser.deleted && !conflict.winner.deleted {
                let when = Timestamp(millisecondsSince1970: conflict.loser.hlc.milliseconds).local
                console.print(Self.fitted("  deleted on \(device(conflict.loser)) at \(when),"))
                console.print(Self.fitted("  kept for a concurrent edit on \(device(conflict.winner))"))
                console.print("  (detected \(conflict.detectedAt.local))")
                console.print("    --keep loser deletes it everywhere; --keep winner keeps it")
                continue
            }
            let what = conflict.loser.deleted ? "delete" : conflict.lostFields.map { $0.fields.map(\.name).joined(separator: ", ") } ?? "version"
            console.print(Self.fitted("  \(device(conflict.loser))'s \(what)"))
            console.print(Self.fitted("  lost to \(device(conflict.winner))'s \(conflict.winner.deleted ? "delete" : "version")"
                                      + " (detected \(conflict.detectedAt.local))"))
            for difference in conflict.fields {
                console.print("    \(difference.field)")
                console.print(Self.fitted("        now:   \(difference.winner?.canonicalText ?? "(absent)")"))
                console.print(Self.fitted("        loser: \(difference.loser?.canonicalText ?? "(absent)")"))
            }
            if conflict.fields.isEmpty { console.print("    (the same content on both sides)") }
        }
        if !conflicts.isEmpty {
            context.console.print("settle one with: lifesync conflicts resolve ENTRY [--keep winner|loser]")
            context.console.print("                 [--field F]   (whole values: --json)")
        }
        return 0
    }
}
