extension Replica {
    /// The meta key of the text index's mark (schema step 23): live rows whose feed number is at
    /// or below it are in `entries_text`, rows above it (the backlog) are not yet. Every write
    /// gives its row a new feed number, so a row written lands in the backlog by itself; searches
    /// scan the backlog (`searchClause`), so it never hides an entry.
    static let textBacklogKey = "text_index_from"

    /// Runs `body`, then indexes the rows it wrote, in one statement: one FTS5 flush for the
    /// whole transaction rather than one a row. Within a transaction; a nested call leaves the
    /// work to the outermost. A body that receives a peer's batch or HISTORY (`keepsTextPending`)
    /// leaves its rows in the backlog, indexed when the burst ends (`catchUpTextIndex`): a commit
    /// per batch each writing an FTS5 segment took a third of a sync's time.
    func deferringTextIndex<T>(_ body: () throws -> T) throws -> T {
        textIndexDepth += 1
        defer { textIndexDepth -= 1 }
        guard textIndexDepth == 1 else { return try body() }
        keepsTextPending = false
        let result = try body()
        if !keepsTextPending { try indexTextBacklog() }
        return result
    }

    /// Indexes the backlog's rows, adds them and its tombstones to the journal's counts
    /// (EntrySummary), and moves the mark to the latest feed number (inside the caller's
    /// transaction), `backlogSlice` feed numbers at a time: each step groups and indexes a
    /// bounded number of rows, so a million-entry import catches up in the memory a small one
    /// needs (one pass over its whole backlog sorted a million rows at once). Damaged data (not
    /// JSON) is indexed as no text.
    func indexTextBacklog() throws {
        let latest = try database.firstRow(RecordWriter.latestFeedSQL, [], { $0.int64(0) }) ?? 0
        var mark = try textIndexMark()
        while mark < latest {
            let upTo = min(latest, mark + Self.backlogSlice)
            try database.run("""
                INSERT INTO entries_text(rowid, text)
                SELECT feed_seq, CASE WHEN json_valid(data) THEN json_extract(data, '$.text') END FROM entries
                WHERE feed_seq > ?1 AND feed_seq <= ?2
                """, [.integer(mark), .integer(upTo)])
            for step in EntrySummary.addBacklogSQL { try database.run(step.sql, step.takesLatest ? [.integer(upTo)] : []) }
            try database.run("UPDATE meta SET value = ? WHERE key = ?", [.text(String(upTo)), .text(Replica.textBacklogKey)])
            mark = upTo
        }
    }

    /// Feed numbers the mark moves past in one step of `indexTextBacklog`.
    static let backlogSlice: Int64 = 16_384

    /// The mark: rows with a greater feed number are the backlog.
    func textIndexMark() throws -> Int64 {
        try database.firstRow("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?", [.text(Replica.textBacklogKey)], { $0.int64(0) }) ?? 0
    }

    /// Indexes what received batches left in the backlog. Called when a sync burst ends
    /// (`checkpoint`: a peer's CAUGHT_UP, or a serving node's first idle turn); any later local
    /// write does it too.
    public func catchUpTextIndex() throws {
        let pending = try database.firstRow("""
            SELECT 1 FROM entries WHERE feed_seq > ?1 UNION ALL SELECT 1 FROM tombstones WHERE feed_seq > ?1 LIMIT 1
            """, [.integer(try textIndexMark())], { _ in true }) != nil
        guard pending else { return }
        try database.transaction { try indexTextBacklog() }
    }
}
