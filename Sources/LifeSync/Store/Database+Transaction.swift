extension Database {
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    ///
    /// `BEGIN IMMEDIATE` takes the write lock up front, so two processes writing the same
    /// replica queue on the busy timeout instead of failing half-way with SQLITE_BUSY.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
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
}
