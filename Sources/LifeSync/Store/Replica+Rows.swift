/// Where a record currently lives in the replica.
package enum StoredPlace {
    case live
    case tombstone
}

/// The current version of one record, as stored.
package struct StoredVersion {
    package var stamp: VersionStamp
    package var place: StoredPlace
}

extension Replica {
    static let entryColumns = "id, timestamp, recorded_at, source, device_id, category, data"

    /// The stored version of record `id`, live or deleted, or nil when the replica never saw it.
    package func storedVersion(id: String) throws -> StoredVersion? {
        try database.firstRow("""
            SELECT hlc, origin_no, origin_seq, vector, 0 FROM entries WHERE id = ?1
            UNION ALL SELECT hlc, origin_no, origin_seq, vector, 1 FROM tombstones WHERE id = ?1
            """, [.text(id)]) { row in
            let deleted = row.int64(4) != 0
            return StoredVersion(stamp: try self.stamp(from: row, deleted: deleted), place: deleted ? .tombstone : .live)
        }
    }

    /// Reads `hlc, origin_no, origin_seq, vector` from the first four columns (OriginNumbers.swift
    /// says how a row names origins). A caller whose query selected one origin passes it as
    /// `origin`. Every origin string comes from the connection's table of numbers, so rows and
    /// vectors share them rather than each making its own.
    func stamp(from row: Statement, deleted: Bool, offset: Int32 = 0, origin known: String? = nil) throws -> VersionStamp {
        let number = row.int64(offset + 1)
        guard let origin = try known ?? database.originName(number) else {
            throw ReplicaError.damaged("a row names origin number \(number), which the replica does not have")
        }
        assert(known == nil || (try? database.originName(number)) == known, "a row of another origin")
        let sequence = try row.counter(offset + 2, upTo: Message.Limits.maximumSequence, "origin_seq of \(origin)")
        guard sequence >= 1 else { throw ReplicaError.damaged("origin_seq 0 of \(origin)") }
        guard row.isBlob(offset + 3),
              let vector = try row.withBlob(offset + 3, { try StoredVector.read($0, own: (origin, sequence), name: database.originName) }) else {
            throw ReplicaError.damaged("the version vector of \(origin)#\(sequence) does not read back")
        }
        return VersionStamp(hlc: try row.hlc(offset, "hlc of \(origin)#\(sequence)"), origin: origin,
                            sequence: sequence, vector: vector, deleted: deleted)
    }

    /// Reads an entry from `id, timestamp, recorded_at, source, device_id, category, data` at `offset`.
    static func entry(from row: Statement, offset: Int32 = 0) throws -> LogEntry {
        let id = row.string(offset)
        do {
            // Read in place by the scanner; the reference path only for what it cannot vouch for.
            let data = try row.withText(offset + 6, LogData.scanned)
                ?? LogData.validated(from: try JSONValue.parse(row.string(offset + 6)), path: "data")
            return LogEntry(id: id, timestamp: try row.withText(offset + 1) { try Timestamp(iso8601: $0) },
                            recordedAt: try row.withText(offset + 2) { try Timestamp(iso8601: $0) }, source: row.string(offset + 3),
                            deviceId: row.string(offset + 4), category: row.optionalString(offset + 5), data: data)
        } catch {
            throw ReplicaError.damaged("entry \(id): \(error)")
        }
    }
}
