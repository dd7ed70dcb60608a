import CSQLite

extension Schema {
    /// Conversions done in Swift, by the version they finish: run right after that step's SQL,
    /// in the same transaction.
    static let conversions: [Int: @Sendable (Database) throws -> Void] = [27: compactWriteRows]

    /// Step 27: origins by number (OriginNumbers.swift). The write tables named each row's origin
    /// by its 36-character incarnation, in the row and again in its (origin, sequence) index,
    /// and the version vector as text (`origin=seq,…`), and the log of our own writes
    /// (`own_writes`) its origin too: about 190 of the 900 bytes an entry written here cost.
    /// They now hold the origin's number (`origin_no`) and the vector as varints (`vector`, a
    /// blob). `compactWriteRows` rebuilds the tables of a replica made before, keeping every
    /// row and rowid; a vector that does not parse (a damaged row) is kept as it was, text,
    /// which reads back as damaged as it did.
    static let originsStep = """
        CREATE TABLE IF NOT EXISTS origins (number INTEGER PRIMARY KEY, incarnation TEXT NOT NULL UNIQUE);
        """

    /// Step 28: the time indexes ascending. Entries mostly arrive in time order (a journal
    /// written as it happens, an import of a log, a peer's changes in the order they were made),
    /// and in a descending index each new row goes before all the others: SQLite splits the
    /// first leaf and leaves both halves half empty, so `idx_timestamp`, `idx_category` and
    /// `idx_source` held 100 of the 750 bytes an entry cost as unused room. Ascending, a row in
    /// time order is an append, and pages fill. SQLite walks an index either way, so newest-first
    /// pages read the same rows in the same order. The names stay the LifeLog document's.
    static let ascendingTimeStep = """
        DROP INDEX idx_timestamp;
        CREATE INDEX idx_timestamp ON entries(timestamp);
        DROP INDEX idx_category;
        CREATE INDEX idx_category ON entries(category, timestamp);
        DROP INDEX idx_source;
        CREATE INDEX idx_source ON entries(source, timestamp);
        """

    /// The tables step 27 rebuilds, as it leaves them: their columns in order (`%`: origin,
    /// origin_seq and vector; `#`: the origin alone), DDL and indexes.
    private static let compactTables: [(name: String, columns: String, create: String, indexes: String)] = [
        ("entries", "id, timestamp, recorded_at, source, device_id, category, data, created_at, hlc, %, feed_seq, fields, own", """
            CREATE TABLE entries (id TEXT PRIMARY KEY NOT NULL, timestamp TEXT NOT NULL, recorded_at TEXT NOT NULL, source TEXT NOT NULL,
                device_id TEXT NOT NULL, category TEXT, data TEXT NOT NULL, created_at TEXT NOT NULL, hlc INTEGER NOT NULL,
                origin_no INTEGER NOT NULL, origin_seq INTEGER NOT NULL, vector BLOB NOT NULL, feed_seq INTEGER NOT NULL DEFAULT 0,
                fields INTEGER, own TEXT);
            """, """
            CREATE INDEX idx_timestamp ON entries(timestamp DESC);
            CREATE INDEX idx_category ON entries(category, timestamp DESC);
            CREATE INDEX idx_source ON entries(source, timestamp DESC);
            CREATE UNIQUE INDEX idx_entries_origin_seq ON entries(origin_no, origin_seq);
            CREATE INDEX idx_entries_feed ON entries(feed_seq);
            """),
        ("tombstones", "id, deleted_at, hlc, %, feed_seq", """
            CREATE TABLE tombstones (id TEXT PRIMARY KEY NOT NULL, deleted_at TEXT NOT NULL, hlc INTEGER NOT NULL,
                origin_no INTEGER NOT NULL, origin_seq INTEGER NOT NULL, vector BLOB NOT NULL, feed_seq INTEGER NOT NULL DEFAULT 0);
            """, """
            CREATE UNIQUE INDEX idx_tombstones_origin_seq ON tombstones(origin_no, origin_seq);
            CREATE INDEX idx_tombstones_feed ON tombstones(feed_seq);
            """),
        ("kept_writes", "id, hlc, %, deleted, fields, content", """
            CREATE TABLE kept_writes (id TEXT NOT NULL, hlc INTEGER NOT NULL, origin_no INTEGER NOT NULL, origin_seq INTEGER NOT NULL,
                vector BLOB NOT NULL, deleted INTEGER NOT NULL, fields INTEGER, content TEXT);
            """, """
            CREATE UNIQUE INDEX idx_kept_writes_origin_seq ON kept_writes(origin_no, origin_seq);
            CREATE INDEX idx_kept_writes_id ON kept_writes(id);
            """),
        ("recordings", "id, file_name, size, sha256, media_type, entry_id, origin_node, created_at, deleted, hlc, %, origin_key, signature", """
            CREATE TABLE recordings (id TEXT PRIMARY KEY NOT NULL, file_name TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,
                media_type TEXT NOT NULL, entry_id TEXT, origin_node TEXT NOT NULL, created_at TEXT NOT NULL,
                deleted INTEGER NOT NULL DEFAULT 0, hlc INTEGER NOT NULL, origin_no INTEGER NOT NULL, origin_seq INTEGER NOT NULL,
                vector BLOB NOT NULL, origin_key BLOB, signature BLOB);
            """, """
            CREATE UNIQUE INDEX idx_recordings_origin_seq ON recordings(origin_no, origin_seq);
            """),
        // Our own write digests (step 24): one row per write of this node's, and no vector.
        ("own_writes", "#, seq, digest", """
            CREATE TABLE own_writes (origin_no INTEGER NOT NULL, seq INTEGER NOT NULL, digest BLOB NOT NULL,
                PRIMARY KEY (origin_no, seq)) WITHOUT ROWID;
            """, ""),
    ]

