import Foundation
import LifeSync
import LifeSyncRuntime

extension LifeSyncCommandLine {
    static let attachCommand = Command(
        spec: CommandSpec(
            name: "attach", summary: "copy a recording into the node's storage and queue it for sync",
            positionals: ["FILE"],
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--entry", kind: .value, valueName: "ID", help: "the entry it belongs to"),
                      OptionSpec(name: "--type", kind: .value, valueName: "MEDIA", help: "media type (default from the extension, e.g. audio/mp4)")],
            details: """
            The file is copied into <replica>.recordings/{id}.{ext}, synced to disk and hashed (SHA-256) as it is
            copied; the node never needs the original again. Prints the recording ID.
            """),
        run: { arguments, context in
            let source = arguments.positional(0)!
            let replica = try context.openReplica(arguments)
            let entryID = arguments.value("--entry")
            if let entryID { _ = try replica.entry(id: entryID) }
            let mediaType = arguments.value("--type") ?? mediaType(forExtension: Recording.fileExtension(for: source))
            guard !mediaType.isEmpty, mediaType.count <= 128, mediaType.contains("/") else {
                throw CLIError.refused("--type: expected a media type like audio/mp4, got '\(mediaType)'")
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw CLIError.refused("cannot read \(source): no such file")
            }
            let recording = try FileRecordingStorage(replicaPath: replica.path)
                .attach(source, to: replica, entryID: entryID, mediaType: mediaType, random: context.random)
            context.console.print(recording.id)
            return 0
        })

    static let recordingsCommand = Command(
        spec: CommandSpec(name: "recordings", summary: "list recordings, their checksums and sync state",
                          options: [CommandSpec.dbOption, CommandSpec.jsonFlag]),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let storage = replica.path == ":memory:" ? nil : try? FileRecordingStorage(replicaPath: replica.path)
            let statuses = try replica.recordingStatuses()
            // A download is live only while a serve holds the replica; a killed one left its last
            // progress behind, which then says interrupted rather than transferring.
            let served = replica.path != ":memory:" && ServeLock.holder(replicaPath: replica.path) != nil
            func state(_ status: RecordingStatus) -> String { status.file == .partial && !status.deleted && !served ? "interrupted" : status.state }
            if arguments.flag("--json") {
                context.console.print(JSONValue.array(statuses.map { status in
                    let r = status.recording
                    let path = status.file == .present ? (try? storage?.path(of: r.storageName)).flatMap { $0 } : nil
                    return .object([
                        ("id", .string(r.id)), ("file_name", .string(r.fileName)), ("size", .number(Double(r.size))),
                        ("sha256", .string(r.sha256.hex)), ("media_type", .string(r.mediaType)),
                        ("entry_id", r.entryID.map(JSONValue.string) ?? .null), ("origin", .string(r.originNode)),
                        ("state", .string(state(status))), ("path", path.map(JSONValue.string) ?? .null),
                        ("confirmed_by", .array(status.confirmedBy.map { .string($0.nodeID) })),
                        ("received_from", status.receivedFrom.map(JSONValue.string) ?? .null),
                        ("progress", .object([("bytes", .number(Double(status.file == .present ? r.size : status.received))),
                                              ("total", .number(Double(r.size)))])),
                    ])
                }).prettyText)
                return 0
            }
            if statuses.isEmpty { context.console.print("no recordings") }
            for status in statuses {
                let r = status.recording
                var line = "\(r.id)  \(r.fileName)  \(r.size) bytes  \(r.mediaType)  \(state(status))"
                if status.file == .partial && !status.deleted {
                    line += " (\(status.received * 100 / max(r.size, 1))%" + (served ? ")" : " as last seen; resumes when served)")
                }
                if !status.confirmedBy.isEmpty { line += "  confirmed by \(status.confirmedBy.map(\.nodeID).joined(separator: ", "))" }
                if let from = status.receivedFrom { line += "  received from \(from)" }
                context.console.print(line)
                context.console.print("    sha256 \(r.sha256.hex)")
            }
            return 0
        })

    /// A media type for common recording extensions.
    static func mediaType(forExtension ext: String) -> String {
        let known = ["m4a": "audio/mp4", "mp4": "video/mp4", "mp3": "audio/mpeg", "wav": "audio/wav", "aac": "audio/aac",
                     "caf": "audio/x-caf", "ogg": "audio/ogg", "opus": "audio/opus", "flac": "audio/flac", "jpg": "image/jpeg",
                     "jpeg": "image/jpeg", "png": "image/png", "heic": "image/heic", "txt": "text/plain", "json": "application/json"]
        return known[ext] ?? "application/octet-stream"
    }
}
