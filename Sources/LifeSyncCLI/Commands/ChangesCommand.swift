import Glibc
import LifeSync
import LifeSyncRuntime

/// Set by SIGINT/SIGTERM while `changes --follow` runs.
nonisolated(unsafe) private var followStop: Int32 = 0

extension LifeSyncCommandLine {
    /// `changes`: the change feed of `GET /api/changes` on the command line, for scripts that
    /// index the journal (`--json`) and for watching it (`--follow`).
    static let changesCommand = Command(
        spec: CommandSpec(
            name: "changes", summary: "print the entries changed since a cursor, in the order this replica applied them",
            options: [
                CommandSpec.dbOption,
                OptionSpec(name: "--since", kind: .value, valueName: "CURSOR", help: "start after this cursor (a next_cursor or a line's cursor)"),
                OptionSpec(name: "--follow", kind: .flag, help: "keep printing new changes until interrupted (checks every 250 ms)"),
                OptionSpec(name: "--json", kind: .flag, help: "one JSON object per line, as GET /api/changes's items"),
                OptionSpec(name: "--ids", kind: .flag, help: "whole entry IDs instead of their shortest unique start"),
            ],
            details: """
            Every entry written here or received from a peer, each once at its latest change; a deleted one shows
            as deleted. A line is: CURSOR  ID  TEXT (or "deleted AT"), cut to 80 columns, the ID shortened as list
            shows it (--ids: whole). A cursor belongs to this replica: one from another replica is refused.
            Example: lifesync changes --follow --json --since 42-9f3a0c1b
            """),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let cursor: ChangeCursor?
            do { cursor = try arguments.value("--since").map(replica.cursor(parsing:)) } catch let error as CursorRefused {
                throw CLIError.refused("--since: \(error)")
            }
            let json = arguments.flag("--json")
            var observer = ChangeObserver(replica: replica, after: cursor)
            func printAvailable() throws {
                // Bounded per call: at most 1000 pages before the next check of the stop flag.
                for _ in 0..<1_000 {
                    for change in try observer.poll() {
                        context.console.print(json ? change.json.canonicalText
                                              : line(change, id: arguments.flag("--ids") ? change.id : try replica.uniquePrefix(of: change.id)))
                    }
                    if observer.caughtUp { return }
                }
            }
            try printAvailable()
            guard arguments.flag("--follow") else { return 0 }
            signal(SIGINT) { _ in followStop = 1 }
            signal(SIGTERM) { _ in followStop = 1 }
            while followStop == 0 {
                usleep(250_000)
                try printAvailable()
            }
            return 0
        })

    private static func line(_ change: FeedChange, id: String) -> String {
        let what: String
        if let entry = change.entry {
            let text = entry.data.text ?? entry.data.metric.map { "\($0.name)=\(JSONValue.number($0.value).canonicalText)" } ?? ""
            what = (entry.category.map { "[\($0)] " } ?? "") + text.replacingLineBreaks
        } else {
            what = "deleted" + (change.deletedAt.map { " \($0.local)" } ?? "")
        }
        let line = "\(change.cursor)  \(id)  \(what)"
        return id == change.id ? line : fitted(line)
    }
}

private extension String {
    /// One change, one line.
    var replacingLineBreaks: String { String(map { $0 == "\n" || $0 == "\r\n" || $0 == "\r" ? " " : $0 }) }
}
