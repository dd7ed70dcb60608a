import CSQLite

/// The numbers a replica gives origins (table `origins`, schema step 27). The rows of the write
/// tables (entries, tombstones, kept writes, recordings) name their origin, and the origins of
/// their version vectors, by this small integer rather than by the 36-character incarnation:
/// two thirds of what replication metadata cost per entry. The numbers are the file's own:
/// never sent, never renumbered, never reused (an origin's row is never changed or deleted).
///
/// Each connection keeps the numbers it read or made. A transaction that rolls back takes back
/// the numbers made inside it, and another connection may then give them to other origins, so a
/// rollback empties the cache (SQLite's rollback hook, see `Database.init`); so does a copy of
/// another database into this one (`Database.copy(into:)`).
final class OriginNumbers {
    fileprivate var numbers: [String: Int64] = [:]
    fileprivate var names: [Int64: String] = [:]

    func forget() {
        numbers.removeAll()
        names.removeAll()
    }

    fileprivate func learn(_ origin: String, _ number: Int64) {
        numbers[origin] = number
        names[number] = origin
    }
}

extension Database {
    /// The number of `origin`, made when it has none yet (inside the caller's transaction).
    func originNumber(_ origin: String) throws -> Int64 {
        if let number = origins.numbers[origin] { return number }
        if let number = try knownOriginNumber(origin) { return number }
        try run("INSERT INTO origins(incarnation) VALUES (?)", [.text(origin)])
        let number = sqlite3_last_insert_rowid(handle)
        origins.learn(origin, number)
        return number
    }

    /// The number of `origin`, or nil when no row names it.
    func knownOriginNumber(_ origin: String) throws -> Int64? {
        if let number = origins.numbers[origin] { return number }
        guard let number = try firstRow("SELECT number FROM origins WHERE incarnation = ?", [.text(origin)], { $0.int64(0) }) else { return nil }
        origins.learn(origin, number)
        return number
    }

    /// `origin`'s number to bind where a query looks for its rows: NULL, which matches nothing,
    /// when no row names it.
    func originParameter(_ origin: String) throws -> SQLValue {
        try knownOriginNumber(origin).map { .integer($0) } ?? .null
    }

    /// The origin numbered `number`, or nil when there is none (a damaged row).
    func originName(_ number: Int64) throws -> String? {
        if let name = origins.names[number] { return name }
        guard let name = try firstRow("SELECT incarnation FROM origins WHERE number = ?", [.integer(number)], { $0.string(0) }) else { return nil }
        origins.learn(name, number)
        return name
    }
}

/// How a row stores its version vector (column `vector`, a blob): for each origin, in the
/// vector's order, the origin's number and its sequence, each a LEB128 varint; the sequence of
/// the row's own write (its origin and `origin_seq`, which nearly every vector holds) as 0,
/// which no sequence is. One origin's vector at sequence 300,000 takes 2 bytes instead of 43.
enum StoredVector {
    /// Appends `vector`'s stored form to `out`, numbering its origins with `number`.
    static func write(_ vector: VersionVector, own: (origin: String, sequence: UInt64), to out: inout [UInt8],
                      number: (String) throws -> Int64) rethrows {
        for entry in vector.entries {
            appendVarint(UInt64(try number(entry.origin)), to: &out)
            let isOwn = entry.sequence == own.sequence && entry.origin == own.origin
            appendVarint(isOwn ? 0 : entry.sequence, to: &out)
        }
    }

    /// The stored form as bytes, for a statement that binds values.
    static func bytes(_ vector: VersionVector, own: (origin: String, sequence: UInt64), in database: Database) throws -> [UInt8] {
        var out: [UInt8] = []
        try write(vector, own: own, to: &out, number: database.originNumber)
        return out
    }

    /// Reads the stored form, naming origins with `name`; nil when the bytes are not one (a
    /// varint cut short or too long, an unknown origin number, origins out of order, a 0 that
    /// is not the row's own write).
    static func read(_ bytes: UnsafeRawBufferPointer, own: (origin: String, sequence: UInt64),
                     name: (Int64) throws -> String?) rethrows -> VersionVector? {
        var pairs: [(origin: String, sequence: UInt64)] = []
        var at = 0
        while at < bytes.count {
            guard let number = readVarint(bytes, &at), number <= UInt64(Int64.max),
                  let stored = readVarint(bytes, &at),
                  let origin = try name(Int64(number)) else { return nil }
            if stored == 0 {
                // The origin's own string, shared with the stamp's rather than another copy.
                guard origin == own.origin, own.sequence > 0 else { return nil }
                pairs.append((own.origin, own.sequence))
                continue
            }
            pairs.append((origin, stored))
        }
        return VersionVector(ascending: pairs)
    }

    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    /// A varint at `at` (at most 10 bytes, no bits past 64), moving `at` past it.
    static func readVarint(_ bytes: UnsafeRawBufferPointer, _ at: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < bytes.count {
            let byte = bytes[at]
            at += 1
            guard shift < 64, shift < 63 || byte <= 1 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }
}

extension VersionStamp {
    /// The write this stamp names, which its stored vector writes as a 0 (`StoredVector`).
    var own: (origin: String, sequence: UInt64) { (origin, sequence) }
}
