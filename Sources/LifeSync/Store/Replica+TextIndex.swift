extension Replica {
    /// The meta key of the text index's mark (schema step 23): live rows whose feed number is at
    /// or below it are in `entries_text`, rows above it (the backlog) are not yet. Every write
    /// gives its row a new feed number, so a row written lands in the backlog by itself; searches
    /// scan the backlog (`searchClause`), so it never hides an entry.
    static let textBacklogKey = "text_index_from"

    /// Runs `body`, then adds the counts of the rows it wrote to the tables (`CountTally`) and
    /// indexes their text in one statement: one FTS5 flush for the whole transaction rather
    /// than one a row. Within a transaction; a nested call leaves the work to the outermost. A
    /// body that receives a peer's batch or HISTORY (`keepsTextPending`) leaves its rows' text
    /// in the backlog, indexed when the burst ends (`catchUpTextIndex`): a commit per batch each
    /// writing an FTS5 segment took a third of a sync's time. Its counts are in step at once.
    func deferringTextIndex<T>(_ body: () throws -> T) throws -> T {
        textIndexDepth += 1
        defer { textIndexDepth -= 1 }
        guard textIndexDepth == 1 else { return try body() }
        keepsTextPending = false
        countTally.open()
        let result: T
        do {
            result = try body()
            try countTally.flush(into: database, closing: true)
        } catch {
            countTally.discard()
            throw error
        }
        if !keepsTextPending {
            try indexTextBacklog()
            textCatchUpDue = false
        }
        return result
    }

    /// Indexes the text of the backlog's rows and moves the text index's mark to the latest
    /// feed number (inside the caller's transaction), `backlogSlice` feed numbers at a time, so
    /// a million-entry import catches up in the memory a small one needs. Damaged data (not
    /// JSON) is indexed as no text. With `limit`, it stops once the mark moved that many feed
    /// numbers; it returns whether a backlog is left. The rows were counted by the transaction
    /// that wrote them (`CountTally`).
    @discardableResult
    func indexTextBacklog(limit: Int64 = .max) throws -> Bool {
        let latest = try latestChangeSequence()
        var mark = try textIndexMark()
        let stop = mark + min(limit, latest - mark)
        while mark < stop {
            let upTo = min(stop, mark + Self.backlogSlice)
            try database.run("""
                INSERT INTO entries_text(rowid, text)
                SELECT feed_seq, CASE WHEN json_valid(data) THEN json_extract(data, '$.text') END FROM entries
                WHERE feed_seq > ?1 AND feed_seq <= ?2
                """, [.integer(mark), .integer(upTo)])
            try database.run("UPDATE meta SET value = ? WHERE key = ?", [.text(String(upTo)), .text(Replica.textBacklogKey)])
            mark = upTo
        }
        return mark < latest
    }

    /// Feed numbers the mark moves past in one slice of `indexTextBacklog`.
    static let backlogSlice: Int64 = 16_384

    /// The text index's mark: rows with a greater feed number are its backlog.
    func textIndexMark() throws -> Int64 {
        try database.firstRow("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?", [.text(Replica.textBacklogKey)], { $0.int64(0) }) ?? 0
    }

    /// Indexes what received batches left in the backlog when a sync burst ends (`checkpoint`:
    /// a peer's CAUGHT_UP, or a serving node's first idle turn): at once when it is one step's
    /// worth, else step by step (`textCatchUpDue`). A million rows indexed at once held a
    /// serving node's loop 7 s, every peer and API request waiting. A local write indexes
    /// whatever is left, as it always did.
    func startTextCatchUp() throws {
        guard !textCatchUpDue else { return }
        let latest = try latestChangeSequence()
        if latest - (try textIndexMark()) > Self.catchUpStep {
            textCatchUpDue = true
        } else {
            try catchUpTextIndex()
        }
    }

    /// Feed numbers one step of a burst's catch-up indexes: under 30 ms of a serving node's
    /// loop on this machine kind, mostly. An API request that comes during a step waits for it:
    /// with 8,192 a step, a tenth of the requests during a 1M-row catch-up took over 100 ms.
    static let catchUpStep: Int64 = 2_048

    /// One step of the catch-up `checkpoint` left due, in a transaction of its own with an
    /// unsynced commit (the index is made again from the rows if a power cut takes it); the
    /// last step checkpoints the WAL the steps wrote. Returns whether steps are left. A step
    /// that fails ends the catch-up: the next local write or burst takes it up again.
    /// - Throws: what SQLite reports.
    @discardableResult
    public func stepTextCatchUp() throws -> Bool {
        guard textCatchUpDue else { return false }
        do {
            textCatchUpDue = try database.withUnsyncedCommits {
                try database.transaction { try indexTextBacklog(limit: Self.catchUpStep) }
            }
        } catch {
            textCatchUpDue = false
            throw error
        }
        if !textCatchUpDue { try database.run("PRAGMA wal_checkpoint(PASSIVE)") }
        return textCatchUpDue
    }

    /// Indexes whatever received batches left in the backlog, at once (a bench, a node that
    /// stopped serving).
    public func catchUpTextIndex() throws {
        let pending = try database.firstRow("""
            SELECT 1 FROM entries WHERE feed_seq > ?1 UNION ALL SELECT 1 FROM tombstones WHERE feed_seq > ?1 LIMIT 1
            """, [.integer(try textIndexMark())], { _ in true }) != nil
        guard pending else { return }
        _ = try database.transaction { try indexTextBacklog() }
        textCatchUpDue = false
    }
}