    /// Step 27's rebuild of the write tables still in the earlier form (inside the migration's
    /// transaction): their origins numbered first, in order, then each table copied row by row
    /// into its new form, which takes its name and indexes.
    static func compactWriteRows(_ db: Database) throws {
        let pending = try compactTables.filter { table in
            try db.firstRow("SELECT 1 FROM pragma_table_info(?) WHERE name = 'origin'", [.text(table.name)], { _ in true }) != nil
        }
        guard !pending.isEmpty else { return }
        var named = Set<String>()
        for table in pending {
            let vectors = table.columns.contains("%")
            try db.forEachRow("SELECT origin, \(vectors ? "vv" : "NULL") FROM \(table.name)") { row in
                named.insert(row.string(0))
                guard vectors else { return }
                for entry in VersionVector(storedText: row.string(1))?.entries ?? [] { named.insert(entry.origin) }
            }
        }
        var numbers: [String: Int64] = [:]
        for origin in named.sorted() { numbers[origin] = try db.originNumber(origin) }
        let converter = VectorConverter(db: db, numbers: numbers)
        try converter.register()
        defer { converter.unregister() }
        for table in pending {
            let number = "(SELECT number FROM origins WHERE incarnation = origin)"
            let new = table.columns.replacing("%", with: "origin_no, origin_seq, vector").replacing("#", with: "origin_no")
            let converted = table.columns.replacing("%", with: "\(number), origin_seq, lifesync_compact_vector(vv, origin, origin_seq)")
                .replacing("#", with: number)
            try db.execute("ALTER TABLE \(table.name) RENAME TO \(table.name)_before_27")
            // The indexes keep their names on the renamed table; the new ones take them.
            let indexes = try db.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                                      [.text(table.name + "_before_27")]) { $0.string(0) }
            for index in indexes { try db.execute("DROP INDEX \(index)") }
            try db.execute(table.create)
            let rowid = table.name == "own_writes" ? "" : "rowid, "
            try db.execute("INSERT INTO \(table.name)(\(rowid)\(new)) SELECT \(rowid)\(converted) FROM \(table.name)_before_27")
            try db.execute("DROP TABLE \(table.name)_before_27")
            try db.execute(table.indexes)
        }
    }
}

/// `lifesync_compact_vector(vv, origin, origin_seq)`, registered on the migrating connection
/// only: the stored form of a vector (`StoredVector`) from its earlier text, or the text itself
/// when it does not parse. Every origin it names was numbered before the copy.
private final class VectorConverter {
    let db: Database
    let numbers: [String: Int64]
    init(db: Database, numbers: [String: Int64]) {
        self.db = db
        self.numbers = numbers
    }

    func register() throws {
        let rc = sqlite3_create_function_v2(db.handle, "lifesync_compact_vector", 3, SQLITE_UTF8, Unmanaged.passUnretained(self).toOpaque(), { context, _, arguments in
            guard let context, let arguments, let data = sqlite3_user_data(context) else { return }
            let converter = Unmanaged<VectorConverter>.fromOpaque(data).takeUnretainedValue()
            func text(_ i: Int) -> String {
                guard let value = arguments[i], let bytes = sqlite3_value_text(value) else { return "" }
                return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
            }
            let stored = text(0)
            let sequence = arguments[2].map { UInt64(clamping: sqlite3_value_int64($0)) } ?? 0
            var bytes: [UInt8] = []
            guard let vector = VersionVector(storedText: stored),
                  (try? StoredVector.write(vector, own: (text(1), sequence), to: &bytes, number: { origin in
                      guard let number = converter.numbers[origin] else { throw ReplicaError.damaged("origin \(origin) not numbered") }
                      return number
                  })) != nil else {
                sqlite3_result_text(context, stored, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                return
            }
            bytes.withUnsafeBytes { buffer in
                sqlite3_result_blob(context, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count),
                                    unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw db.error(rc, sql: "lifesync_compact_vector") }
    }

    func unregister() {
        sqlite3_create_function_v2(db.handle, "lifesync_compact_vector", 3, SQLITE_UTF8, nil, nil, nil, nil, nil)
    }
}
