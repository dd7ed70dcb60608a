import CSQLite

/// One SQLite connection: a small, honest wrapper with cached prepared statements.
///
/// ```swift
/// let db = try Database(path: "replica.sqlite")
/// try db.execute("CREATE TABLE t(x)")
/// try db.run("INSERT INTO t VALUES (?)", [.integer(1)])
/// let rows = try db.rows("SELECT x FROM t") { $0.int64(0) }
/// ```
///
/// A connection is used from one thread at a time; the runtime gives each its own.
package final class Database {
    let handle: OpaquePointer
    package let path: String
    private var cache: [String: Statement] = [:]
    /// The origin numbers this connection has read or made (OriginNumbers.swift).
    let origins = OriginNumbers()
    /// This connection's copy of the `replica_vector` rows (VectorRows.swift).
    let vectorRowsCache = VectorRows()
    /// Transactions this connection committed, each durable (`sqlite3_commit_hook`): what a
    /// node that should be idle still writes.
    package private(set) var commits = 0

    /// Opens (or, with `create`, creates) the database at `path`; ":memory:" for a private one.
    /// WAL journaling lets a daemon read while a CLI writes; the busy timeout makes two writers
    /// queue instead of failing.
    package init(path: String, create: Bool = true, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5_000) throws(SQLiteError) {
        _ = Database.configured
        var db: OpaquePointer?
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX
        // `file:` URIs let the simulator keep each node's replica in shared memory.
        if path.hasPrefix("file:") { flags |= SQLITE_OPEN_URI }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message, sql: nil)
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        // A rollback may take back origin numbers this connection made, and rows it read: forget them all.
        sqlite3_rollback_hook(db, { context in
            guard let context else { return }
            Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().forgetCopies()
        }, Unmanaged.passUnretained(self).toOpaque())
        sqlite3_commit_hook(db, { context in
            guard let context else { return 0 }
            Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().commits += 1
            return 0  // zero lets the commit go ahead
        }, Unmanaged.passUnretained(self).toOpaque())
        registerFunctions()
    }

    /// Process-wide settings, made once before the first connection opens. SQLite's memory
    /// statistics (which nothing here reads) cost a global mutex on each of the dozens of
    /// allocations it makes per stored row.
    private static let configured: Bool = lifesync_sqlite3_disable_memstatus() == SQLITE_OK

    deinit {
        cache.removeAll()
        sqlite3_rollback_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_close_v2(handle)
    }

    /// Forgets what this connection keeps of the file's rows: a rollback or a copy into the
    /// file may have taken them back.
    func forgetCopies() {
        origins.forget()
        vectorRowsCache.forget()
    }

    func error(_ code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Runs one or more statements that take no parameters and return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// A prepared statement for `sql`, compiled once per connection and reset for reuse.
    package func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try Statement(database: self, sql: sql)
        cache[sql] = statement
        return statement
    }

    /// Runs a statement with `values` bound to its parameters, discarding rows.
    package func run(_ sql: String, _ values: [SQLValue] = []) throws(SQLiteError) {
        let statement = try prepare(sql)
        try statement.bind(values)
        while try statement.step() {}
        statement.reset()
    }

    /// Runs a query and maps each row.
    package func rows<T>(_ sql: String, _ values: [SQLValue] = [], _ map: (Statement) throws -> T) throws -> [T] {
        let statement = try prepare(sql)
        try statement.bind(values)
        defer { statement.reset() }
        var result: [T] = []
        while try statement.step() { result.append(try map(statement)) }
        return result
    }

    /// Each row of a query in turn, without collecting them: memory does not grow with the result.
    package func forEachRow(_ sql: String, _ values: [SQLValue] = [], _ body: (Statement) throws -> Void) throws {
        let statement = try prepare(sql)
        try statement.bind(values)
        defer { statement.reset() }
        while try statement.step() { try body(statement) }
    }

    /// The first row of a query, mapped, or nil when there is none.
    package func firstRow<T>(_ sql: String, _ values: [SQLValue] = [], _ map: (Statement) throws -> T) throws -> T? {
        let statement = try prepare(sql)
        try statement.bind(values)
        defer { statement.reset() }
        return try statement.step() ? try map(statement) : nil
    }

    /// After a commit leaves the WAL longer than `pages`, that connection checkpoints it
    /// (`PRAGMA wal_autocheckpoint`, without parsing SQL each time).
    func setWALAutocheckpoint(pages: Int32) {
        sqlite3_wal_autocheckpoint(handle, pages)
    }

    /// Hands back the page cache this connection does not need now (`sqlite3_db_release_memory`):
    /// an idle node keeps no burst's worth of pages.
    package func releaseMemory() {
        sqlite3_db_release_memory(handle)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// The schema version kept in the file header (`PRAGMA user_version`).
    package var userVersion: Int {
        get throws(SQLiteError) {
            let statement = try prepare("PRAGMA user_version")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int64(0))
        }
    }

    package func setUserVersion(_ version: Int) throws(SQLiteError) {
        try execute("PRAGMA user_version = \(version)")
    }

    /// Changes whenever another connection commits to the file: how a daemon notices that the
    /// CLI wrote to the replica it serves.
    package var dataVersion: Int64 {
        get throws(SQLiteError) {
            let statement = try prepare("PRAGMA data_version")
            defer { statement.reset() }
            _ = try statement.step()
            return statement.int64(0)
        }
    }
}
