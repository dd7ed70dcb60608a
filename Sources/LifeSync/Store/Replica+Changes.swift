extension Replica {
    /// One origin's entry log after a sequence, live rows, tombstones and kept writes
    /// (Replica+EntryWrites), ascending: columns `hlc, origin_no, origin_seq, vector, deleted, id,
    /// timestamp, recorded_at, source, device_id, category, data, fields, own`. `own`, when not
    /// NULL, is the write's own content as canonical JSON, which is what is sent (a live row's
    /// columns may hold fields of earlier writes too). `?1` is the origin's number
    /// (`Database.originParameter`).
    static let entryLogSQL = """
            SELECT hlc, origin_no, origin_seq, vector, 0, id, timestamp, recorded_at, source, device_id, category, data, fields, own
              FROM entries WHERE origin_no = ?1 AND origin_seq > ?2
            UNION ALL
            SELECT hlc, origin_no, origin_seq, vector, 1, id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
              FROM tombstones WHERE origin_no = ?1 AND origin_seq > ?2
            UNION ALL
            SELECT hlc, origin_no, origin_seq, vector, deleted, id, NULL, NULL, NULL, NULL, NULL, NULL, fields, content
              FROM kept_writes WHERE origin_no = ?1 AND origin_seq > ?2
            ORDER BY origin_seq LIMIT ?3
            """

    /// The changes of `origin` after `sequence`, in ascending sequence, at most `limit`:
    /// the rows (live and deleted) whose latest write came from that origin. Writes that were
    /// superseded since are not listed: their successors are listed under their own origin.
    package func changes(origin: String, after sequence: UInt64, limit: Int) throws -> [Change] {
        let entries = try database.rows(Replica.entryLogSQL, [try database.originParameter(origin), .counter(sequence), .integer(Int64(limit))]) { row in
            let deleted = row.int64(4) != 0
            let stamp = try self.stamp(from: row, deleted: deleted, origin: origin)
            let id = row.string(5)
            guard !deleted else { return Change(id: id, stamp: stamp, entry: nil) }
            let entry = try row.optionalString(13).map { try Replica.storedEntry($0, id: id) } ?? Replica.entry(from: row, offset: 5)
            return Change(id: id, stamp: stamp, entry: entry, fields: try Replica.fieldMask(row, 12))
        }
        let recordings = try recordingRows(origin: origin, after: sequence, limit: limit).map { row in
            Change(id: row.id, stamp: row.stamp, recording: row.stamp.deleted ? nil : row.recording)
        }
        return Replica.mergeBySequence(entries, recordings, limit: limit)
    }

    /// Two logs of one origin, each ascending, merged and cut to `limit`.
    static func mergeBySequence<T>(_ a: [T], _ b: [T], limit: Int, sequence: (T) -> UInt64) -> [T] {
        guard !b.isEmpty else { return a }
        guard !a.isEmpty else { return b }
        var result: [T] = []
        result.reserveCapacity(min(limit, a.count + b.count))
        var i = 0, j = 0
        while result.count < limit && (i < a.count || j < b.count) {
            if j == b.count || (i < a.count && sequence(a[i]) < sequence(b[j])) { result.append(a[i]); i += 1 } else { result.append(b[j]); j += 1 }
        }
        return result
    }

    static func mergeBySequence(_ a: [Change], _ b: [Change], limit: Int) -> [Change] {
        mergeBySequence(a, b, limit: limit) { $0.stamp.sequence }
    }

    /// The recording rows of one origin after `sequence`, ascending.
    func recordingRows(origin: String, after sequence: UInt64, limit: Int) throws -> [(id: String, stamp: VersionStamp, recording: Recording)] {
        try database.rows("""
            SELECT \(Replica.recordingColumns), deleted, hlc, origin_no, origin_seq, vector
            FROM recordings WHERE origin_no = ?1 AND origin_seq > ?2 ORDER BY origin_seq LIMIT ?3
            """, [try database.originParameter(origin), .counter(sequence), .integer(Int64(limit))]) { row in
            (row.string(0), try self.stamp(from: row, deleted: row.int64(10) != 0, offset: 11, origin: origin), try Replica.recording(from: row))
        }
    }

    /// The same changes as `changes(origin:after:limit:)`, with each entry as the canonical JSON a
    /// BATCH carries, assembled from the stored columns (which hold canonical forms already):
    /// the sender never re-encodes what it sends.
    ///
    /// A row that does not read back as a valid change (broken JSON in `data`, a counter out of
    /// range: a file damaged on disk or edited by hand) comes back marked `isDamaged`, in its
    /// place: the batch builder leaves it out and reports it, so the rest keeps flowing (every
    /// peer would refuse a batch that carried it).
    package func encodedChanges(origin: String, after sequence: UInt64, limit: Int) throws -> [EncodedChange] {
        let entries = try database.rows(Replica.entryLogSQL, [try database.originParameter(origin), .counter(sequence), .integer(Int64(limit))]) { row -> EncodedChange in
            // Every row is `origin`'s: sharing its string also lets the BATCH encoder compare
            // origins by identity.
            let deleted = row.int64(4) != 0
            func damaged() -> EncodedChange {
                .damaged(id: row.string(5), origin: origin, sequence: UInt64(clamping: max(row.int64(2), 1)))
            }
            guard let stamp = try? self.stamp(from: row, deleted: deleted, origin: origin) else { return damaged() }
            guard !deleted else { return EncodedChange(id: row.string(5), stamp: stamp, payload: []) }
            guard let fields = try? Replica.fieldMask(row, 12) else { return damaged() }
            if !row.isNull(13) {
                // A write's own content, kept whole as canonical JSON: checked as a peer will.
                let id = row.string(5)
                let own = row.withText(13) { Array($0) }
                guard (try? LogEntry.validatedComplete(from: JSONValue.parse(bytes: own)))?.id == id else { return damaged() }
                return EncodedChange(id: id, stamp: stamp, payload: own, fields: fields)
            }
            // Values straight from SQLite's buffers.
            var out: [UInt8] = []
            out.reserveCapacity(256)
            Replica.writeEntryPayload(hasCategory: !row.isNull(10), to: &out) { row.withText(Replica.entryLogColumn($0), $1) }
            let id = row.string(5)
            // What every peer's decoder will check: the scanner vouches for nearly every row at
            // a fraction of the cost of storing it; only what it cannot vouch for is parsed.
            let valid = out.withUnsafeBufferPointer { LogEntry.scanComplete($0, id: id) } != nil
                || (try? LogEntry.validatedComplete(from: JSONValue.parse(bytes: out)))?.id == id
            guard valid else { return damaged() }
            return EncodedChange(id: id, stamp: stamp, payload: out, fields: fields)
        }
        let recordings = try recordingRows(origin: origin, after: sequence, limit: limit).map { row in
            // Metadata stored before recordings were signed cannot be sent on: every peer of
            // version 2 would refuse it. Its own origin signs it when it next serves.
            guard row.stamp.deleted || row.recording.signature != nil else {
                return EncodedChange.damaged(id: row.id, origin: origin, sequence: row.stamp.sequence)
            }
            return EncodedChange(id: row.id, kind: .recording, stamp: row.stamp,
                                 payload: row.stamp.deleted ? [] : Array(row.recording.json.canonicalText.utf8))
        }
        return Replica.markingTwins(Replica.mergeBySequence(entries, recordings, limit: limit) { $0.stamp.sequence })
    }

    /// A log in which two rows share a sequence number (a forged write stored beside a
    /// tombstone or recording of the same (origin, seq): each table checks only its own rows)
    /// keeps the first and marks the rest damaged, so a batch never holds a sequence twice.
    static func markingTwins(_ log: [EncodedChange]) -> [EncodedChange] {
        var result = log
        var last: UInt64?
        for i in result.indices where !result[i].isDamaged {
            let sequence = result[i].stamp.sequence
            if sequence == last {
                result[i] = .damaged(id: result[i].id, origin: result[i].stamp.origin, sequence: sequence)
            } else {
                last = sequence
            }
        }
        return result
    }

    /// Every change the replica holds that `vector` lacks, origin by origin: for tests and the
    /// simulator's direct delivery. The sync session reads the same log in bounded batches.
    package func changes(after vector: VersionVector) throws -> [Change] {
        var result: [Change] = []
        for entry in try replicaVector().entries where entry.sequence > vector[entry.origin] {
            result += try changes(origin: entry.origin, after: vector[entry.origin], limit: Int.max)
        }
        return result
    }
}

