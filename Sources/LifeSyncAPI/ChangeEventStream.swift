/// The body of `GET /api/changes/stream`: the change feed as Server-Sent Events, open-ended.
/// Pulled by the server only while its client keeps up, so a slow reader lags behind the feed
/// (which the replica holds anyway) instead of making the node hold its backlog.
///
/// Each change is `id: <cursor>\nevent: change\ndata: <the feed item, one line>\n\n`; a client
/// that reconnects sends the last id as `Last-Event-ID` and misses nothing.
import LifeSync
import LifeSyncHTTP

package final class ChangeEventStream: HTTPBodySource {
    let replica: Replica
    package private(set) var cursor: ChangeCursor?
    /// A comment every 15 s while nothing else is sent.
    package static let keepaliveInterval: Int64 = 15_000
    static let keepaliveComment = Array(": keepalive\n\n".utf8)

    package init(replica: Replica, after cursor: ChangeCursor?) {
        self.replica = replica
        self.cursor = cursor
    }

    package var keepalive: (interval: Int64, bytes: [UInt8])? { (Self.keepaliveInterval, Self.keepaliveComment) }

    package func next(maximumBytes: Int) throws -> HTTPBodyPiece {
        var out: [UInt8] = []
        // Bounded: each page moves the cursor on, and the loop stops at the byte budget.
        for _ in 0..<64 where out.count < maximumBytes {
            let page = try replica.changes(since: cursor, limit: 100)
            cursor = page.next
            for change in page.changes { Self.write(change, to: &out) }
            if !page.hasMore { break }
        }
        return out.isEmpty ? .later : .bytes(out)
    }

    /// One event. The data is one line: JSON escapes every line break inside strings. The item's
    /// JSON goes straight into the body's bytes (no text made of it first, then copied).
    static func write(_ change: FeedChange, to out: inout [UInt8]) {
        out.append(contentsOf: "id: \(change.cursor)\nevent: change\ndata: ".utf8)
        change.json.write(to: &out, pretty: false, indent: 0)
        out.append(contentsOf: "\n\n".utf8)
    }
}
