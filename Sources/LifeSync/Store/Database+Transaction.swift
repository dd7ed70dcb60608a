extension Database {
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    ///
    /// `BEGIN IMMEDIATE` takes the write lock up front, so two processes writing the same
    /// replica queue on the busy timeout instead of failing half-way with SQLITE_BUSY.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// How long the WAL stays once checkpointed (`PRAGMA journal_size_limit`), in bytes: at
    /// rest, and in a burst of unsynced commits (above the 65,536 pages it checkpoints at).
    static let journalLimit = 16 << 20, burstJournalLimit = 288 << 20

    /// Runs `body` with its commits not fsynced on their own (WAL with `synchronous = NORMAL`),
    /// then goes back to fully synced commits. For writes whose loss at a power cut costs
    /// nothing but a repeat (a batch the sender still holds, a progress note, a peer's status):
    /// the next synced commit makes them durable too.
    ///
    /// Nor do they checkpoint the WAL (copy it back into the file, with two fsyncs) before it
    /// passes 65536 pages (256 MiB) rather than SQLite's default 1000: a bulk sync dirties the
    /// same index pages batch after batch (entry IDs are random), each checkpoint copied them all
    /// again, and the receiver stalled while it did. The node checkpoints instead when a peer's
    /// burst ends or it idles (`Replica.checkpoint`), or its next synced write does. A peer that
    /// left half-way through its burst made the receiver copy back all it had taken so far as
    /// it noted the peer gone, 4% of a 100k-entry `bench sync`, before the peer came back.
    /// Nor is the WAL cut back to `journal_size_limit` (16 MiB) when it starts over after a
    /// checkpoint: cut, it grew again by 240 MiB before the next, and each new block of the file
    /// was a new page for the file system to allocate, zero and map (`ext4_da_write_begin`, 14% of
    /// the receiver's samples in a 1M-entry sync); kept, the next round writes over pages it
    /// already has. The first synced write after the burst's checkpoint cuts it back.
    ///
    ///     try database.withUnsyncedCommits { try database.run("UPDATE ...") }
    func withUnsyncedCommits<T>(_ body: () throws -> T) throws -> T {
        setWALAutocheckpoint(pages: 65536)
        defer { setWALAutocheckpoint(pages: 1000) }
        try execute("PRAGMA journal_size_limit = \(Database.burstJournalLimit)")
        defer { try? execute("PRAGMA journal_size_limit = \(Database.journalLimit)") }
        // `execute`, not a cached statement: SQLite applies this pragma while compiling it, so a
        // statement kept for reuse would not set it again.
        try execute("PRAGMA synchronous = NORMAL")
        defer { try? execute("PRAGMA synchronous = FULL") }
        return try body()
    }
}
