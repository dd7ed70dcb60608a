import CSQLite

extension Database {
    /// Copies this database into `target` as one consistent snapshot (SQLite's online backup
    /// API, all pages in one step), replacing what `target` held. Other connections may keep
    /// writing this database meanwhile: the copy is the state of one instant, never a mix.
    ///
    /// - Throws: `SQLiteError` when the target cannot take the copy (locked, full, read-only).
    package func copy(into target: Database) throws(SQLiteError) {
        guard let backup = sqlite3_backup_init(target.handle, "main", handle, "main") else {
            throw target.error(sqlite3_errcode(target.handle), sql: "backup")
        }
        // Whatever happens, the target's origin numbers and rows may no longer be what it held.
        defer { target.forgetCopies() }
        let step = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE else { throw target.error(step, sql: "backup") }
        guard finish == SQLITE_OK else { throw target.error(finish, sql: "backup") }
    }
}
