import Glibc
import CSQLite

/// One stored entry as the bytes of its row, for an export that writes them out again: no
/// strings, arrays or entry are made. Every buffer points into SQLite's row and is valid only
/// inside the call that hands it over.
///
/// Cells are only a fast way to say what `Replica.entry(from:)` would read: a row is given as
/// cells only when its bytes are in the form this replica stores (UTC times of 24 characters,
/// canonical `data` without extra members, strings without escapes), and each value then
/// equals the entry's: every string is valid UTF-8 and taken as is, every number is parsed by
/// the same parser. Anything else goes the reference way, as a `LogEntry`.
package struct EntryCells {
    package var id, timestamp, recordedAt, source, deviceId: UnsafeBufferPointer<UInt8>
    package var category: UnsafeBufferPointer<UInt8>?
    package var text: UnsafeBufferPointer<UInt8>?
    package var metric: (name: UnsafeBufferPointer<UInt8>, value: Double, unit: UnsafeBufferPointer<UInt8>?, scaleMin: Double?, scaleMax: Double?)?
    package var location: (latitude: Double, longitude: Double, accuracy: Double?, altitude: Double?, placeName: UnsafeBufferPointer<UInt8>?)?
    /// The tags as their canonical JSON array (`["a","b"]`), byte for byte what
    /// `JSONValue.array(tags.map(JSONValue.string)).canonicalText` writes for them.
    package var tags: UnsafeBufferPointer<UInt8>?
}

/// A stored row, read as cells when it can be vouched for, else as an entry.
package enum StoredEntry {
    case cells(EntryCells)
    case entry(LogEntry)
}

extension EntryCells {
    /// The cells of `id, timestamp, recorded_at, source, device_id, category, data` at columns
    /// 0-6, or nil when the row is not in the stored form (the caller reads it as an entry).
    static func read(_ row: Statement) -> EntryCells? {
        let handle = row.handle
        func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
            guard let pointer = sqlite3_column_text(handle, column) else { return nil }
            return UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column)))
        }
        // `Statement.string` repairs what is not UTF-8; such a row goes the reference way.
        func text(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
            guard let text = bytes(column), isValidUTF8(text) else { return nil }
            return text
        }
        // `data`'s strings are checked one by one; the rest of JSON is ASCII by its grammar.
        guard let id = text(0), let timestamp = time(bytes(1)), let recordedAt = time(bytes(2)),
              let source = text(3), let deviceId = text(4), let data = bytes(6) else { return nil }
        var category: UnsafeBufferPointer<UInt8>?
        if sqlite3_column_type(handle, 5) != SQLITE_NULL {
            guard let value = text(5) else { return nil }
            category = value
        }
        var cells = EntryCells(id: id, timestamp: timestamp, recordedAt: recordedAt, source: source, deviceId: deviceId, category: category)
        guard data.count <= EntryLimits.encodedBytes - 256 else { return nil }
        var scanner = CellScanner(parser: JSONParser(bytes: data))
        guard (try? scanner.data(into: &cells)) != nil, scanner.parser.index == data.count else { return nil }
        return cells
    }

    /// `bytes` when they are a time as this replica writes it, `YYYY-MM-DDTHH:MM:SS.mmmZ` with
    /// every field in range: then `Timestamp(iso8601:)` reads it and `writeISO8601` writes the
    /// same 24 bytes back.
    private static func time(_ bytes: UnsafeBufferPointer<UInt8>?) -> UnsafeBufferPointer<UInt8>? {
        guard let bytes, bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A,
              bytes[16] == 0x3A, bytes[19] == 0x2E, bytes[23] == 0x5A else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for i in start..<(start + count) {
                let digit = bytes[i] &- 0x30
                guard digit <= 9 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2), number(20, 3) != nil,
              (1...12).contains(month), day >= 1, day <= Timestamp.daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 59 else { return nil }
        return bytes
    }

    /// Whether `bytes` are valid UTF-8, as `String(validating:)` judges (ASCII checked first).
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if !bytes.contains(where: { $0 >= 0x80 }) { return true }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

