import LifeSync
import LifeSyncAPI

extension LifeSyncCommandLine {
    static let keysCommand = Command(
        spec: CommandSpec(
            name: "keys", summary: "API keys of the HTTP API: create NAME, list, revoke NAME, present NAME",
            positionals: ["create|list|revoke|present", "NAME"], optionalPositionals: 1,
            options: [CommandSpec.dbOption, CommandSpec.jsonFlag,
                      OptionSpec(name: "--presentation", kind: .value, valueName: "FORM",
                                 help: "how the key's client reads entries: lifesync (default) or lifelog-app"),
                      OptionSpec(name: "--admin", kind: .flag, help: "create: the key may also create, list and revoke keys over HTTP (the dashboard's Keys)")],
            details: """
            create NAME prints a new key once; only its SHA-256 is kept in the replica (table api_keys),
            so a lost key cannot be shown again: revoke it and create another. Clients send it as
            Authorization: Bearer <key> to lifesync serve --http. revoke NAME refuses the key from the
            next request on, also on a node serving now.
            --presentation lifelog-app answers GET /api/entries as the LifeLog iOS app's model decodes it
            (id a bare UUID, recordedAt/deviceId/placeName, whole-second times, synced); present NAME
            --presentation FORM changes it for a key a client already holds.
            --admin makes a key that may also manage keys through the HTTP API (GET/POST /api/keys,
            DELETE /api/keys/NAME), as the dashboard does; the command line needs no key.
            Example: lifesync keys create drafts --db phone.sqlite
            Example: lifesync keys create iphone --presentation lifelog-app --db phone.sqlite
            """),
        run: { arguments, context in
            let action = arguments.positional(0) ?? ""
            let name = arguments.positional(1)
            guard ["create", "list", "revoke", "present"].contains(action) else {
                throw CLIError.usage("unknown action '\(action)'; use create NAME, list, revoke NAME or present NAME", command: arguments.spec)
            }
            guard (action == "list") == (name == nil) else {
                throw CLIError.usage(action == "list" ? "list takes no NAME" : "\(action) needs a NAME", command: arguments.spec)
            }
            let presentation = try arguments.value("--presentation").map { form in
                guard let presentation = EntryPresentation(rawValue: form) else {
                    throw CLIError.usage("--presentation: unknown form '\(form)'; known: \(EntryPresentation.names)", command: arguments.spec)
                }
                return presentation
            }
            guard (action == "present") == (presentation != nil) || (action == "create") else {
                throw CLIError.usage(action == "present" ? "present needs --presentation FORM" : "--presentation goes with create or present",
                                     command: arguments.spec)
            }
            guard !arguments.flag("--admin") || action == "create" else { throw CLIError.usage("--admin goes with create", command: arguments.spec) }
            let replica = try context.openReplica(arguments)
            switch (action, name) {
            case ("create", let name?):
                let key = try replica.createAPIKey(name: name, presentation: presentation ?? .lifeSync, admin: arguments.flag("--admin"))
                if arguments.flag("--json") {
                    context.console.print(JSONValue.object([("name", .string(name)), ("key", .string(key))]).prettyText)
                } else {
                    context.console.print(key)
                    context.console.error("key \"\(name)\" created; it is shown only now. Use it as: Authorization: Bearer <key>")
                }
            case ("present", let name?):
                try replica.setPresentation(presentation!, forAPIKey: name)
                context.console.print("key \"\(name)\" now reads entries as \(presentation!.rawValue)")
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
                        // Two lines, so a long name or a presentation still fits 80 columns.
                        context.console.print(fitted("\(key.name)" + (key.admin ? "  admin" : "")
                                                     + (key.presentation == .lifeSync ? "" : "  presentation \(key.presentation.rawValue)")))
                        context.console.print("  sha256 \(key.hashPrefix)…  created \(LocalTime.minute(key.createdAt))"
                                              + "  last used \(key.lastUsed.map(LocalTime.minute) ?? "never")")
                    }
                }
            }
            return 0
        })
}
