extension Replica {
    /// The replicated state as text, one line per record in id order: live entries with their
    /// content, their latest write's stamp, the fields it changed and its own content where that
    /// differs; the earlier writes each entry keeps (per-field merge), and tombstones with their
    /// stamps. Two full replicas have converged exactly when their dumps are equal: the kept
    /// writes decide what a later write merges into. Local bookkeeping (creation times, the
    /// conflicts table, version vectors that joined in writes a replica happened to see) is left out.
    public func canonicalDump() throws -> String {
        var lines: [String] = []
        try forEachCanonicalLine { lines.append($0) }
        return lines.joined(separator: "\n")
    }

    /// The dump's lines in order, one at a time, so hashing a journal of any size holds one line.
    func forEachCanonicalLine(_ body: (String) -> Void) throws {
        try database.forEachRow("""
            SELECT hlc, origin_no, origin_seq, vector, id, timestamp, recorded_at, source, device_id, category, data, fields, own
            FROM entries ORDER BY id
            """) { row in
            let fields = (4...12).map { row.optionalString(Int32($0)) ?? "" }
            body("E \(stampText(row)) " + fields.joined(separator: "\u{1F}"))
        }
        try database.forEachRow("""
            SELECT hlc, origin_no, origin_seq, vector, id, deleted, fields, content FROM kept_writes
            ORDER BY id, (SELECT incarnation FROM origins WHERE number = origin_no), origin_seq
            """) { row in
            let rest = (4...7).map { row.optionalString(Int32($0)) ?? "" }
            body("K \(stampText(row)) " + rest.joined(separator: "\u{1F}"))
        }
        try database.forEachRow("SELECT hlc, origin_no, origin_seq, vector, id FROM tombstones ORDER BY id") {
            body("T \(stampText($0)) \($0.string(4))")
        }
        // A deleted recording's metadata may be a placeholder (the delete can arrive first): only
        // its stamp is state.
        try database.forEachRow("""
            SELECT hlc, origin_no, origin_seq, vector, deleted, id, file_name, size, sha256, media_type, entry_id, origin_node, created_at
            FROM recordings ORDER BY id
            """) { row in
            let head = "R \(stampText(row)) \(row.string(5))"
            guard row.int64(4) == 0 else { return body(head + " deleted") }
            body(head + " " + (6...12).map { row.optionalString(Int32($0)) ?? "" }.joined(separator: "\u{1F}"))
        }
    }

    /// `hlc origin sequence vector` of the row's stamp at columns 0-3; a stamp that does not
    /// read back shows as damaged, with the row's numbers as stored.
    private func stampText(_ row: Statement) -> String {
        guard let stamp = try? stamp(from: row, deleted: false) else {
            return "\(row.int64(0)) damaged#\(row.int64(1)) \(row.int64(2)) damaged"
        }
        return "\(row.int64(0)) \(stamp.origin) \(row.int64(2)) \(stamp.vector.description)"
    }

    /// SHA-256 of ``canonicalDump()``, hex.
    public func canonicalHash() throws -> String {
        let hash = SHA256()
        var first = true
        try forEachCanonicalLine { line in
            if !first { hash.update([0x0A]) }
            first = false
            var line = line
            line.withUTF8 { hash.update(UnsafeRawBufferPointer($0)) }
        }
        return hash.finalize().hex
    }
}
