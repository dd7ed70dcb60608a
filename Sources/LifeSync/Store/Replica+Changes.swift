extension Replica {
    /// The changes of `origin` after `sequence`, in ascending sequence, at most `limit`:
    /// the rows (live and deleted) whose latest write came from that origin. Writes that were
    /// superseded since are not listed: their successors are listed under their own origin.
    public func changes(origin: String, after sequence: UInt64, limit: Int) throws -> [Change] {
        try database.rows("""
            SELECT hlc, origin, origin_seq, vv, 0, id, timestamp, recorded_at, source, device_id, category, data
              FROM entries WHERE origin = ?1 AND origin_seq > ?2
            UNION ALL
            SELECT hlc, origin, origin_seq, vv, 1, id, NULL, NULL, NULL, NULL, NULL, NULL
              FROM tombstones WHERE origin = ?1 AND origin_seq > ?2
            ORDER BY origin_seq LIMIT ?3
            """, [.text(origin), .integer(Int64(sequence)), .integer(Int64(limit))]) { row in
            let deleted = row.int64(4) != 0
            let stamp = try Replica.stamp(from: row, deleted: deleted)
            return Change(id: row.string(5), stamp: stamp, entry: deleted ? nil : try Replica.entry(from: row, offset: 5))
        }
    }

    /// The same changes as `changes(origin:after:limit:)`, with each entry as the canonical JSON a
    /// BATCH carries, assembled from the stored columns (which hold canonical forms already):
    /// the sender never parses what it sends.
    public func encodedChanges(origin: String, after sequence: UInt64, limit: Int) throws -> [EncodedChange] {
        try database.rows("""
            SELECT hlc, origin, origin_seq, vv, 0, id, timestamp, recorded_at, source, device_id, category, data
              FROM entries WHERE origin = ?1 AND origin_seq > ?2
            UNION ALL
            SELECT hlc, origin, origin_seq, vv, 1, id, NULL, NULL, NULL, NULL, NULL, NULL
              FROM tombstones WHERE origin = ?1 AND origin_seq > ?2
            ORDER BY origin_seq LIMIT ?3
            """, [.text(origin), .integer(Int64(sequence)), .integer(Int64(limit))]) { row in
            let deleted = row.int64(4) != 0
            let stamp = try Replica.stamp(from: row, deleted: deleted)
            guard !deleted else { return EncodedChange(id: row.string(5), stamp: stamp, entryJSON: []) }
            // Keys in sorted order, as JSONValue.canonicalText writes them.
            var out: [UInt8] = []
            out.reserveCapacity(256)
            func member(_ key: String, _ column: Int32, first: Bool = false) {
                if !first { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                JSONValue.writeString(row.string(column), to: &out)
            }
            out.append(UInt8(ascii: "{"))
            let hasCategory = !row.isNull(10)
            if hasCategory { member("category", 10, first: true) }
            if hasCategory { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: Array(#""data":"#.utf8))
            out.append(contentsOf: row.string(11).utf8)
            member("device_id", 9)
            member("id", 5)
            member("recorded_at", 7)
            member("source", 8)
            member("timestamp", 6)
            out.append(UInt8(ascii: "}"))
            return EncodedChange(id: row.string(5), stamp: stamp, entryJSON: out)
        }
    }

    /// Every change the replica holds that `vector` lacks, origin by origin: for tests and the
    /// simulator's direct delivery. The sync session reads the same log in bounded batches.
    public func changes(after vector: VersionVector) throws -> [Change] {
        var result: [Change] = []
        for entry in try replicaVector().entries where entry.sequence > vector[entry.origin] {
            result += try changes(origin: entry.origin, after: vector[entry.origin], limit: Int.max)
        }
        return result
    }
}