/// Why the cell scanner gave up; the row is then read the reference way.
private struct NotStoredForm: Error {}

/// Reads a stored `data` object into cells, with `EntryScanner`'s rules or stricter ones: no
/// space between tokens, no escapes or control characters in a string, no extra members.
private struct CellScanner {
    var parser: JSONParser

    private var next: UInt8 { parser.index < parser.bytes.count ? parser.bytes[parser.index] : 0 }

    private mutating func take(_ byte: UInt8) throws(NotStoredForm) {
        guard next == byte else { throw NotStoredForm() }
        parser.index += 1
    }

    /// Calls `member` with each member name of the object at the read position, then reads its
    /// closing brace; a name met twice is refused.
    private mutating func object(_ member: (inout CellScanner, UnsafeBufferPointer<UInt8>) throws(NotStoredForm) -> Void) throws(NotStoredForm) {
        try take(UInt8(ascii: "{"))
        if next == UInt8(ascii: "}") { parser.index += 1; return }
        while true {
            let name = try string()
            try take(UInt8(ascii: ":"))
            try member(&self, name)
            switch next {
            case UInt8(ascii: ","): parser.index += 1
            case UInt8(ascii: "}"): parser.index += 1; return
            default: throw NotStoredForm()
            }
        }
    }

    mutating func data(into cells: inout EntryCells) throws(NotStoredForm) {
        var seen: UInt8 = 0
        try object { (scanner, name) throws(NotStoredForm) in
            switch try Self.mark(Self.place(of: name, "text", "metric", "location", "tags"), &seen) {
            case 0:
                let text = try scanner.string()
                guard text.count <= EntryLimits.textBytes else { throw NotStoredForm() }
                cells.text = text
            case 1: cells.metric = try scanner.metric()
            case 2: cells.location = try scanner.location()
            default: cells.tags = try scanner.tags()
            }
        }
    }

    private mutating func metric() throws(NotStoredForm) -> (UnsafeBufferPointer<UInt8>, Double, UnsafeBufferPointer<UInt8>?, Double?, Double?) {
        var name: UnsafeBufferPointer<UInt8>?, value: Double?, unit: UnsafeBufferPointer<UInt8>?, scaleMin: Double?, scaleMax: Double?
        var seen: UInt8 = 0
        try object { (scanner, member) throws(NotStoredForm) in
            switch try Self.mark(Self.place(of: member, "name", "value", "unit", "scale_min", "scale_max"), &seen) {
            case 0: name = try scanner.trimmedShort()
            case 1: value = try scanner.number()
            case 2: unit = try scanner.short()
            case 3: scaleMin = try scanner.number()
            default: scaleMax = try scanner.number()
            }
        }
        guard let name, let value else { throw NotStoredForm() }
        if let scaleMin, let scaleMax, scaleMin > scaleMax { throw NotStoredForm() }
        if let scaleMin, value < scaleMin { throw NotStoredForm() }
        if let scaleMax, value > scaleMax { throw NotStoredForm() }
        return (name, value, unit, scaleMin, scaleMax)
    }

    private mutating func location() throws(NotStoredForm) -> (Double, Double, Double?, Double?, UnsafeBufferPointer<UInt8>?) {
        var latitude: Double?, longitude: Double?, accuracy: Double?, altitude: Double?, placeName: UnsafeBufferPointer<UInt8>?
        var seen: UInt8 = 0
        try object { (scanner, member) throws(NotStoredForm) in
            switch try Self.mark(Self.place(of: member, "latitude", "longitude", "accuracy", "altitude", "place_name"), &seen) {
            case 0: latitude = try scanner.number()
            case 1: longitude = try scanner.number()
            case 2: accuracy = try scanner.number()
            case 3: altitude = try scanner.number()
            default: placeName = try scanner.short()
            }
        }
        guard let latitude, (-90...90).contains(latitude), let longitude, (-180...180).contains(longitude) else { throw NotStoredForm() }
        if let accuracy, accuracy < 0 { throw NotStoredForm() }
        return (latitude, longitude, accuracy, altitude, placeName)
    }

