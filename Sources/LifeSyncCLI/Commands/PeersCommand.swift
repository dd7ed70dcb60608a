import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let peersCommand = Command(
        spec: CommandSpec(name: "peers", summary: "trusted peers, untrusted keys that tried to connect, nodes discovered on the LAN",
                          positionals: ["name", "NODE_ID", "NAME"], optionalPositionals: 3,
                          options: [CommandSpec.dbOption, CommandSpec.jsonFlag, DeviceLabels.idsFlag],
                          details: """
                              Devices show by name; --ids adds their full node IDs. `peers name NODE_ID NAME` names a peer \
                              on this replica only (it wins over the name the peer announces); without NAME it forgets it.
                              """),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            if let action = arguments.positional(0) { return try namePeer(action, replica, arguments, context) }
            let trusted = try replica.trustedPeers(), pending = try replica.pendingPeers(), discovered = try replica.discoveredPeers()
            let known = Dictionary(try replica.peers().map { ($0.nodeID, $0) }, uniquingKeysWith: { a, _ in a })
            let names = try replica.deviceNames()
            // The code a pairing device shows for the same two keys (lifesync pair).
            let own = try? NodeKey.load(from: NodeKey.path(forReplica: replica.path)).fingerprint
            func code(_ fingerprint: SHA256.Digest) -> PairingCode? { own.map { PairingCode($0, fingerprint) } }
            if arguments.flag("--json") {
                func nameMembers(_ nodeID: String) -> [(String, JSONValue)] {
                    let both = names[nodeID]
                    return [("name", (both?.local ?? both?.announced).map(JSONValue.string) ?? .null),
                            ("announced_name", both?.announced.map(JSONValue.string) ?? .null),
                            ("local_name", both?.local.map(JSONValue.string) ?? .null)]
                }
                context.console.print(JSONValue.object([
                    ("trusted", .array(trusted.map { peer in
                        .object([("node_id", .string(peer.nodeID))] + nameMembers(peer.nodeID) + [
                                 ("role", .string(peer.role.rawValue)), ("fingerprint", .string(peer.fingerprint.hex)),
                                 ("addresses", .array(peer.addresses.map(JSONValue.string))), ("trusted_at", .string(peer.trustedAt.iso8601)),
                                 ("state", .string(known[peer.nodeID]?.state.rawValue ?? "never connected")),
                                 ("encrypted", .bool(true)), ("transport", .string("TLS 1.3")),
                                 ("last_handshake", known[peer.nodeID]?.lastConnected.map { .string($0.iso8601) } ?? .null),
                                 ("code", code(peer.fingerprint).map { .string($0.description) } ?? .null)])
                    })),
                    ("pending", .array(pending.map { peer in
                        .object([("fingerprint", .string(peer.fingerprint.hex)), ("claimed_node_id", peer.claimedNodeID.map(JSONValue.string) ?? .null),
                                 ("address", .string(peer.address)), ("first_seen", .string(peer.firstSeen.iso8601)),
                                 ("last_seen", .string(peer.lastSeen.iso8601)), ("attempts", .number(Double(peer.attempts))),
                                 ("wrong_codes", .number(Double(peer.wrongCodes))),
                                 ("code", code(peer.fingerprint).map { .string($0.description) } ?? .null)])
                    })),
                    ("discovered", .array(discovered.map { peer in
                        .object([("node_id", .string(peer.nodeID))] + nameMembers(peer.nodeID) + [
                                 ("role", .string(peer.role.rawValue)), ("fingerprint", .string(peer.fingerprint.hex)),
                                 ("address", .string(peer.address)), ("first_seen", .string(peer.firstSeen.iso8601)),
                                 ("last_seen", .string(peer.lastSeen.iso8601)), ("pairing", .string(peer.pairing.description))])
                    })),
                ]).prettyText)
                return 0
            }
            let labels = try DeviceLabels(replica, arguments)
            let console = context.console
            console.print("trusted: \(trusted.isEmpty ? "none (pair with lifesync id / lifesync trust)" : "")")
            for peer in trusted {
                let who = "  \(labels.label(peer.nodeID)) (\(peer.role.rawValue))"
                let seen = known[peer.nodeID].map { "\($0.state.rawValue), last handshake \($0.lastConnected?.local ?? "never")" } ?? "never connected"
                // A long name moves the state to a line of its own rather than past column 80.
                if who.count + 2 + seen.count <= columns || labels.showIDs { console.print(who + "  " + seen) } else {
                    console.print(fitted(who))
                    console.print("    " + seen)
                }
                console.print("    key \(peer.fingerprint.hex.prefix(16))…  TLS 1.3" + (code(peer.fingerprint).map { "  code \($0)" } ?? ""))
                for line in wrapped(peer.addresses, first: "    at ", then: "       ") { console.print(line) }
            }
            console.print("pending (tried to connect, not trusted): \(pending.isEmpty ? "none" : "")")
            for peer in pending {
                console.print("  key \(peer.fingerprint.hex.prefix(16))…  from \(peer.address)" + (code(peer.fingerprint).map { "  code \($0)" } ?? ""))
                console.print("    " + (peer.claimedNodeID.map { "says \(labels.label($0))" } ?? "said nothing")
                              + ", \(peer.attempts)×, last \(peer.lastSeen.local)"
                              + (peer.wrongCodes > 0 ? ", \(peer.wrongCodes) wrong code\(peer.wrongCodes == 1 ? "" : "s")" : ""))
                if let claimed = peer.claimedNodeID { console.print("  lifesync trust --accept \(claimed) --code CODE") }
            }
            console.print("discovered on the LAN (not trusted, never dialled): \(discovered.isEmpty ? "none" : "")")
            for peer in discovered {
                console.print("  \(labels.label(peer.nodeID)) (\(peer.role.rawValue))  at \(peer.address)  last \(peer.lastSeen.local)")
                console.print("    key \(peer.fingerprint.hex.prefix(16))…; if it matches lifesync id on that device:")
                console.print("  lifesync trust '\(peer.pairing)'")
            }
            return 0
        })

    /// `peers name NODE_ID [NAME]`: names a peer here, or forgets the name given here.
    private static func namePeer(_ action: String, _ replica: Replica, _ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        guard action == "name" else { throw CLIError.usage("unknown action '\(action)': peers [name NODE_ID [NAME]]", command: arguments.spec) }
        guard let nodeID = arguments.positional(1) else { throw CLIError.usage("name needs the NODE_ID of the peer it names (lifesync peers --ids)", command: arguments.spec) }
        let name = arguments.positional(2)
        try replica.setLocalPeerName(name, for: nodeID)
        let shown = try replica.peerName(for: nodeID)
        context.console.print(name == nil ? "\(nodeID) has no local name now" + (shown.map { "; it shows as announced: \"\($0)\"" } ?? "")
                                          : "\(nodeID) is now shown as \"\(shown ?? "")\" here")
        return 0
    }
}
