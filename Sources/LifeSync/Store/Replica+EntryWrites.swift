/// The writes an entry's state is made of (the per-field merge, `FieldMerge`), as stored: the
/// entry's row carries its latest write, and `kept_writes` the earlier ones that still decide a
/// field, with the greatest delete the entry outlived. Every one of them is part of its origin's
/// log, so a peer that lacks one receives it whatever else it holds.
struct StoredWrites {
    var place: StoredPlace
    /// The write the row carries.
    var latest: EntryWrite
    /// What the entry reads as (nil: deleted).
    var content: LogEntry?
    var kept: [EntryWrite]

    var all: [EntryWrite] { kept + [latest] }
}

extension Replica {
    /// The stored writes of entry `id`, or nil when the replica never saw it.
    func storedWrites(id: String) throws -> StoredWrites? {
        let live = try database.firstRow("""
            SELECT hlc, origin_no, origin_seq, vector, id, timestamp, recorded_at, source, device_id, category, data, fields, own
            FROM entries WHERE id = ?
            """, [.text(id)]) { row -> StoredWrites in
            let stamp = try self.stamp(from: row, deleted: false)
            let content = try Replica.entry(from: row, offset: 4)
            let own = try row.optionalString(12).map { try Replica.storedEntry($0, id: id) } ?? content
            return StoredWrites(place: .live, latest: EntryWrite(stamp: stamp, fields: try Replica.fieldMask(row, 11), entry: own),
                                content: content, kept: [])
        }
        let stored = try live ?? database.firstRow("SELECT hlc, origin_no, origin_seq, vector FROM tombstones WHERE id = ?", [.text(id)]) { row in
            StoredWrites(place: .tombstone, latest: EntryWrite(stamp: try self.stamp(from: row, deleted: true), entry: nil), content: nil, kept: [])
        }
        guard var stored else { return nil }
        stored.kept = try keptWrites(id: id)
        return stored
    }

    /// The kept writes of entry `id`, ascending.
    func keptWrites(id: String) throws -> [EntryWrite] {
        let kept = try database.rows("SELECT hlc, origin_no, origin_seq, vector, deleted, fields, content FROM kept_writes WHERE id = ?", [.text(id)]) { row in
            let deleted = row.int64(4) != 0
            let entry = deleted ? nil : try Replica.storedEntry(row.optionalString(6) ?? "", id: id)
            return EntryWrite(stamp: try self.stamp(from: row, deleted: deleted), fields: try Replica.fieldMask(row, 5), entry: entry)
        }
        return kept.sorted { $0.stamp.precedes($1.stamp) }
    }

    /// Writes what a merge made of entry `id` over what was stored: the row when its write or
    /// content changed, and the kept writes when they did.
    func storeMerged(id: String, _ result: FieldMergeResult, over stored: StoredWrites?, writer: inout RecordWriter) throws {
        let rowUnchanged = stored.map {
            $0.latest.stamp.isSameWrite(as: result.latest.stamp) && $0.content == result.content && $0.latest.fields == result.latest.fields
        } ?? false
        if !rowUnchanged {
            try writer.store(id: id, entry: result.content, stamp: result.latest.stamp, previous: stored?.place,
                             fields: result.latest.fields, own: result.latest.entry)
        }
        func names(_ writes: [EntryWrite]) -> [String] { writes.map { "\($0.stamp.origin)#\($0.stamp.sequence)" } }
        guard names(stored?.kept ?? []) != names(result.kept) else { return }
        try database.run("DELETE FROM kept_writes WHERE id = ?", [.text(id)])
        for write in result.kept {
            try database.run("""
                INSERT INTO kept_writes(id, hlc, origin_no, origin_seq, vector, deleted, fields, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(id), .integer(write.stamp.hlc.rawValue), .integer(try database.originNumber(write.stamp.origin)),
                      .counter(write.stamp.sequence), .blob(try StoredVector.bytes(write.stamp.vector, own: write.stamp.own, in: database)),
                      .integer(write.entry == nil ? 1 : 0),
                      write.fields.stored,
                      write.entry.map { .text($0.json.canonicalText) } ?? .null])
        }
    }

    /// An entry stored as canonical JSON (a write's own content), validated as a peer's would be.
    static func storedEntry(_ text: String, id: String) throws -> LogEntry {
        do {
            let entry = try LogEntry.validatedComplete(from: try JSONValue.parse(text))
            guard entry.id == id else { throw ReplicaError.damaged("a kept write of \(id) holds entry \(entry.id)") }
            return entry
        } catch let error as ReplicaError {
            throw error
        } catch {
            throw ReplicaError.damaged("a kept write of \(id): \(error)")
        }
    }

    /// A `fields` column (`FieldMask.storedText`): NULL is every field.
    static func fieldMask(_ row: Statement, _ column: Int32) throws -> FieldMask {
        guard !row.isNull(column) else { return .all }
        guard row.isText(column) else {
            let raw = row.int64(column)
            guard raw >= 0 && raw <= 0xFF else { throw ReplicaError.damaged("a field mask reads \(raw)") }
            return FieldMask(bits: UInt8(raw))
        }
        let text = row.string(column)
        let parts = text.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let bits = UInt8(parts[0]) else { throw ReplicaError.damaged("a field mask reads \"\(text.prefix(80))\"") }
        if parts[1] == "*" { return FieldMask.everyExtraMember(bits: bits) }
        let names = parts[1].split(separator: ",").map(String.init)
        guard names.allSatisfy(LogData.isExtraName) else { throw ReplicaError.damaged("a field mask reads \"\(text.prefix(80))\"") }
        return FieldMask(bits: bits, extra: names)
    }
}

extension Replica {
    /// The writes entry `id` is made of here, ascending (the kept ones, then the latest); empty
    /// when the replica never saw it. `FieldMerge.merge` of them is what the entry reads as.
    ///
    ///     let result = FieldMerge.merge(try replica.entryWrites(id: id))
    ///     result.winner(of: .tags)   // the write whose tags stand
    package func entryWrites(id: String) throws -> [EntryWrite] {
        try storedWrites(id: id)?.all ?? []
    }
}

extension FieldMask {
    /// How a `fields` column holds it (read by `Replica.fieldMask`): nil (NULL) for `all`; the
    /// byte in decimal when it names no extra member, which the column's integer affinity
    /// stores as the integer every mask was before extra members; else `bits|name,name`, or
    /// `bits|*` for every extra member.
    var storedText: String? {
        guard let extra else { return bits == 0xFF ? nil : "\(bits)|*" }
        return extra.isEmpty ? String(bits) : "\(bits)|" + extra.joined(separator: ",")
    }

    var stored: SQLValue {
        guard let text = storedText else { return .null }
        return extra?.isEmpty == true ? .integer(Int64(bits)) : .text(text)
    }
}