    /// The array's own bytes: with no space and no escapes they are its canonical text.
    private mutating func tags() throws(NotStoredForm) -> UnsafeBufferPointer<UInt8> {
        let start = parser.index
        try take(UInt8(ascii: "["))
        if next == UInt8(ascii: "]") {
            parser.index += 1
        } else {
            var count = 0
            while true {
                count += 1
                guard count <= EntryLimits.tagCount else { throw NotStoredForm() }
                _ = try trimmedShort()
                if next == UInt8(ascii: "]") { parser.index += 1; break }
                try take(UInt8(ascii: ","))
            }
        }
        return UnsafeBufferPointer(rebasing: parser.bytes[start..<parser.index])
    }

    /// Sets bit `place` of `seen` and returns it; an unknown name (nil) or one met twice is refused.
    private static func mark(_ place: Int?, _ seen: inout UInt8) throws(NotStoredForm) -> Int {
        guard let place, seen & (1 << place) == 0 else { throw NotStoredForm() }
        seen |= 1 << place
        return place
    }

    /// Where `name` is among the names given (no array is made for them), or nil.
    private static func place(of name: UnsafeBufferPointer<UInt8>, _ a: StaticString, _ b: StaticString, _ c: StaticString,
                       _ d: StaticString, _ e: StaticString = "") -> Int? {
        func equal(_ known: StaticString) -> Bool {
            known.utf8CodeUnitCount == name.count && memcmp(known.utf8Start, name.baseAddress!, name.count) == 0
        }
        if equal(a) { return 0 }
        if equal(b) { return 1 }
        if equal(c) { return 2 }
        if equal(d) { return 3 }
        if e.utf8CodeUnitCount > 0, equal(e) { return 4 }
        return nil
    }

    // MARK: - Values

    /// A string's bytes, which are its value: no escapes, no control characters, valid UTF-8.
    private mutating func string() throws(NotStoredForm) -> UnsafeBufferPointer<UInt8> {
        try take(UInt8(ascii: "\""))
        let start = parser.index
        var ascii = true
        while true {
            let byte = next
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20, byte != UInt8(ascii: "\\") else { throw NotStoredForm() }  // 0 also at the end
            if byte >= 0x80 { ascii = false }
            parser.index += 1
        }
        let bytes = UnsafeBufferPointer(rebasing: parser.bytes[start..<parser.index])
        parser.index += 1
        guard ascii || EntryCells.isValidUTF8(bytes) else { throw NotStoredForm() }
        return bytes
    }

    private mutating func number() throws(NotStoredForm) -> Double {
        guard next == UInt8(ascii: "-") || (next >= 0x30 && next <= 0x39) else { throw NotStoredForm() }
        do { return try parser.parseNumber() } catch { throw NotStoredForm() }
    }

    /// `EntryScanner.short`: a string of 1 to 256 bytes (longer ones are left to the reference).
    private mutating func short() throws(NotStoredForm) -> UnsafeBufferPointer<UInt8> {
        let value = try string()
        guard value.count > 0, value.count <= EntryLimits.shortStringCharacters else { throw NotStoredForm() }
        return value
    }

    /// `EntryScanner.trimmedShort`: a first byte that is visible ASCII, and at most 256 bytes.
    private mutating func trimmedShort() throws(NotStoredForm) -> UnsafeBufferPointer<UInt8> {
        let value = try string()
        guard let first = value.first, first > 0x20, first < 0x7F, value.count <= EntryLimits.shortStringCharacters else {
            throw NotStoredForm()
        }
        return value
    }
}
