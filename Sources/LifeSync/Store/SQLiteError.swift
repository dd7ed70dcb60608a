import CSQLite

/// A failure reported by SQLite, with the result code, SQLite's message and the statement.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
    public var code: Int32
    public var message: String
    public var sql: String?

    public var description: String {
        if primaryCode == SQLITE_BUSY {  // the busy timeout ran out
            return "the replica is busy: another process (an import, a running node) held its write lock "
                + "longer than this one waits; try again when it is done (SQLite error \(code): \(message))"
        }
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql.prefix(200)))" }
        return text
    }

    /// The primary result code, without the extended bits.
    public var primaryCode: Int32 { code & 0xFF }
}
