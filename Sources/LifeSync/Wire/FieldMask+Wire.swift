/// A change record's `flags`, `fields` and extra member names (PROTOCOL.md §5.2.1), as a BATCH
/// carries them and a write digest hashes them (§5.2.5): one home for both.
///
///     flags   u8     bit 0 deleted; bit 1 partial (`fields` follows); bit 2 extra (the names follow)
///     fields  u8     with bit 1: the document's eight fields, one bit each
///     count   u8     with bit 2: 0 … 128 names, then each as str16 (`LogData.isExtraName`),
///                    strictly ascending by bytes
///
/// Without bit 1 a write changed every field, extra members included. With bit 1 and no bit 2
/// it changed no extra member, except that `fields` 0xFF without bit 2 still means every field
/// (as earlier revisions wrote it): a write of the eight and no extra member sets bit 2 with no
/// names.
extension FieldMask {
    /// At most this many extra members are named: an edit may remove every member `data` held
    /// and set as many others (an object has at most 64 members).
    package static let maximumExtraNames = 128

    /// Writes `flags` and what follows it.
    func writeFlags(deleted: Bool, to writer: inout ByteWriter) {
        let partial = self != .all && !deleted
        let names = partial ? extra ?? [] : []
        assert(!partial || extra != nil, "a write's mask names its extra members or covers every one with every field")
        let named = partial && (!names.isEmpty || bits == 0xFF)
        writer.u8((deleted ? 1 : 0) | (partial ? 2 : 0) | (named ? 4 : 0))
        guard partial else { return }
        writer.u8(bits)
        guard named else { return }
        // Our own mask: a local write names at most this many (Replica.writeLocal).
        precondition(names.count <= FieldMask.maximumExtraNames, "a write names at most \(FieldMask.maximumExtraNames) extra members")
        writer.u8(UInt8(names.count))
        for name in names { writer.string(name) }
    }

    /// Reads `flags` and what follows it. `isEntry` is false for a recording's change, which
    /// always changes everything.
    ///
    /// - Throws: `malformed` for unknown bits, bit 1 on a delete or a recording, bit 2 without
    ///   bit 1, more than 128 names, a name of the wrong form, or names out of order or repeated.
    static func readFlags(from reader: inout ByteReader, isEntry: Bool, change n: Int) throws(WireError) -> (deleted: Bool, fields: FieldMask) {
        let flags = try reader.u8("change flags")
        guard flags & ~7 == 0 else { throw WireError(.malformed, "change \(n): unknown flag bits \(flags)") }
        let deleted = flags & 1 == 1
        guard flags & 2 != 0 else {
            guard flags & 4 == 0 else { throw WireError(.malformed, "change \(n): extra members named without the fields (flags \(flags))") }
            return (deleted, .all)
        }
        guard isEntry && !deleted else {
            throw WireError(.malformed, "change \(n): only an entry edit names the fields it changed (flags \(flags))")
        }
        let bits = try reader.u8("change fields")
        guard flags & 4 != 0 else { return (false, bits == 0xFF ? .all : FieldMask(bits: bits)) }
        let count = Int(try reader.u8("change extra count"))
        guard count <= maximumExtraNames, count * 3 <= reader.remaining else {
            throw WireError(.malformed, "change \(n): \(count) extra members named (at most \(maximumExtraNames), each at least 3 bytes)")
        }
        var names: [String] = []
        for _ in 0..<count {
            let length = Int(try reader.u16("change extra name length"))
            guard length <= 64 else { throw WireError(.malformed, "change \(n): an extra member's name of \(length) bytes (at most 64)") }
            let name = String(decoding: try reader.raw(length, "change extra name"), as: UTF8.self)
            guard LogData.isExtraName(name) else { throw WireError(.malformed, "change \(n): \"\(name)\" cannot name an extra member of data") }
            guard names.last.map({ Array($0.utf8).lexicographicallyPrecedes(Array(name.utf8)) }) ?? true else {
                throw WireError(.malformed, "change \(n): extra member names out of order or repeated (\"\(name)\")")
            }
            names.append(name)
        }
        return (false, FieldMask(bits: bits, extra: names))
    }
}
