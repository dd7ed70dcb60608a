/// Where a reader of the change feed is: the local sequence of the last change it has, tagged
/// with the replica (its node and incarnation) that numbered it. Clients treat the text as
/// opaque; the tag is what lets a cursor from another replica, or from this one before it was
/// restored from a backup (a new incarnation, numbers reused), be refused instead of silently
/// skipping or repeating changes.
public struct ChangeCursor: Equatable, Sendable, CustomStringConvertible {
    public var sequence: Int64
    public var tag: String

    public init(sequence: Int64, tag: String) {
        precondition(sequence >= 0, "feed sequences start at 1; 0 is before the first")
        self.sequence = sequence
        self.tag = tag
    }

    /// `42-9f3a0c1b`: the sequence, then the replica's tag.
    public var description: String { "\(sequence)-\(tag)" }

    /// The tag of a replica's cursors: 8 hex digits of SHA-256 over its node ID and incarnation.
    public static func tag(for identity: ReplicaIdentity) -> String {
        String(SHA256.hash(Array("\(identity.nodeID):\(identity.incarnation)".utf8)).hex.prefix(8))
    }
}

/// Why a cursor was refused.
public struct CursorRefused: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
}

/// One item of the change feed: the state this replica holds of an entry after the last change
/// it applied to it. `entry` nil means the entry is gone (de-index it); `deletedAt` says when
/// it was deleted. Only the latest change of each entry is listed (a compacted feed), at the
/// position of that change.
public struct FeedChange: Equatable, Sendable {
    public var cursor: ChangeCursor
    public var id: String
    public var entry: LogEntry?
    public var deletedAt: Timestamp?

    public init(cursor: ChangeCursor, id: String, entry: LogEntry?, deletedAt: Timestamp?) {
        self.cursor = cursor
        self.id = id
        self.entry = entry
        self.deletedAt = deletedAt
    }

    /// `{"cursor", "id", "entry": <as GET /api/entries/:id> | null, "deleted_at": ISO | null}`.
    public var json: JSONValue {
        .object([("cursor", .string(cursor.description)), ("id", .string(id)), ("entry", entry?.json ?? .null),
                 ("deleted_at", deletedAt.map { .string($0.iso8601) } ?? .null)])
    }
}

/// A page of the feed: its changes, the cursor to read on from, and whether more are there now.
package struct FeedPage: Equatable, Sendable {
    package var changes: [FeedChange]
    package var next: ChangeCursor
    package var hasMore: Bool

    package var json: JSONValue {
        .object([("changes", .array(changes.map(\.json))), ("next_cursor", .string(next.description)), ("has_more", .bool(hasMore))])
    }
}
