import Glibc

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
        // The check and the page read one state of the replica, even beside a writer.
        try database.execute("SAVEPOINT export_page")
        defer { try? database.execute("RELEASE export_page") }
        let byTimeAlone = try timesDiffer(filter, clause: clause, values: values, after: after?.timestamp, limit: limit)
        if let after {
            clause += (clause.isEmpty ? "WHERE " : " AND ") + "(timestamp, id) > (?, ?)"
            values += [.text(after.timestamp), .text(after.id)]
        }
        values.append(.integer(Int64(limit)))
        var skipped: [String] = []
        var rows = 0
        // The last row's key, kept as bytes (no strings made for the rows before it).
        var lastTimestamp: [UInt8] = [], lastID: [UInt8] = []
        let order = byTimeAlone ? "timestamp" : "timestamp, id"
        try database.forEachRow("SELECT \(Replica.entryColumns) FROM entries \(clause) ORDER BY \(order) LIMIT ?", values) { row in
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

    /// Whether `ORDER BY timestamp` alone reads the page in its order, `timestamp, id`: so when
    /// no two of the rows it could hold share a time. Ordered by both, SQLite sorts every group
    /// of equal times after the time index gives them, a sorter for each row of a journal whose
    /// times all differ, which cost as much as the rest of reading the row.
    ///
    /// The page holds the first `limit` rows after `after` (its time `from`); the times of the
    /// rows from `from` on are read from the index, as many as the page and the row after it
    /// could be (one more: the row at `from` the last page ended with). When they all differ,
    /// the first `limit` rows by time are the first by time and ID, and the row after them has a
    /// later time, so no row with a smaller ID waits beyond the limit. Filters that need the
    /// rows themselves (tags, text, location) are read the sorting way: the check would read
    /// them twice.
    private func timesDiffer(_ filter: EntryQuery, clause: String, values: [SQLValue], after from: String?, limit: Int) throws -> Bool {
        guard filter.tag == nil, filter.search == nil, !filter.hasLocation else { return false }
        var clause = clause, values = values
        if let from {
            clause += (clause.isEmpty ? "WHERE " : " AND ") + "timestamp >= ?"
            values.append(.text(from))
        }
        values.append(.integer(Int64(limit + 2)))
        var previous: [UInt8] = [], differ = true, first = true
        try database.forEachRow("SELECT timestamp FROM entries \(clause) ORDER BY timestamp LIMIT ?", values) { row in
            guard differ else { return }
            row.withText(0) { time in
                if !first, time.count == previous.count, time.isEmpty || memcmp(time.baseAddress!, previous, time.count) == 0 { differ = false }
                previous.removeAll(keepingCapacity: true)
                previous.append(contentsOf: time)
            }
            first = false
        }
        return differ
    }
}
