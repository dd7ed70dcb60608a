import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let statsCommand = Command(
        spec: CommandSpec(name: "stats", summary: "counts by category, source and local day (TZ); metric averages",
                          options: [CommandSpec.dbOption, CommandSpec.jsonFlag] + CommandSpec.filterOptions),
        run: { arguments, context in
            // Days as the person counts them, in the zone the CLI shows times in (LocalTime).
            let stats = try context.openReplica(arguments).stats(matching: try arguments.entryFilter(), days: .local)
            if arguments.flag("--json") {
                context.console.print(stats.json.prettyText)
                return 0
            }
            let console = context.console
            console.print("entries: \(stats.total)")
            for (title, list) in [("by category", stats.byCategory), ("by source", stats.bySource), ("by day", stats.byDay)] {
                console.print(title + ":")
                for item in list { console.print("  " + item.key.padded(to: max(12, item.key.count)) + "  \(item.count)") }
            }
            if !stats.metrics.isEmpty {
                console.print("metrics:")
                for m in stats.metrics {
                    func f(_ x: Double) -> String { x.fixed(2) }
                    console.print("  \(m.name): n=\(m.count) avg=\(f(m.average)) min=\(f(m.minimum)) max=\(f(m.maximum))")
                }
            }
            return 0
        })

    static let statusCommand = Command(
        spec: CommandSpec(name: "status", summary: "the node's identity, counts and replica vector",
                          options: [CommandSpec.dbOption, CommandSpec.jsonFlag, DeviceLabels.idsFlag, ReplicaStatus.hashFlag]),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let status = try ReplicaStatus(replica: replica, hashing: arguments.flag("--hash"))
            if arguments.flag("--json") {
                context.console.print(status.json.prettyText)
            } else {
                for line in status.lines(try DeviceLabels(replica, arguments)) { context.console.print(line) }
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
    /// Batches refused as forged (PROTOCOL.md §5.2.5), newest first.
    var refused: [(nodeID: String, at: Timestamp, reason: String)]
    var origins: [(origin: String, nodeID: String?, role: Role?, sequence: UInt64)]
    var peers: [PeerStatus]
    /// SHA-256 of the canonical dump: two full replicas have converged when these are equal.
    /// Only with `--hash`: it reads every record (seconds at a million entries), where the rest
    /// of `status` reads kept counts.
    var stateHash: String?
    static let hashFlag = OptionSpec(name: "--hash", kind: .flag,
                                     help: "also compute the state hash (reads every record: seconds at a million entries)")
    var recordings: [RecordingStatus]
    /// The key each trusted peer is pinned to, by node ID.
    var trusted: [String: SHA256.Digest]
    /// The `lifesync serve` process serving this replica now (its serve lock), if any: without
    /// one, what the peer rows say is only what was last seen.
    var servedBy: Int32?

    init(replica: Replica, hashing: Bool) throws {
        identity = replica.identity
        path = replica.path
        entries = try replica.liveEntryCount()
        tombstones = try replica.tombstoneCount()
        conflicts = try replica.conflictCount()
        refused = try replica.refusedBatches()
        origins = try replica.knownOrigins()
        stateHash = hashing ? try replica.canonicalHash() : nil
        recordings = try replica.recordingStatuses()
        servedBy = replica.path == ":memory:" ? nil : ServeLock.holder(replicaPath: replica.path)
        trusted = Dictionary(try replica.trustedPeers().map { ($0.nodeID, $0.fingerprint) }, uniquingKeysWith: { a, _ in a })
        name = try replica.ownName()
        names = try replica.deviceNames().compactMapValues { $0.local ?? $0.announced }
        now = replica.now
        // What each peer still lacks, computed now from its last known vector (the serving node
        // may be stopped, and writes may have happened since it saved the row), as the role
        // policy owes it (a stopped node's `--receive-entries` is not known: the default).
        let own = try replica.ownOrigins()
        policy = RolePolicy(role: replica.identity.role)
        peers = try replica.peers().map { [policy, trusted] peer in
            var peer = peer
            let receives = peer.role.isFullReplica
            peer.pending = trusted[peer.nodeID] == nil || !policy.exchangesAnything(withPeer: peer.role, peerReceivesEntries: receives) ? 0
                : try replica.pendingCount(above: peer.vector, allowed: { policy.owes(origin: $0, own: own, peerReceivesEntries: receives) },
                                           limit: ReplicaStatus.pendingLimit)
            return peer
        }
    }

    var now: Timestamp
    var policy: RolePolicy
    /// This node's name, and every named node's (Replica+DeviceNames).
    var name: String?
    var names: [String: String]

    var pendingTotal: Int { peers.filter(showsPending).map(\.pending).max() ?? 0 }

    /// Pending changes are counted row by row through the (origin, sequence) indexes, which
    /// costs what is pending: a peer that lacks a million changes took seconds. Counting stops
    /// here, and the output says "at least" (JSON: `pending_exact` false) rather than a number
    /// that only looks exact.
    static let pendingLimit = 10_000

    func pendingText(_ count: Int) -> String { count >= Self.pendingLimit ? "at least \(count)" : "\(count)" }

    /// Pending means something only for a trusted peer something can move to.
    func showsPending(_ peer: PeerStatus) -> Bool { trusted[peer.nodeID] != nil && exchanges(with: peer) }

    func exchanges(with peer: PeerStatus) -> Bool {
        policy.exchangesAnything(withPeer: peer.role, peerReceivesEntries: peer.role.isFullReplica)
    }

    /// The peer's state as it can be claimed now: a live state only while a serve holds the
    /// replica (a killed one left its last word in the row); otherwise disconnected, with what
    /// was last seen and how long ago.
    func state(of peer: PeerStatus) -> String {
        guard exchanges(with: peer) else { return "nothing to exchange (\(identity.role.rawValue) ↔ \(peer.role.rawValue))" }
        guard servedBy == nil, peer.state != .disconnected else { return peer.state.rawValue }
        return "disconnected (last seen \(peer.state.rawValue)" + (peer.lastSeen.map { " " + age(since: $0) } ?? "") + ")"
    }

    func age(since then: Timestamp) -> String {
        let seconds = max(0, (now.millisecondsSince1970 - then.millisecondsSince1970) / 1000)
        let text = seconds < 120 ? "\(seconds) s" : seconds < 7_200 ? "\(seconds / 60) min" : seconds < 172_800 ? "\(seconds / 3600) h" : "\(seconds / 86_400) days"
        return text + " ago"
    }

    /// A partial download, in words: live while served, else interrupted as last seen.
    func transferText(_ status: RecordingStatus) -> String {
        let percent = status.received * 100 / max(status.recording.size, 1)
        return servedBy == nil ? "\(status.recording.id)\n            interrupted at \(percent)% (as last seen; resumes when served)"
                               : "\(status.recording.id)\n            \(percent)% received"
    }

    /// Every session of protocol version 2 is TLS 1.3 with the peer's pinned key: a peer's
    /// last handshake (`last_connected`) is when it last proved that key.
    func securityMembers(of peer: PeerStatus) -> [(String, JSONValue)] {
        [("trusted", .bool(trusted[peer.nodeID] != nil)), ("fingerprint", trusted[peer.nodeID].map { .string($0.hex) } ?? .null),
         ("encrypted", .bool(true)), ("transport", .string("TLS 1.3")),
         ("last_handshake", peer.lastConnected.map { .string($0.iso8601) } ?? .null)]
    }

    func securityLine(of peer: PeerStatus) -> String {
        let key = trusted[peer.nodeID].map { "trusted, key \($0.hex.prefix(16))…" } ?? "not trusted now (lifesync peers)"
        return "\(key), last handshake " + (peer.lastConnected?.local ?? "never")
    }

    var json: JSONValue {
        .object([
            ("node_id", .string(identity.nodeID)),
            ("name", name.map(JSONValue.string) ?? .null),
            ("role", .string(identity.role.rawValue)),
            ("incarnation", .string(identity.incarnation)),
            ("db", .string(path)),
            ("entries", .number(Double(entries))),
            ("tombstones", .number(Double(tombstones))),
            ("conflicts", .number(Double(conflicts))),
            ("refused_forged_batches", .array(refused.map {
                .object([("node_id", .string($0.nodeID)), ("name", names[$0.nodeID].map(JSONValue.string) ?? .null),
                         ("refused_at", .string($0.at.iso8601)), ("reason", .string($0.reason))])
            })),
            ("pending", .number(Double(pendingTotal))),
            ("pending_exact", .bool(pendingTotal < Self.pendingLimit)),
            ("state_hash", stateHash.map(JSONValue.string) ?? .null),
            ("serving", .bool(servedBy != nil)),
            ("serving_pid", servedBy.map { .number(Double($0)) } ?? .null),
            ("recordings", .object([
                ("total", .number(Double(recordings.filter { !$0.deleted }.count))),
                ("pending", .number(Double(recordings.filter { $0.state == "pending" }.count))),
                ("transferring", .array(recordings.filter { $0.file == .partial }.map {
                    .object([("id", .string($0.recording.id)), ("received", .number(Double($0.received))), ("size", .number(Double($0.recording.size))),
                             ("live", .bool(servedBy != nil))])
                })),
            ])),
            ("peers", .array(peers.map { peer in
                guard case .object(var members) = peer.json else { return peer.json }
                members = members.map { key, value in
                    switch key {
                    case "state": (key, .string(exchanges(with: peer) ? servedBy == nil ? PeerStatus.State.disconnected.rawValue : peer.state.rawValue : "nothing_to_exchange"))
                    case "pending": (key, showsPending(peer) ? value : .null)
                    default: (key, value)
                    }
                }
                members.insert(("name", names[peer.nodeID].map(JSONValue.string) ?? .null), at: 1)
                members += [("last_seen_state", .string(peer.state.rawValue)), ("last_seen", peer.lastSeen.map { .string($0.iso8601) } ?? .null)]
                members += securityMembers(of: peer)
                return .object(members)
            })),
            ("vector", .object(origins.filter { $0.sequence > 0 }.map { ($0.origin, .number(Double($0.sequence))) })),
            ("origins", .array(origins.map { origin in
                .object([("origin", .string(origin.origin)), ("node_id", origin.nodeID.map(JSONValue.string) ?? .null),
                         ("role", origin.role.map { .string($0.rawValue) } ?? .null), ("sequence", .number(Double(origin.sequence)))])
            })),
        ])
    }

    /// The report for people: each line fits 80 columns (`--ids` adds full node IDs).
    func lines(_ labels: DeviceLabels) -> [String] {
        var lines = ["node        " + (name.map { "\"\($0)\"" } ?? "(no name: lifesync name \"NAME\")") + " (\(identity.role.rawValue))",
                     "id          \(identity.nodeID)",
                     "incarnation \(identity.incarnation)",
                     "replica     \(path)",
                     "entries     \(entries) live, \(tombstones) deleted, \(conflicts) conflicts kept",
                     "state hash  " + (stateHash ?? "not computed (--hash: reads every record)"),
                     "vector:"]
        for origin in origins {
            let who = origin.origin == identity.incarnation ? "this node" : (origin.nodeID.map(labels.label) ?? "unknown node")
            lines.append(LifeSyncCommandLine.fitted("  \(origin.origin)  \(origin.sequence)  (\(who))"))
        }
        if let last = refused.first {
            // Nothing of a refused batch is stored: this is where the user learns of it.
            let senders = Set(refused.map(\.nodeID)).sorted().map(labels.label).joined(separator: ", ")
            lines.append(LifeSyncCommandLine.fitted("refused     \(refused.count) forged batch(es) from \(senders); none stored"))
            lines.append(LifeSyncCommandLine.fitted("  last \(last.at.local): \(last.reason)"))
        }
        let live = recordings.filter { !$0.deleted }
        lines.append("recordings  \(live.count), \(live.filter { $0.state == "pending" }.count) pending")
        lines += live.filter { $0.file == .partial }.flatMap { transferText($0).split(separator: "\n").map { "  " + $0 } }
        lines.append("serving     " + (servedBy.map { "yes (lifesync serve, process \($0))" } ?? "no (no lifesync serve has it open)"))
        lines.append(peers.isEmpty ? "peers:      none met yet" : servedBy == nil ? "peers (as last seen; not being served now):" : "peers:")
        for peer in peers {
            lines.append(LifeSyncCommandLine.fitted("  \(labels.label(peer.nodeID)) (\(peer.role.rawValue)) \(state(of: peer))"))
            lines.append("    " + (peer.lastSync.map { "last sync \($0.local)" } ?? "never synced") + ", \(peer.direction)")
            lines.append("    at \(peer.address), TLS 1.3, sent \(peer.entriesSent), received \(peer.entriesReceived)"
                         + (showsPending(peer) ? ", pending " + pendingText(peer.pending) : ""))
            lines.append("    " + securityLine(of: peer))
        }
        return lines
    }
}
