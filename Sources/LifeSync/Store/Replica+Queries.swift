extension Replica {
    /// The live entry with `id`, or a `notFound` error.
    public func entry(id: String) throws -> LogEntry {
        guard let entry = try database.firstRow("SELECT \(Replica.entryColumns) FROM entries WHERE id = ?", [.text(id)], {
            try Replica.entry(from: $0)
        }) else { throw ReplicaError.notFound(id: id) }
        return entry
    }

    /// Live entries matching `query`, newest first (ties by id, so pages never overlap).
    public func entries(matching query: EntryQuery) throws -> [LogEntry] {
        var clauses: [String] = []
        var values: [SQLValue] = []
        if let since = query.since { clauses.append("timestamp >= ?"); values.append(.text(since.iso8601)) }
        if let until = query.until { clauses.append("timestamp <= ?"); values.append(.text(until.iso8601)) }
        if let category = query.category { clauses.append("category = ?"); values.append(.text(category)) }
        if let source = query.source { clauses.append("source = ?"); values.append(.text(source)) }
        if let tag = query.tag {
            clauses.append("EXISTS (SELECT 1 FROM json_each(entries.data, '$.tags') WHERE value = ?)")
            values.append(.text(tag))
        }
        if let search = query.search {
            clauses.append("lifesync_search(json_extract(data, '$.text'), ?)")
            values.append(.text(search))
        }
        let filter = clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
        values.append(.integer(Int64(query.limit)))
        values.append(.integer(Int64(query.offset)))
        return try database.rows("""
            SELECT \(Replica.entryColumns) FROM entries \(filter)
            ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?
            """, values) { try Replica.entry(from: $0) }
    }

    /// Every live entry, oldest first: what `export` writes.
    public func allEntries() throws -> [LogEntry] {
        try database.rows("SELECT \(Replica.entryColumns) FROM entries ORDER BY timestamp, id") { try Replica.entry(from: $0) }
    }

    /// How many live entries the replica holds.
    public func liveEntryCount() throws -> Int {
        Int(try database.firstRow("SELECT count(*) FROM entries", [], { $0.int64(0) }) ?? 0)
    }

    public func tombstoneCount() throws -> Int {
        Int(try database.firstRow("SELECT count(*) FROM tombstones", [], { $0.int64(0) }) ?? 0)
    }

    /// The stored version of a record (live or deleted), for status and tests.
    public func versionStamp(id: String) throws -> VersionStamp? {
        try storedVersion(id: id)?.stamp
    }
}
