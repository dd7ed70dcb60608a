/// The change feed: every entry this replica changed (a local write, or a peer's change it
/// applied), in the order it applied them, each entry once at its latest change. Every row of
/// `entries` and `tombstones` carries `feed_seq`, numbered by the one writer of rows
/// (RecordWriter), so no write path can leave a change out (schema step 11).
///
/// A reader that reads from a cursor and then follows misses nothing made after it: numbers are
/// handed out inside each write's transaction and SQLite commits one writer at a time, so what a
/// reader sees is always every number up to the latest it sees.
///
/// ```swift
/// var cursor: ChangeCursor? = nil
/// let page = try replica.changes(since: cursor, limit: 500)
/// for change in page.changes { index(change.id, change.entry) }   // entry nil: de-index
/// cursor = page.next
/// ```
extension Replica {
    /// The most changes one page holds.
    public static let maximumFeedPage = 1_000

    /// This replica's cursor tag (see `ChangeCursor`).
    public var feedTag: String { ChangeCursor.tag(for: identity) }

    /// The sequence of the latest change (0: none yet).
    public func latestChangeSequence() throws -> Int64 {
        try database.firstRow(RecordWriter.latestFeedSQL, [], { $0.int64(0) }) ?? 0
    }

    /// A cursor a client sent back, checked: this replica's, and not beyond its latest change.
    public func cursor(parsing text: String) throws -> ChangeCursor {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count <= 18, let sequence = Int64(parts[0]), sequence >= 0, !parts[1].isEmpty else {
            throw CursorRefused(description: "'\(text.prefix(60))' is not a change cursor (one is the next_cursor of an earlier answer)")
        }
        guard parts[1] == feedTag else {
            throw CursorRefused(description: "cursor '\(text.prefix(60))' is from another replica, or from this one before it was restored; "
                                + "read the feed again from the start (no since)")
        }
        let latest = try latestChangeSequence()
        guard sequence <= latest else {
            throw CursorRefused(description: "cursor '\(text.prefix(60))' is from the future: this replica's latest change is \(latest)")
        }
        return ChangeCursor(sequence: sequence, tag: feedTag)
    }

    /// The changes after `cursor` (nil: from the first), at most `limit` (1…`maximumFeedPage`).
    /// A row that does not read back is passed over (it is reported by the commands that list
    /// entries), so one damaged row does not stop the feed.
    package func changes(since cursor: ChangeCursor?, limit: Int) throws -> FeedPage {
        precondition((1...Replica.maximumFeedPage).contains(limit), "a feed page holds 1…\(Replica.maximumFeedPage) changes")
        let tag = feedTag
        precondition(cursor.map { $0.tag == tag } ?? true, "a cursor of this replica (checked by cursor(parsing:))")
        let after = cursor?.sequence ?? 0
        var last = after
        let rows = try database.rows("""
            SELECT feed_seq, id, id, timestamp, recorded_at, source, device_id, category, data, NULL
            FROM entries WHERE feed_seq > ?1
            UNION ALL
            SELECT feed_seq, id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, deleted_at
            FROM tombstones WHERE feed_seq > ?1
            ORDER BY 1 LIMIT ?2
            """, [.integer(after), .integer(Int64(limit + 1))]) { row -> (Int64, FeedChange?) in
            let sequence = row.int64(0)
            let cursor = ChangeCursor(sequence: sequence, tag: tag)
            do {
                let entry = row.isNull(2) ? nil : try Replica.entry(from: row, offset: 2)
                let deletedAt = try row.optionalString(9).map { try Timestamp(iso8601: $0) }
                return (sequence, FeedChange(cursor: cursor, id: row.string(1), entry: entry, deletedAt: entry == nil ? deletedAt : nil))
            } catch {
                return (sequence, nil)
            }
        }
        var changes: [FeedChange] = []
        for (sequence, change) in rows.prefix(limit) {
            last = sequence
            if let change { changes.append(change) }
        }
        return FeedPage(changes: changes, next: ChangeCursor(sequence: last, tag: tag), hasMore: rows.count > limit)
    }
}
