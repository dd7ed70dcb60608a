import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let attachCommand = Command(
        spec: CommandSpec(
            name: "attach", summary: "copy a recording into the node's storage and queue it for sync",
            positionals: ["FILE"],
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--entry", kind: .value, valueName: "ID", help: "the entry it belongs to (its ID, or a unique start of it)"),
                      OptionSpec(name: "--type", kind: .value, valueName: "MEDIA", help: "media type (default from the extension, e.g. audio/mp4)")],
            details: """
            The file is copied into <replica>.recordings/{id}.{ext}, synced to disk and hashed (SHA-256) as it is
            copied; the node never needs the original again. Prints the recording ID.
            """),
        run: { arguments, context in
            let source = arguments.positional(0)!
            let replica = try context.openReplica(arguments)
            // As list shows it (a unique start of the ID) or whole; the entry must be here.
            let entryID = try arguments.value("--entry").map(replica.entryID(typed:))
            if let entryID { _ = try replica.entry(id: entryID) }
            let mediaType = arguments.value("--type") ?? Recording.mediaType(forExtension: Recording.fileExtension(for: source))
            if let problem = Recording.mediaTypeProblem(mediaType) { throw CLIError.refused("--type: \(problem)") }
            var info = stat()
            guard stat(source, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else {
                throw CLIError.refused("cannot read \(source): no such file")
            }
            let recording = try FileRecordingStorage(replicaPath: replica.path)
                .attach(source, to: replica, entryID: entryID, mediaType: mediaType, random: context.random)
            context.console.print(recording.id)
            return 0
        })

    static let recordingsCommand = Command(
        spec: CommandSpec(name: "recordings", summary: "list recordings, their checksums and sync state",
                          options: [CommandSpec.dbOption, CommandSpec.jsonFlag, DeviceLabels.idsFlag]),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let storage = replica.path == ":memory:" ? nil : try? FileRecordingStorage(replicaPath: replica.path)
            let statuses = try replica.recordingStatuses()
            // A download is live only while a serve holds the replica (`RecordingStatus.state(served:)`).
            let served = replica.path != ":memory:" && ServeLock.holder(replicaPath: replica.path) != nil
            if arguments.flag("--json") {
                context.console.print(JSONValue.array(statuses.map { status in
                    status.json(served: served, path: (try? storage?.path(of: status.recording.storageName)).flatMap { $0 })
                }).prettyText)
                return 0
            }
            if statuses.isEmpty { context.console.print("no recordings") }
            let labels = try DeviceLabels(replica, arguments)
            for status in statuses {
                let r = status.recording
                var state = status.state(served: served)
                if status.file == .partial && !status.deleted {
                    state += " (\(status.received * 100 / max(r.size, 1))%" + (served ? ")" : " as last seen; resumes when served)")
                }
                let first = "\(r.id)  \(state)"
                context.console.print(first.count <= 80 ? first : "\(r.id)\n    \(state)")
                context.console.print(fitted("    \(r.mediaType), \(r.size) bytes, from \(labels.label(r.originNode)), \(r.createdAt.local)"))
                if !status.confirmedBy.isEmpty { context.console.print(fitted("    confirmed by \(status.confirmedBy.map { labels.label($0.nodeID) }.joined(separator: ", "))")) }
                if let from = status.receivedFrom { context.console.print(fitted("    received from \(labels.label(from))")) }
                context.console.print("    sha256 \(r.sha256.hex)")
            }
            return 0
        })
}
