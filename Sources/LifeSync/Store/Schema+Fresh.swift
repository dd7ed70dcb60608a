extension Schema {
    /// What the steps leave in a new, empty database, as one script of plain `CREATE`s and
    /// `INSERT`s: the steps run once a process, on an in-memory database, and every new replica
    /// after the first is made by the script (`migrate`). Run one by one, the steps rebuild
    /// tables and indexes that an empty file never needed in their earlier forms (step 27
    /// renames five tables, and each rename makes SQLite rewrite every statement of the schema):
    /// a quarter of a simulation's processor time went to making its replicas. The script holds
    /// nothing the steps did not make, so there is one home for the schema still: the steps.
    /// `FreshSchemaTests` checks that both ways give the same tables, indexes, triggers and rows.
    ///
    /// - Throws: `SQLiteError` when the steps fail on the in-memory database (they do not).
    static func freshScript() throws -> String { try freshTemplate.get() }

    private static let freshTemplate = Result<String, any Error> {
        let db = try Database(path: ":memory:")
        try db.transaction {
            try runSteps(db, after: 0)
            try db.setUserVersion(currentVersion)
        }
        return try script(of: db)
    }

    /// Runs the steps after version `found` on `db` (inside the caller's transaction).
    static func runSteps(_ db: Database, after found: Int) throws {
        for version in (found + 1)...currentVersion {
            try db.execute(migrations[version - 1])
            try conversions[version]?(db)
        }
    }

    /// The schema and rows of `db` as SQL, in the order SQLite keeps them (an object comes after
    /// what it names). A virtual table makes its own tables (FTS5's `_data`, `_config`, …), so
    /// only their rows are written, after it; SQLite's own tables likewise.
    static func script(of db: Database) throws -> String {
        let objects = try db.rows("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid") {
            (type: $0.string(0), name: $0.string(1), sql: $0.string(2))
        }
        let virtual = objects.filter { $0.sql.hasPrefix("CREATE VIRTUAL TABLE") }.map(\.name)
        func madeBySQLite(_ name: String) -> Bool {
            name.hasPrefix("sqlite_") || virtual.contains { name.hasPrefix($0 + "_") }
        }
        var script = ""
        for object in objects where !madeBySQLite(object.name) { script += object.sql + ";\n" }
        for object in objects where object.type == "table" && !virtual.contains(object.name) {
            script += try rowsAsSQL(db, table: object.name)
        }
        return script
    }

    /// `INSERT OR REPLACE` statements giving `table` the rows it holds in `db`, rowids included
    /// where it has them (replacing what a virtual table wrote into its own tables as it was made).
    private static func rowsAsSQL(_ db: Database, table: String) throws -> String {
        func quoted(_ name: String) -> String { "\"" + name.replacing("\"", with: "\"\"") + "\"" }
        var names = try db.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)]) { quoted($0.string(0)) }
        let withoutRowid = try db.firstRow("SELECT 1 FROM pragma_table_list WHERE name = ? AND wr = 1", [.text(table)]) { _ in true } ?? false
        if !withoutRowid { names.insert("rowid", at: 0) }
        let values = names.map { "quote(\($0))" }.joined(separator: " || ', ' || ")
        return try db.rows("SELECT \(values) FROM \(quoted(table))\(withoutRowid ? "" : " ORDER BY rowid")") { row in
            "INSERT OR REPLACE INTO \(quoted(table))(\(names.joined(separator: ", "))) VALUES (\(row.string(0)));\n"
        }.joined()
    }
}
