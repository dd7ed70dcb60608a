extension Replica {
    /// The meta key of the text index's backlog: rows with a greater feed number are not in
    /// `entries_text` yet (schema step 22's triggers leave them while it is set). Searches scan
    /// them (`searchClause`), so the backlog never hides an entry.
    static let textBacklogKey = "text_index_from"

    /// Runs `body` with the text index's inserts held back: rows written in it are indexed
    /// together at its end, in one statement, instead of one FTS5 flush a row. Within a
    /// transaction; a nested call leaves the work to the outermost. A body that receives a
    /// peer's batch (`keepsTextPending`) leaves its rows in the backlog, indexed when the burst
    /// ends (`catchUpTextIndex`): a commit per batch each writing an FTS5 segment took a third
    /// of a sync's time.
    func deferringTextIndex<T>(_ body: () throws -> T) throws -> T {
        textIndexDepth += 1
        defer { textIndexDepth -= 1 }
        guard textIndexDepth == 1 else { return try body() }
        keepsTextPending = false
        try database.run("INSERT OR IGNORE INTO meta(key, value) VALUES (?, (\(RecordWriter.latestFeedSQL)))", [.text(Replica.textBacklogKey)])
        let result = try body()
        if !keepsTextPending { try indexTextBacklog() }
        return result
    }

    /// Indexes the backlog's rows and ends it (inside the caller's transaction).
    func indexTextBacklog() throws {
        try database.run("""
            INSERT INTO entries_text(rowid, text)
            SELECT feed_seq, CASE WHEN json_valid(data) THEN json_extract(data, '$.text') END FROM entries
            WHERE feed_seq > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1)
            """, [.text(Replica.textBacklogKey)])
        try database.run("DELETE FROM meta WHERE key = ?", [.text(Replica.textBacklogKey)])
    }

    /// Indexes what received batches left in the backlog. Called when a sync burst ends
    /// (`checkpoint`); any later local write does it too.
    public func catchUpTextIndex() throws {
        guard try database.firstRow("SELECT 1 FROM meta WHERE key = ?", [.text(Replica.textBacklogKey)], { _ in true }) != nil else { return }
        try database.transaction { try indexTextBacklog() }
    }
}
