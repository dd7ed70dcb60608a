/// Follows a replica's change feed for an embedder: each `poll` returns what changed since the
/// last (a bounded page; call again while `caughtUp` is false). It holds no thread and no
/// timer — call it when convenient: after your own writes, on a timer, or when the node reports
/// a batch received (writes by other processes are visible at the next poll).
///
/// ```swift
/// var observer = ChangeObserver(replica: replica)          // from the first change
/// for change in try observer.poll() {
///     if let entry = change.entry { index(entry) } else { removeFromIndex(change.id) }
/// }
/// saveForNextLaunch(observer.cursor?.description)          // resume with ChangeObserver(replica:after:)
/// ```
public struct ChangeObserver {
    public let replica: Replica
    /// The last change returned (nil: none yet).
    public private(set) var cursor: ChangeCursor?
    /// Whether the last poll returned everything there was.
    public private(set) var caughtUp = false
    public let pageSize: Int

    public init(replica: Replica, after cursor: ChangeCursor? = nil, pageSize: Int = 500) {
        precondition((1...Replica.maximumFeedPage).contains(pageSize), "a page of 1…\(Replica.maximumFeedPage)")
        self.replica = replica
        self.cursor = cursor
        self.pageSize = pageSize
    }

    /// Starts after the latest change: only what changes from now on.
    public static func fromNow(replica: Replica, pageSize: Int = 500) throws -> ChangeObserver {
        ChangeObserver(replica: replica, after: ChangeCursor(sequence: try replica.latestChangeSequence(), tag: replica.feedTag), pageSize: pageSize)
    }

    /// The changes after the cursor, at most `pageSize`; the cursor moves past them.
    public mutating func poll() throws -> [FeedChange] {
        let page = try replica.changes(since: cursor, limit: pageSize)
        cursor = page.next
        caughtUp = !page.hasMore
        return page.changes
    }
}
