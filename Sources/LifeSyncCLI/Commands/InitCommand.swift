import LifeSync

extension LifeSyncCommandLine {
    static let initCommand = Command(
        spec: CommandSpec(
            name: "init", summary: "create a replica for a watch, phone or mac and print its node ID",
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--role", kind: .value, valueName: "watch|phone|mac", help: "the device role (required)"),
                      OptionSpec(name: "--name", kind: .value, valueName: "NAME", help: "the device's name, e.g. \"Kitchen iPad\" (change it with lifesync name)")],
            details: "Running init again with the same role prints the same node ID (and renames it, with --name); another role is refused."),
        run: { arguments, context in
            guard let roleText = arguments.value("--role") else {
                throw CLIError.usage("--role is required (watch, phone or mac)", command: arguments.spec)
            }
            guard let role = Role(rawValue: roleText) else {
                throw CLIError.refused("--role must be watch, phone or mac, got '\(roleText)'")
            }
            // Checked before the replica is created, so a bad name leaves no file behind.
            let name = try arguments.value("--name").map { text in
                do throws(ValidationError) { return try DeviceName.validated(text, field: "--name") } catch { throw CLIError.refused(error.description) }
            }
            let replica = try Replica.create(path: context.databasePath(arguments), role: role, clock: context.clock, random: context.random)
            if let name { try replica.setOwnName(name) }
            context.console.print(replica.identity.nodeID)
            return 0
        })

    static let nameCommand = Command(
        spec: CommandSpec(
            name: "name", summary: "show or change this device's name (\"Kitchen iPad\"), shown instead of its node ID",
            positionals: ["NAME"], optionalPositionals: 1, options: [CommandSpec.dbOption],
            details: "A name has 1 to \(DeviceName.maximumLength) characters and no control characters. Name a peer with lifesync peers name."),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            guard let text = arguments.positional(0) else {
                context.console.print(try replica.ownName() ?? "(no name; give one with lifesync name \"NAME\")")
                return 0
            }
            try replica.setOwnName(text)
            context.console.print("\(replica.identity.nodeID) is now named \"\(try replica.ownName() ?? text)\"")
            return 0
        })
}
