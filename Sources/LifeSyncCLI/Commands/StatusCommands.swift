import LifeSync

extension LifeSyncCommandLine {
    static let statsCommand = Command(
        spec: CommandSpec(name: "stats", summary: "counts by category, source and day; metric averages",
                          options: [CommandSpec.dbOption, CommandSpec.jsonFlag]),
        run: { arguments, context in
            let stats = try context.openReplica(arguments).stats()
            if arguments.flag("--json") {
                context.console.print(stats.json.prettyText)
                return 0
            }
            let console = context.console
            console.print("entries: \(stats.total)")
            for (title, list) in [("by category", stats.byCategory), ("by source", stats.bySource), ("by day", stats.byDay)] {
                console.print(title + ":")
                for item in list { console.print("  " + item.key.padding(toLength: max(12, item.key.count), withPad: " ", startingAt: 0) + "  \(item.count)") }
            }
            if !stats.metrics.isEmpty {
                console.print("metrics:")
                for m in stats.metrics {
                    func f(_ x: Double) -> String { String(format: "%.2f", x) }
                    console.print("  \(m.name): n=\(m.count) avg=\(f(m.average)) min=\(f(m.minimum)) max=\(f(m.maximum))")
                }
            }
            return 0
        })

    static let statusCommand = Command(
        spec: CommandSpec(name: "status", summary: "the node's identity, counts and replica vector",
                          options: [CommandSpec.dbOption, CommandSpec.jsonFlag]),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let status = try ReplicaStatus(replica: replica)
            if arguments.flag("--json") {
                context.console.print(status.json.prettyText)
            } else {
                for line in status.lines { context.console.print(line) }
            }
            return 0
        })
}

/// What `status` reports about a replica.
struct ReplicaStatus {
    var identity: ReplicaIdentity
    var path: String
    var entries: Int
    var tombstones: Int
    var conflicts: Int
    var origins: [(origin: String, nodeID: String?, role: Role?, sequence: UInt64)]

    init(replica: Replica) throws {
        identity = replica.identity
        path = replica.path
        entries = try replica.liveEntryCount()
        tombstones = try replica.tombstoneCount()
        conflicts = try replica.conflicts().count
        origins = try replica.knownOrigins()
    }

    var json: JSONValue {
        .object([
            ("node_id", .string(identity.nodeID)),
            ("role", .string(identity.role.rawValue)),
            ("incarnation", .string(identity.incarnation)),
            ("db", .string(path)),
            ("entries", .number(Double(entries))),
            ("tombstones", .number(Double(tombstones))),
            ("conflicts", .number(Double(conflicts))),
            ("vector", .object(origins.filter { $0.sequence > 0 }.map { ($0.origin, .number(Double($0.sequence))) })),
            ("origins", .array(origins.map { origin in
                .object([("origin", .string(origin.origin)), ("node_id", origin.nodeID.map(JSONValue.string) ?? .null),
                         ("role", origin.role.map { .string($0.rawValue) } ?? .null), ("sequence", .number(Double(origin.sequence)))])
            })),
        ])
    }

    var lines: [String] {
        var lines = ["node        \(identity.nodeID) (\(identity.role.rawValue))",
                     "incarnation \(identity.incarnation)",
                     "replica     \(path)",
                     "entries     \(entries) live, \(tombstones) deleted, \(conflicts) conflicts kept",
                     "vector:"]
        for origin in origins {
            let who = origin.origin == identity.incarnation ? "this node" : (origin.nodeID ?? "unknown node")
            lines.append("  \(origin.origin)  \(origin.sequence)  (\(who))")
        }
        return lines
    }
}
