/// A concurrent version that lost a merge and is kept instead of dropped
/// ("keep the local copy as backup").
public struct Conflict: Equatable, Sendable {
    public var entryID: String
    public var loser: VersionStamp
    /// The losing content; nil when the loser was a delete.
    public var loserEntry: LogEntry?
    public var winner: VersionStamp
    /// When this replica detected the conflict (its own clock).
    public var detectedAt: Timestamp

    public var json: JSONValue {
        func side(_ stamp: VersionStamp) -> [(String, JSONValue)] {
            [("hlc", .string(stamp.hlc.description)), ("origin", .string(stamp.origin)),
             ("sequence", .number(Double(stamp.sequence))), ("deleted", .bool(stamp.deleted))]
        }
        var loserMembers = side(loser)
        loserMembers.append(("entry", loserEntry?.json ?? .null))
        return .object([
            ("entry_id", .string(entryID)),
            ("loser", .object(loserMembers)),
            ("winner", .object(side(winner))),
            ("detected_at", .string(detectedAt.iso8601)),
        ])
    }
}
