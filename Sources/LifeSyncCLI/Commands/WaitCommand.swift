import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    /// `wait --for ID`: a script's way to know a write has travelled, instead of sleeping and
    /// hoping (the Quick start pastes as one block because of it).
    static let waitCommand = Command(
        spec: CommandSpec(
            name: "wait", summary: "wait until entries or recordings have reached this replica",
            options: [
                CommandSpec.dbOption,
                OptionSpec(name: "--for", kind: .repeated, valueName: "ID", help: "an entry or recording ID to wait for (repeatable)"),
                OptionSpec(name: "--timeout", kind: .value, valueName: "S", help: "give up after S seconds (default 30, at most 3600)"),
            ],
            details: """
            Returns as soon as this replica holds every ID given (a live entry, a recording with its bytes
            stored and verified, or either's deletion), which a serving node does once a peer has synced
            them; checked every 50 ms. Exit 0 when all arrived; 1 after the timeout, naming the IDs still
            missing (and which of them are recordings whose bytes have not arrived yet).
            Example: lifesync wait --db phone.sqlite --for watch_550e8400-e29b-41d4-a716-446655440000
            """),
        run: { arguments, context in
            let ids = arguments.all("--for")
            guard !ids.isEmpty else { throw CLIError.usage("give --for ID (an entry or recording ID)", command: arguments.spec) }
            for id in ids {
                do { try LogEntry.validateEntryID(id, field: "--for") } catch { throw CLIError.usage("\(error)", command: arguments.spec) }
            }
            let timeout = try arguments.number("--timeout") ?? 30
            guard timeout >= 0, timeout <= 3_600 else { throw CLIError.usage("--timeout: 0 to 3600 seconds, got \(timeout)", command: arguments.spec) }
            let replica = try context.openReplica(arguments)
            var missing = ids
            // Each read is a fresh SQLite statement, so it sees what the serving process committed.
            let arrived = try waitUntil(timeout: timeout) {
                // A recording counts once its bytes are here, not at its metadata (which comes first).
                missing = try missing.filter { id in
                    try replica.recording(id: id) != nil ? !replica.holdsRecording(id: id) : replica.versionStamp(id: id) == nil
                }
                return missing.isEmpty
            }
            guard arrived else {
                let withoutBytes = try missing.filter { try replica.recording(id: $0) != nil }
                throw CLIError.refused("not on \(replica.path) after \(arguments.value("--timeout") ?? "30") s: \(missing.joined(separator: ", "))"
                                       + (withoutBytes.isEmpty ? "" : " (\(withoutBytes.joined(separator: ", ")): the metadata is here, the bytes not yet)")
                                       + (ServeLock.holder(replicaPath: replica.path) == nil ? " (no lifesync serve is serving this replica)" : ""))
            }
            return 0
        })
}
