extension Replica {
    /// A page of `allEntries(matching:)` as `entries(matching:after:limit:damaged:)` reads it,
    /// each readable row handed to `body` as it is read and nothing kept: what an export writes
    /// from. With `cells`, a row in the stored form comes as its bytes (`EntryCells`, valid only
    /// inside `body`), any other as the entry `entry(from:)` reads. `body` must not use the
    /// replica: the page's statement is still stepping.
    package func forEachEntry(matching filter: EntryQuery, after: (timestamp: String, id: String)?, limit: Int, cells: Bool,
                              damaged: inout [String], _ body: (StoredEntry) throws -> Void) throws
        -> (rows: Int, last: (timestamp: String, id: String)?) {
        var (clause, values) = try self.filter(filter)
        if let after {
            clause += (clause.isEmpty ? "WHERE " : " AND ") + "(timestamp, id) > (?, ?)"
            values += [.text(after.timestamp), .text(after.id)]
        }
        values.append(.integer(Int64(limit)))
        var skipped: [String] = []
        var rows = 0
        // The last row's key, kept as bytes (no strings made for the rows before it).
        var lastTimestamp: [UInt8] = [], lastID: [UInt8] = []
        try database.forEachRow("SELECT \(Replica.entryColumns) FROM entries \(clause) ORDER BY timestamp, id LIMIT ?", values) { row in
            rows += 1
            lastTimestamp.removeAll(keepingCapacity: true)
            lastID.removeAll(keepingCapacity: true)
            row.withText(1) { lastTimestamp.append(contentsOf: $0) }
            row.withText(0) { lastID.append(contentsOf: $0) }
            if cells, let read = EntryCells.read(row) { return try body(.cells(read)) }
            let entry: LogEntry
            do { entry = try Replica.entry(from: row) } catch ReplicaError.damaged {
                skipped.append(row.string(0))
                return
            }
            try body(.entry(entry))
        }
        damaged += skipped
        guard rows > 0 else { return (0, nil) }
        return (rows, (String(decoding: lastTimestamp, as: UTF8.self), String(decoding: lastID, as: UTF8.self)))
    }
}