extension Replica {
    /// `entryLogSQL`'s column of `writeEntryPayload`'s column `i`.
    static func entryLogColumn(_ i: Int) -> Int32 {
        switch i {
        case 0: 10
        case 1: 11
        case 2: 9
        case 3: 5
        case 4: 7
        case 5: 8
        default: 6
        }
    }

    /// The canonical JSON of an entry (keys in sorted order, as JSONValue.canonicalText writes
    /// them) from its stored columns, which hold canonical forms already: what a BATCH carries and
    /// its write digest covers. `text(i, body)` runs `body` over the text of column `i`: 0
    /// category (read only when `hasCategory`), 1 data (canonical JSON, copied as it is), 2
    /// device_id, 3 id, 4 recorded_at, 5 source, 6 timestamp.
    static func writeEntryPayload(hasCategory: Bool, to out: inout [UInt8],
                                  text: (Int, (UnsafeBufferPointer<UInt8>) -> Void) -> Void) {
        func member(_ key: StaticString, _ column: Int, first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            text(column) { JSONValue.writeString(utf8: $0, to: &out) }
        }
        out.append(UInt8(ascii: "{"))
        if hasCategory { member(#""category":"#, 0, first: true) }
        if hasCategory { out.append(UInt8(ascii: ",")) }
        let data: StaticString = #""data":"#
        out.append(contentsOf: UnsafeBufferPointer(start: data.utf8Start, count: data.utf8CodeUnitCount))
        text(1) { out.append(contentsOf: $0) }
        member(#""device_id":"#, 2)
        member(#""id":"#, 3)
        member(#""recorded_at":"#, 4)
        member(#""source":"#, 5)
        member(#""timestamp":"#, 6)
        out.append(UInt8(ascii: "}"))
    }
}
