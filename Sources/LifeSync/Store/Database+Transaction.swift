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

    /// Runs `body` with its commits not fsynced on their own (WAL with `synchronous = NORMAL`),
    /// then goes back to fully synced commits. For writes whose loss at a power cut costs
    /// nothing but a repeat (a batch the sender still holds, a progress note): the next synced
    /// commit makes them durable too.
    ///
    ///     try database.withUnsyncedCommits { try database.run("UPDATE ...") }
    func withUnsyncedCommits<T>(_ body: () throws -> T) throws -> T {
        // `execute`, not a cached statement: SQLite applies this pragma while compiling it, so a
        // statement kept for reuse would not set it again.
        try execute("PRAGMA synchronous = NORMAL")
        defer { try? execute("PRAGMA synchronous = FULL") }
        return try body()
    }
}
