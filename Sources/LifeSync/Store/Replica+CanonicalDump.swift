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
            SELECT hlc, origin, origin_seq, vv, id, timestamp, recorded_at, source, device_id, category, data, fields, own
            FROM entries ORDER BY id
            """) { row in
            let fields = (4...12).map { row.optionalString(Int32($0)) ?? "" }
            body("E \(row.int64(0)) \(row.string(1)) \(row.int64(2)) \(row.string(3)) " + fields.joined(separator: "\u{1F}"))
        }
        try database.forEachRow("""
            SELECT hlc, origin, origin_seq, vv, id, deleted, fields, content FROM kept_writes ORDER BY id, origin, origin_seq
            """) { row in
            let rest = (4...7).map { row.optionalString(Int32($0)) ?? "" }
            body("K \(row.int64(0)) \(row.string(1)) \(row.int64(2)) \(row.string(3)) " + rest.joined(separator: "\u{1F}"))
        }
        try database.forEachRow("SELECT hlc, origin, origin_seq, vv, id FROM tombstones ORDER BY id") {
            body("T \($0.int64(0)) \($0.string(1)) \($0.int64(2)) \($0.string(3)) \($0.string(4))")
        }
        // A deleted recording's metadata may be a placeholder (the delete can arrive first): only
        // its stamp is state.
        try database.forEachRow("""
            SELECT hlc, origin, origin_seq, vv, deleted, id, file_name, size, sha256, media_type, entry_id, origin_node, created_at
            FROM recordings ORDER BY id
            """) { row in
            let head = "R \(row.int64(0)) \(row.string(1)) \(row.int64(2)) \(row.string(3)) \(row.string(5))"
            guard row.int64(4) == 0 else { return body(head + " deleted") }
            body(head + " " + (6...12).map { row.optionalString(Int32($0)) ?? "" }.joined(separator: "\u{1F}"))
        }
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
