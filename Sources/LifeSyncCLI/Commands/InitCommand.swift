import LifeSync

extension LifeSyncCommandLine {
    static let initCommand = Command(
        spec: CommandSpec(
            name: "init", summary: "create a replica for a watch, phone or mac and print its node ID",
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--role", kind: .value, valueName: "watch|phone|mac", help: "the device role (required)")],
            details: "Running init again with the same role prints the same node ID; another role is refused."),
        run: { arguments, context in
            guard let roleText = arguments.value("--role") else {
                throw CLIError.usage("--role is required (watch, phone or mac)", command: arguments.spec)
            }
            guard let role = Role(rawValue: roleText) else {
                throw CLIError.refused("--role must be watch, phone or mac, got '\(roleText)'")
            }
            let replica = try Replica.create(path: context.databasePath(arguments), role: role, clock: context.clock, random: context.random)
            context.console.print(replica.identity.nodeID)
            return 0
        })
}
