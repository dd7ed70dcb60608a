import LifeSync

extension LifeSyncCommandLine {
    static let keysCommand = Command(
        spec: CommandSpec(
            name: "keys", summary: "API keys of the HTTP API: create NAME, list, revoke NAME",
            positionals: ["create|list|revoke", "NAME"], optionalPositionals: 1,
            options: [CommandSpec.dbOption, CommandSpec.jsonFlag],
            details: """
            create NAME prints a new key once; only its SHA-256 is kept in the replica (table api_keys),
            so a lost key cannot be shown again: revoke it and create another. Clients send it as
            Authorization: Bearer <key> to lifesync serve --http. revoke NAME refuses the key from the
            next request on, also on a node serving now.
            Example: lifesync keys create drafts --db phone.sqlite
            """),
        run: { arguments, context in
            let action = arguments.positional(0) ?? ""
            let name = arguments.positional(1)
            guard ["create", "list", "revoke"].contains(action) else {
                throw CLIError.usage("unknown action '\(action)'; use create NAME, list or revoke NAME", command: arguments.spec)
            }
            guard (action == "list") == (name == nil) else {
                throw CLIError.usage(action == "list" ? "list takes no NAME" : "\(action) needs a NAME", command: arguments.spec)
            }
            let replica = try context.openReplica(arguments)
            switch (action, name) {
            case ("create", let name?):
                let key = try replica.createAPIKey(name: name)
                if arguments.flag("--json") {
                    context.console.print(JSONValue.object([("name", .string(name)), ("key", .string(key))]).prettyText)
                } else {
                    context.console.print(key)
                    context.console.error("key \"\(name)\" created; it is shown only now. Use it as: Authorization: Bearer <key>")
                }
            case ("revoke", let name?):
                try replica.revokeAPIKey(name: name)
                context.console.print("revoked key \"\(name)\"")
            default:
                let keys = try replica.apiKeys()
                if arguments.flag("--json") {
                    context.console.print(JSONValue.array(keys.map(\.json)).prettyText)
                } else if keys.isEmpty {
                    context.console.print("no API keys (lifesync keys create NAME makes one)")
                } else {
                    for key in keys {
                        context.console.print("\(key.name)  sha256 \(key.hashPrefix)…  created \(key.createdAt.iso8601)  last used \(key.lastUsed?.iso8601 ?? "never")")
                    }
                }
            }
            return 0
        })
}
