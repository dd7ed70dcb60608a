/// A recording as `lifesync recordings --json` and `GET /api/recordings` show it: one shape,
/// whichever way it is asked for.
import LifeSync

extension RecordingStatus {
    /// `state` in words, where a download is live only while a node serves the replica: one a
    /// killed node left behind says interrupted rather than transferring.
    package func state(served: Bool) -> String {
        file == .partial && !deleted && !served ? "interrupted" : state
    }

    /// `path`: where the file is on this machine, when it is here whole.
    package func json(served: Bool, path: String?) -> JSONValue {
        let r = recording
        return .object([
            ("id", .string(r.id)), ("file_name", .string(r.fileName)), ("size", .number(Double(r.size))),
            ("sha256", .string(r.sha256.hex)), ("media_type", .string(r.mediaType)),
            ("entry_id", r.entryID.map(JSONValue.string) ?? .null), ("origin", .string(r.originNode)),
            ("state", .string(state(served: served))), ("path", file == .present ? path.map(JSONValue.string) ?? .null : .null),
            ("confirmed_by", .array(confirmedBy.map { .string($0.nodeID) })),
            ("received_from", receivedFrom.map(JSONValue.string) ?? .null),
            ("progress", .object([("bytes", .number(Double(file == .present ? r.size : received))), ("total", .number(Double(r.size)))])),
        ])
    }
}
