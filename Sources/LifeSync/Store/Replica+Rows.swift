/// Where a record currently lives in the replica.
enum StoredPlace {
    case live
    case tombstone
}

/// The current version of one record, as stored.
struct StoredVersion {
    var stamp: VersionStamp
    var place: StoredPlace
}

extension Replica {
    static let entryColumns = "id, timestamp, recorded_at, source, device_id, category, data"

    /// The stored version of record `id`, live or deleted, or nil when the replica never saw it.
    func storedVersion(id: String) throws -> StoredVersion? {
        try database.firstRow("""
            SELECT hlc, origin, origin_seq, vv, 0 FROM entries WHERE id = ?1
            UNION ALL SELECT hlc, origin, origin_seq, vv, 1 FROM tombstones WHERE id = ?1
            """, [.text(id)]) { row in
            let deleted = row.int64(4) != 0
            return StoredVersion(stamp: try Replica.stamp(from: row, deleted: deleted), place: deleted ? .tombstone : .live)
        }
    }

    /// Reads `hlc, origin, origin_seq, vv` from the first four columns.
    static func stamp(from row: Statement, deleted: Bool, offset: Int32 = 0) throws -> VersionStamp {
        guard let vector = VersionVector(storedText: row.string(offset + 3)) else {
            throw ReplicaError.storage("damaged version vector in the replica: \(row.string(offset + 3).prefix(80))")
        }
        return VersionStamp(hlc: HLCTimestamp(rawValue: row.int64(offset)), origin: row.string(offset + 1),
                            sequence: UInt64(row.int64(offset + 2)), vector: vector, deleted: deleted)
    }

    /// Reads an entry from `id, timestamp, recorded_at, source, device_id, category, data` at `offset`.
    static func entry(from row: Statement, offset: Int32 = 0) throws -> LogEntry {
        let id = row.string(offset)
        do {
            let data = try LogData.validated(from: try JSONValue.parse(row.string(offset + 6)), path: "data")
            return LogEntry(id: id, timestamp: try Timestamp(iso8601: row.string(offset + 1)),
                            recordedAt: try Timestamp(iso8601: row.string(offset + 2)), source: row.string(offset + 3),
                            deviceId: row.string(offset + 4), category: row.optionalString(offset + 5), data: data)
        } catch {
            throw ReplicaError.storage("entry \(id) in the replica is damaged: \(error)")
        }
    }

    /// Writes `version` of record `id` (content `entry`, nil for a delete) where `previous` was.
    /// With `ifAbsent`, a live entry that already holds the ID is left alone and false returned.
    @discardableResult
    func store(id: String, entry: LogEntry?, stamp: VersionStamp, previous: StoredPlace?, ifAbsent: Bool = false) throws -> Bool {
        let now = self.now.iso8601
        let vv = stamp.vector.description
        if let entry {
            precondition(entry.id == id && !stamp.deleted)
            if previous == .tombstone { try database.run("DELETE FROM tombstones WHERE id = ?", [.text(id)]) }
            let statement = try database.prepare(ifAbsent ? """
                INSERT INTO entries(id, timestamp, recorded_at, source, device_id, category, data, created_at, hlc, origin, origin_seq, vv)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT(id) DO NOTHING
                """ : """
                INSERT INTO entries(id, timestamp, recorded_at, source, device_id, category, data, created_at, hlc, origin, origin_seq, vv)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                ON CONFLICT(id) DO UPDATE SET timestamp = ?2, recorded_at = ?3, source = ?4, device_id = ?5,
                    category = ?6, data = ?7, hlc = ?9, origin = ?10, origin_seq = ?11, vv = ?12
                """)
            statement.bind(id, at: 1)
            statement.bind(entry.timestamp.iso8601, at: 2)
            statement.bind(entry.recordedAt.iso8601, at: 3)
            statement.bind(entry.source, at: 4)
            statement.bind(entry.deviceId, at: 5)
            statement.bind(entry.category, at: 6)
            statement.bind(entry.data.canonicalJSON, at: 7)
            statement.bind(now, at: 8)
            statement.bind(stamp.hlc.rawValue, at: 9)
            statement.bind(stamp.origin, at: 10)
            statement.bind(Int64(stamp.sequence), at: 11)
            statement.bind(vv, at: 12)
            try statement.execute()
            return database.changes > 0
        } else {
            precondition(stamp.deleted)
            if previous == .live { try database.run("DELETE FROM entries WHERE id = ?", [.text(id)]) }
            try database.run("""
                INSERT INTO tombstones(id, deleted_at, hlc, origin, origin_seq, vv) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                ON CONFLICT(id) DO UPDATE SET hlc = ?3, origin = ?4, origin_seq = ?5, vv = ?6
                """, [.text(id), .text(now), .integer(stamp.hlc.rawValue), .text(stamp.origin),
                      .integer(Int64(stamp.sequence)), .text(vv)])
            return true
        }
    }
}
