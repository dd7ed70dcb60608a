extension Replica {
    /// The live entry with `id`, or a `notFound` error.
    public func entry(id: String) throws -> LogEntry {
        guard let entry = try database.firstRow("SELECT \(Replica.entryColumns) FROM entries WHERE id = ?", [.text(id)], {
            try Replica.entry(from: $0)
        }) else { throw ReplicaError.notFound(id: id) }
        return entry
    }

    /// The stored entry an ID a client holds addresses (`Identifier.addressedEntryID`): a bare
    /// UUID names `lifelog_` and that UUID; when no such entry is live but exactly one entry
    /// made on a device (`watch_`, `phone_`, `mac_`) carries the UUID, it names that one, so the
    /// `id` a `lifelog-app` key's client reads (EntryPresentation) addresses what it read.
    public func entryID(addressedBy given: String) throws -> String {
        let addressed = Identifier.addressedEntryID(given)
        let uuid = given.lowercased()
        guard Identifier.isUUIDv4(uuid[...]),
              try database.firstRow("SELECT 1 FROM entries WHERE id = ?", [.text(addressed)], { _ in true }) == nil else {
            return addressed
        }
        let found = try Role.allCases.compactMap { role in
            try database.firstRow("SELECT id FROM entries WHERE id = ?", [.text(role.rawValue + "_" + uuid)], { $0.string(0) })
        }
        return found.count == 1 ? found[0] : addressed
    }

    /// Up to `limit` live entry IDs that start with `prefix` (a shortened ID a person copied),
    /// in ID order; a prefix without `_` is the start of the UUID part, under any role or
    /// source (`ce2c2334` finds `phone_ce2c2334-…`).
    public func entryIDs(startingWith prefix: String, limit: Int) throws -> [String] {
        let given = prefix.lowercased()
        guard !given.isEmpty else { return [] }
        guard given.contains("_") else {
            return try database.rows("SELECT id FROM entries WHERE substr(id, instr(id, '_') + 1, ?) = ? ORDER BY id LIMIT ?",
                                     [.integer(Int64(given.utf8.count)), .text(given), .integer(Int64(limit))]) { $0.string(0) }
        }
        // A range on the primary key, not a scan: every ID is ASCII, and `~` sorts after it all.
        return try database.rows("SELECT id FROM entries WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                                 [.text(given), .text(given + "~"), .integer(Int64(limit))]) { $0.string(0) }
    }

    /// The shortest start of the live entry `id`, at least `minimum` characters after its `_`,
    /// that no other live entry's ID shares (`phone_ce2c2334` in a household's journal), or the
    /// whole ID when none is shorter.
    public func uniquePrefix(of id: String, minimum: Int = 8) throws -> String {
        guard let underscore = id.firstIndex(of: "_") else { return id }
        var length = id.distance(from: id.startIndex, to: underscore) + 1 + minimum
        while length < id.count {
            let prefix = String(id.prefix(length))
            if try entryIDs(startingWith: prefix, limit: 2).count <= 1 { return prefix }
            length += 1
        }
        return id
    }

    /// Live entries matching `query`, newest first (ties by id, so pages never overlap).
    public func entries(matching query: EntryQuery) throws -> [LogEntry] {
        var damaged: [String] = []
        return try entries(matching: query, damaged: &damaged)
    }

    /// `entries(matching:)`, passing over rows that do not read back (their IDs go to `damaged`).
    public func entries(matching query: EntryQuery, damaged: inout [String]) throws -> [LogEntry] {
        var (filter, values) = try self.filter(query)
        if let before = query.before {
            // `timestamp <= ?` on its own, so the timestamp index bounds the range: no rows walked over.
            filter += (filter.isEmpty ? "WHERE " : " AND ") + "timestamp <= ? AND (timestamp < ? OR id < ?)"
            values += [.text(before.timestamp.iso8601), .text(before.timestamp.iso8601), .text(before.id)]
        }
        values.append(.integer(Int64(query.limit)))
        values.append(.integer(Int64(query.offset)))
        return try readableEntries("""
            SELECT \(Replica.entryColumns) FROM entries \(filter)
            ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?
            """, values, damaged: &damaged)
    }

    /// Every live entry, oldest first: what `export` writes.
    public func allEntries() throws -> [LogEntry] {
        var damaged: [String] = []
        return try allEntries(damaged: &damaged)
    }

    /// Every live entry `filter` selects, oldest first; its `limit` and `offset` do not apply.
    public func allEntries(matching filter: EntryQuery = EntryQuery(), damaged: inout [String]) throws -> [LogEntry] {
        let (clause, values) = try self.filter(filter)
        return try readableEntries("SELECT \(Replica.entryColumns) FROM entries \(clause) ORDER BY timestamp, id", values, damaged: &damaged)
    }

    /// A page of `allEntries(matching:)`: the entries after `after` (timestamp, ID), oldest first,
    /// from at most `limit` rows; `last` is the key of the last row read, damaged or not (nil:
    /// none), so the next page starts after it.
    public func entries(matching filter: EntryQuery, after: (timestamp: String, id: String)?, limit: Int, damaged: inout [String]) throws
        -> (entries: [LogEntry], rows: Int, last: (timestamp: String, id: String)?) {
        var entries: [LogEntry] = []
        let page = try forEachEntry(matching: filter, after: after, limit: limit, cells: false, damaged: &damaged) { stored in
            if case .entry(let entry) = stored { entries.append(entry) }
        }
        return (entries, page.rows, page.last)
    }

    /// The `WHERE` clause (empty when nothing filters) and its values for a query's filters,
    /// without its limit and offset: one meaning of each filter for list, export and stats.
    func filter(_ query: EntryQuery) throws -> (clause: String, values: [SQLValue]) {
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
            let (clause, searchValues) = try searchClause(search)
            clauses.append(clause)
            values += searchValues
        }
        if query.hasLocation { clauses.append("json_extract(data, '$.location') IS NOT NULL") }
        return (clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND "), values)
    }

    /// The entries `sql` selects, except rows that do not read back: one damaged row must not
    /// hide a whole journal.
    private func readableEntries(_ sql: String, _ values: [SQLValue], damaged: inout [String]) throws -> [LogEntry] {
        var skipped: [String] = []
        let entries = try database.rows(sql, values) { row -> LogEntry? in
            do { return try Replica.entry(from: row) } catch ReplicaError.damaged {
                skipped.append(row.string(0))
                return nil
            }
        }
        damaged += skipped
        return entries.compactMap { $0 }
    }

    /// How many live entries the replica holds (the kept count: `count(*)` reads the whole table).
    public func liveEntryCount() throws -> Int { try summaryTotal("all") }

    /// How many deleted records the replica keeps tombstones of (the kept count).
    public func tombstoneCount() throws -> Int { try summaryTotal("tombstones") }

    /// Losing versions kept in the conflicts table (`lifesync conflicts`).
    public func conflictCount() throws -> Int {
        Int(try database.firstRow("SELECT count(*) FROM conflicts", [], { $0.int64(0) }) ?? 0)
    }

    /// Recordings not deleted, whether or not their bytes are here.
    public func recordingCount() throws -> Int {
        Int(try database.firstRow("SELECT count(*) FROM recordings WHERE deleted = 0", [], { $0.int64(0) }) ?? 0)
    }

    /// The stored version of a record (live or deleted), for status and tests.
    public func versionStamp(id: String) throws -> VersionStamp? {
        try storedVersion(id: id)?.stamp
    }
}
