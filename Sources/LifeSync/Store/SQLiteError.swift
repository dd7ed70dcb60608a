/// A failure reported by SQLite, with the result code, SQLite's message and the statement.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
    public var code: Int32
    public var message: String
    public var sql: String?

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql.prefix(200)))" }
        return text
    }

    /// The primary result code, without the extended bits.
    public var primaryCode: Int32 { code & 0xFF }
}
