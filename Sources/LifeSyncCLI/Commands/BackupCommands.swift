import FoundationEssentials
import LifeSync
import LifeSyncRuntime

/// `backup` and `restore`: a consistent copy of a replica and its recordings, and putting one
/// back so that nothing written since is lost or reused (PROTOCOL.md §7.2.2).
extension LifeSyncCommandLine {
    static let backupCommand = Command(
        spec: CommandSpec(
            name: "backup", summary: "copy the replica and its recordings, consistently, while the node may serve",
            positionals: ["DEST"],
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--include-key", kind: .flag, help: "also copy the node's private key (DEST.key, mode 0600)")],
            details: """
                DEST is a new file: the replica as of one instant (SQLite's online backup), and DEST.recordings/ with the \
                recordings it holds. Without --include-key the node's key stays where it is (REPLICA.key): restoring on this \
                machine uses it as before; on a new machine copy the key too (then the peers know the node as before) or \
                pair the node again. Put a backup back with `lifesync restore DEST`.
                """),
        run: { arguments, context in
            guard let destination = arguments.positional(0) else { throw CLIError.usage("DEST is required", command: arguments.spec) }
            let replica = try context.openReplica(arguments)
            guard !FileManager.default.fileExists(atPath: destination) else {
                throw CLIError.refused("\(destination) exists; a backup goes to a new file")
            }
            let copy: Database
            do {
                copy = try Database(path: destination, create: true)
                try replica.database.copy(into: copy)
                try Replica.markAsBackupCopy(copy, of: replica.identity.nodeID, at: replica.now)
            } catch {
                try? FileManager.default.removeItem(atPath: destination)
                throw CLIError.refused("cannot write the backup \(destination): \(error)")
            }
            let files = try copyRecordings(from: replica.path + ".recordings", to: destination + ".recordings")
            var keyNote = "the key was not copied (it stays at \(replica.path).key; see --help)"
            if arguments.flag("--include-key") {
                try copyPrivate(replica.path + ".key", to: destination + ".key")
                keyNote = "the key is in \(destination).key: keep it as secret as the device"
            }
            context.console.print("backed up \(replica.identity.nodeID) to \(destination) (\(try replica.liveEntryCount()) entries, \(files) recording file\(files == 1 ? "" : "s")); \(keyNote)")
            return 0
        })

    static let restoreCommand = Command(
        spec: CommandSpec(
            name: "restore", summary: "put a backup back as this replica (the node must not be serving)",
            positionals: ["BACKUP"],
            options: [CommandSpec.dbOption],
            details: """
                Replaces the replica at --db with BACKUP (made by `lifesync backup`) and brings back its recordings and, if the \
                backup has one and the replica has none, its key. The restored replica starts a new incarnation before its \
                first write, so what the node wrote after the backup — which its peers hold — is never overwritten: the peers \
                send it back at the next sync.
                """),
        run: { arguments, context in
            guard let source = arguments.positional(0) else { throw CLIError.usage("BACKUP is required", command: arguments.spec) }
            let target = context.databasePath(arguments)
            let backup = try Replica(path: source, clock: context.clock, random: context.random)
            guard try backup.database.firstRow("SELECT 1 FROM meta WHERE key = ?", [.text(Replica.backupCopyKey)], { _ in true }) != nil else {
                throw CLIError.refused("\(source) is a replica, not a backup made by `lifesync backup`; make one with `lifesync backup --db \(source) DEST`")
            }
            let lock: ServeLock
            do { lock = try ServeLock.acquire(replicaPath: target) } catch { throw CLIError.refused("\(error)") }
            defer { withExtendedLifetime(lock) {} }
            if FileManager.default.fileExists(atPath: target) {
                let current = try Replica(path: target, clock: context.clock, random: context.random)
                guard current.identity.nodeID == backup.identity.nodeID else {
                    throw CLIError.refused("\(source) is a backup of \(backup.identity.nodeID), and \(target) is \(current.identity.nodeID)")
                }
                try backup.database.copy(into: current.database)
            } else {
                try backup.database.copy(into: try Database(path: target, create: true))
            }
            let files = try copyRecordings(from: source + ".recordings", to: target + ".recordings")
            if FileManager.default.fileExists(atPath: source + ".key") && !FileManager.default.fileExists(atPath: target + ".key") {
                try copyPrivate(source + ".key", to: target + ".key")
            }
            context.console.print("restored \(backup.identity.nodeID) from \(source) into \(target) (\(files) recording file\(files == 1 ? "" : "s") brought back); its next write starts a new incarnation, and its peers send back what it wrote since the backup")
            return 0
        })

    /// Copies the recording files of `folder` (not the hidden `.incoming` and `.digests`) into
    /// `destination`, leaving files already there; returns how many it copied.
    private static func copyRecordings(from folder: String, to destination: String) throws -> Int {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: folder) else { return 0 }
        do {
            try manager.createDirectory(atPath: destination, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var copied = 0
            for name in names.sorted() where !name.hasPrefix(".") && !manager.fileExists(atPath: destination + "/" + name) {
                try manager.copyItem(atPath: folder + "/" + name, toPath: destination + "/" + name)
                copied += 1
            }
            return copied
        } catch {
            throw CLIError.refused("cannot copy the recordings to \(destination): \(error)")
        }
    }

    private static func copyPrivate(_ path: String, to destination: String) throws {
        do {
            let bytes = try UserFile.read(path)
            guard FileManager.default.createFile(atPath: destination, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
                throw CLIError.refused("cannot write \(destination)")
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.refused("cannot copy the key \(path): \(error)")
        }
    }
}
