import CSQLite

/// A value bound to, or read from, SQLite.
package enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// A sequence number or other unsigned counter as SQLite's signed integer. Every sequence is
    /// bounded where it enters (the decoder, local writes: at most 2^53 − 1), so clamping never
    /// changes a stored value; for a query bound ("after `n`") a larger `n` still means "after
    /// everything", where a plain `Int64(n)` would trap.
    package static func counter(_ value: UInt64) -> SQLValue {
        .integer(Int64(clamping: value))
    }
}

/// A compiled SQL statement. Obtain one from ``Database/prepare(_:)``, which caches it.
package final class Statement {
    let handle: OpaquePointer
    unowned let database: Database
    package let sql: String

    init(database: Database, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw database.error(rc, sql: sql) }
        handle = statement
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Makes SQLite copy bound text and blobs, since Swift's buffers are temporary.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    package func bind(_ values: [SQLValue]) throws(SQLiteError) {
        for (i, value) in values.enumerated() { try bind(value, at: Int32(i + 1)) }
    }

    package func bind(_ value: SQLValue, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v): rc = bindText(v, at: index)
        case .blob(let v):
            rc = v.withUnsafeBytes { buffer in
                sqlite3_bind_blob(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), Statement.transient)
            }
        }
        guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
    }

    package func bind(_ value: Int64, at index: Int32) { sqlite3_bind_int64(handle, index, value) }

    package func bind(_ value: String?, at index: Int32) {
        guard let value else { sqlite3_bind_null(handle, index); return }
        _ = bindText(value, at: index)
    }

    private func bindText(_ value: String, at index: Int32) -> Int32 {
        var copy = value
        return copy.withUTF8 { buffer in
            // An empty buffer may have no address; SQLite would bind NULL for a nil pointer.
            let pointer = buffer.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(bitPattern: 1)!
            return sqlite3_bind_text(handle, index, pointer.assumingMemoryBound(to: CChar.self), Int32(buffer.count), Statement.transient)
        }
    }

    /// Binds bytes SQLite does not copy (`SQLITE_STATIC`): they must stay valid and unchanged
    /// until the statement has run and its bindings are cleared. See ``RowText``.
    func bindUncopied(_ text: UnsafeBufferPointer<UInt8>, at index: Int32) {
        let pointer = text.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(bitPattern: 1)!
        sqlite3_bind_text(handle, index, pointer.assumingMemoryBound(to: CChar.self), Int32(text.count), nil)
    }

    /// Binds bytes SQLite does not copy as a blob; see ``bindUncopied(_:at:)``.
    func bindUncopiedBlob(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) {
        let pointer = bytes.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(bitPattern: 1)!
        sqlite3_bind_blob(handle, index, pointer, Int32(bytes.count), nil)
    }

    package func clearBindings() { sqlite3_clear_bindings(handle) }

    /// Advances to the next row; false when the statement is done.
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Steps a statement that returns no rows, then resets it for reuse.
    package func execute() throws(SQLiteError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    package func isText(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_TEXT }

    package func isBlob(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_BLOB }

    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    package func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    package func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    package func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }

    /// The column's text as SQLite holds it, without making a `String`: valid only inside `body`.
    func withText<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let text = sqlite3_column_text(handle, column)
        return try body(UnsafeBufferPointer(start: text, count: text == nil ? 0 : Int(sqlite3_column_bytes(handle, column))))
    }

    /// The column's bytes as SQLite holds them, without copying: valid only inside `body`.
    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(handle, column)
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : Int(sqlite3_column_bytes(handle, column))))
    }

    package func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
