extension Replica {
    /// Runs `body` with the text index's inserts held back (schema step 22): rows written in it
    /// are indexed together at its end, in one statement, instead of one FTS5 flush a row.
    /// Within a transaction; a nested call leaves the work to the outermost.
    func deferringTextIndex<T>(_ body: () throws -> T) throws -> T {
        let mark = try database.firstRow("SELECT 1 FROM meta WHERE key = 'text_index_from'", [], { _ in true }) == nil
        guard mark else { return try body() }
        try database.run("INSERT INTO meta(key, value) VALUES ('text_index_from', (\(RecordWriter.latestFeedSQL)))")
        let result = try body()
        try database.run("""
            INSERT INTO entries_text(rowid, text)
            SELECT feed_seq, CASE WHEN json_valid(data) THEN json_extract(data, '$.text') END FROM entries
            WHERE feed_seq > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_index_from')
            """)
        try database.run("DELETE FROM meta WHERE key = 'text_index_from'")
        return result
    }
}
