import LifeSync
import LifeSyncRuntime

/// Everything a command needs from the outside world, injected so tests can run commands
/// in-process with captured output.
struct CommandContext {
    var console: Console
    var environment: [String: String]
    var clock: WallClock
    var random: RandomSource

    /// `--db`, else `$LIFESYNC_DB`, else `./lifesync.sqlite`.
    func databasePath(_ arguments: ParsedArguments) -> String {
        arguments.value("--db") ?? environment["LIFESYNC_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? "lifesync.sqlite"
    }

    /// The replica, with its write marks in the user's state folder (`FileWriteMarks`), so a
    /// replica put back from an older copy starts a new history before it writes.
    func openReplica(_ arguments: ParsedArguments) throws -> Replica {
        let replica = try Replica(path: databasePath(arguments), clock: clock, random: random)
        replica.writeMarks = FileWriteMarks.standard(environment: environment)
        let console = console
        replica.onRestoreNoticed = { evidence, old, new in
            console.error("note: this replica was restored from an older copy (\(evidence)); its writes continue under a new incarnation, \(new) (was \(old)), so none reuses a number the lost ones used")
        }
        return replica
    }

    /// Rows a read passed over because they do not read back: said on stderr, the rest shown.
    func reportDamaged(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        console.error("warning: replica damaged: \(ids.count) entr\(ids.count == 1 ? "y does" : "ies do") not read back and \(ids.count == 1 ? "is" : "are") left out: "
                      + ids.prefix(10).joined(separator: ", ") + (ids.count > 10 ? ", …" : ""))
    }
}

/// A subcommand: its spec and what it does. `run` returns the exit code.
struct Command: Sendable {
    var spec: CommandSpec
    var run: @Sendable (ParsedArguments, CommandContext) throws -> Int32
}

/// The `lifesync` command line.
package enum LifeSyncCommandLine {
    static var commands: [Command] {
        [initCommand, addCommand, backupCommand, restoreCommand, importCommand, getCommand, updateCommand, deleteCommand, listCommand,
         exportCommand, changesCommand, statsCommand, statusCommand, nameCommand, conflictsCommand, attachCommand, recordingsCommand, serveCommand, waitCommand, keysCommand, idCommand, pairCommand, trustCommand, untrustCommand, peersCommand, demoCommand, simulateCommand, benchCommand, conformanceCommand]
    }

    /// The release; bumped with each one. Peers agree by the protocol version, not by this.
    static let version = "0.1.0"

    /// `lifesync 0.1.0 (sync protocol 2)`; a range when more than one protocol version is spoken.
    static var versionLine: String {
        let protocols = ProtocolVersion.minimum == ProtocolVersion.maximum ? "\(ProtocolVersion.maximum)"
            : "\(ProtocolVersion.minimum)–\(ProtocolVersion.maximum)"
        return "lifesync \(version) (sync protocol \(protocols))"
    }

    static var overview: String {
        var lines = ["lifesync — peer-to-peer, offline-first replication of a life log", "",
                     "Usage: lifesync <command> [options]", "", "Commands:"]
        for command in commands {
            lines.append("  " + command.spec.name.padded(to: 12) + command.spec.summary)
        }
        lines += ["", "Every command takes --help. The replica file is --db PATH, else $LIFESYNC_DB, else ./lifesync.sqlite.",
                  "Exit codes: 0 done; 1 a value or input refused, or not found; 2 a command line that cannot be understood.",
                  "lifesync --version prints the version and the sync protocol version."]
        return lines.joined(separator: "\n")
    }

    /// Runs one command line (without the program name) and returns the exit code:
    /// 0 done, 1 input refused or not found, 2 usage error.
    package static func run(_ arguments: [String], console: Console, environment: [String: String],
                           clock: WallClock = SystemClock(), random: RandomSource = SystemRandom()) -> Int32 {
        // `lifesync --db x.sqlite list`: the replica named before the command, as every command takes it.
        var arguments = arguments
        if arguments.count >= 3, arguments[0] == "--db" {
            arguments = [arguments[2], "--db", arguments[1]] + arguments.dropFirst(3)
        } else if arguments.count >= 2, arguments[0].hasPrefix("--db=") {
            arguments = [arguments[1], arguments[0]] + arguments.dropFirst(2)
        }
        guard let name = arguments.first else {
            console.error(overview)
            return 2
        }
        if name == "--help" || name == "help" || name == "-h" {
            console.print(overview)
            return 0
        }
        if name == "--version" || name == "version" {
            console.print(versionLine)
            return 0
        }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            console.error("lifesync: unknown command '\(name)'\n\n" + overview)
            return 2
        }
        let context = CommandContext(console: console, environment: environment, clock: clock, random: random)
        do {
            let parsed = try ParsedArguments(Array(arguments.dropFirst()), spec: command.spec)
            if parsed.wantsHelp {
                console.print(command.spec.help)
                return 0
            }
            return try command.run(parsed, context)
        } catch let error as CLIError {
            console.error(error.message)
            return error.exitCode
        } catch let error as ReplicaError {
            console.error("lifesync: \(error)")
            return 1
        } catch let error as ValidationError {
            console.error("lifesync: \(error)")
            return 1
        } catch {
            console.error("lifesync: \(error)")
            return 1
        }
    }
}
