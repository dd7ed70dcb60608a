import Glibc

extension LogEntry {
    /// A peer's complete entry read straight from its JSON bytes, with no JSON tree in between:
    /// the receiving side of a sync runs this for every entry, and building the tree and then
    /// walking it cost as much as storing the row.
    ///
    /// This is only a fast way to say yes. It returns nil whenever it cannot vouch for the input:
    /// anything malformed or refused, and also anything merely unusual (a `null` member, an
    /// escaped member name). The caller then runs the reference path,
    /// `validatedComplete(from: JSONValue.parse(bytes:))`, which accepts or refuses with its own
    /// exact error; so every error a peer sees is the reference's, and a differential test holds
    /// the two paths to the same answers.
    ///
    /// `id` must already be a valid entry ID (the change's, checked once): when the payload's
    /// `id` has the same bytes it is taken as is, and otherwise the reference path decides.
    static func scanComplete(_ bytes: UnsafeBufferPointer<UInt8>, id: String) -> LogEntry? {
        // Canonical text is never more than ~100 bytes longer than any valid spelling of the same
        // entry (only numbers can grow, e.g. `9e15`); near the bound the reference path counts.
        guard bytes.count <= EntryLimits.encodedBytes - 256 else { return nil }
        var scanner = EntryScanner(bytes)
        return try? scanner.entry(id: id)
    }
}

extension LogEntry {
    /// A record `lifesync import` reads, straight from its JSON bytes, when it is a complete
    /// entry in the canonical spelling (what an export writes): every field given under its
    /// own name and an ID already in our form, lowercase. For such a record the reference path
    /// of an import, `validated(from: JSONValue.parse(bytes:), defaults: importDefaults)`, takes
    /// nothing from its defaults and renames nothing, so it gives the same entry; nil whenever
    /// the scanner cannot vouch, and the caller runs that path for its answer and exact error.
    package static func scanImported(_ bytes: UnsafeBufferPointer<UInt8>) -> LogEntry? {
        guard bytes.count <= EntryLimits.encodedBytes - 256 else { return nil }
        var scanner = EntryScanner(bytes)
        return try? scanner.entry(id: nil)
    }
}

extension LogData {
    /// An entry's `data` object read straight from its JSON bytes, as `scanComplete` reads it
    /// inside an entry: what a replica reads back from its rows (every list, page and export).
    /// Nil whenever it cannot vouch for the bytes; the caller then runs the reference path,
    /// `validated(from: JSONValue.parse(…), path:)`, for its answer and its exact error.
    static func scanned(_ bytes: UnsafeBufferPointer<UInt8>) -> LogData? {
        guard bytes.count <= EntryLimits.encodedBytes - 256 else { return nil }
        var scanner = EntryScanner(bytes)
        return try? scanner.wholeData()
    }
}

/// Why the scanner gave up; the reference path says what is wrong, if anything.
private struct NotVouched: Error {}

/// Reads one entry object member by member, checking each against the same rules as
/// ``LogEntry/validated(from:defaults:)``. Strings and numbers go through ``JSONParser`` itself,
/// so their syntax, escapes and UTF-8 checks are the reference's by construction.
private struct EntryScanner {
    var parser: JSONParser
    /// Whether the object just opened has not yet had a member read.
    private var opened = false

    init(_ bytes: UnsafeBufferPointer<UInt8>) { parser = JSONParser(bytes: bytes) }

    /// `expectedID` nil: any ID in our form, lowercase, is taken.
    mutating func entry(id expectedID: String?) throws(NotVouched) -> LogEntry {
        var id: String?, timestamp: Timestamp?, recordedAt: Timestamp?, source: String?, deviceId: String?
        var category: String?, data: LogData?
        var seen: UInt8 = 0
        parser.skipSpace()
        try open()
        while let key = try nextMember() {
            switch key {
            case "id":
                try mark(0, &seen)
                if let expectedID { id = try sameString(as: expectedID) } else { id = try entryID() }
            case "timestamp": try mark(1, &seen); timestamp = try self.timestamp()
            case "recorded_at": try mark(2, &seen); recordedAt = try self.timestamp()
            case "source": try mark(3, &seen); source = try short(string())
            case "device_id": try mark(4, &seen); deviceId = try short(string())
            case "category": try mark(5, &seen); category = try self.category(string())
            case "data": try mark(6, &seen); data = try self.data()
            default: throw NotVouched()
            }
        }
        parser.skipSpace()
        guard parser.index == parser.bytes.count, let id, let timestamp, let recordedAt, let source, let deviceId, let data else {
            throw NotVouched()
        }
        return LogEntry(id: id, timestamp: timestamp, recordedAt: recordedAt, source: source, deviceId: deviceId,
                        category: category, data: data)
    }

    /// The input is one `data` object and nothing more (space aside).
    mutating func wholeData() throws(NotVouched) -> LogData {
        parser.skipSpace()
        let data = try data()
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw NotVouched() }
        return data
    }

    private mutating func data() throws(NotVouched) -> LogData {
        var data = LogData()
        var seen: UInt8 = 0
        try open()
        while let key = try nextMember() {
            switch key {
            case "text":
                try mark(0, &seen)
                let text = try string()
                guard text.utf8.count <= EntryLimits.textBytes else { throw NotVouched() }
                data.text = text
            case "metric": try mark(1, &seen); data.metric = try metric()
            case "location": try mark(2, &seen); data.location = try location()
            case "tags": try mark(3, &seen); data.tags = try tags()
            default: throw NotVouched()
            }
        }
        return data
    }

    private mutating func metric() throws(NotVouched) -> Metric {
        var name: String?, value: Double?, unit: String?, scaleMin: Double?, scaleMax: Double?
        var seen: UInt8 = 0
        try open()
        while let key = try nextMember() {
            switch key {
            case "name": try mark(0, &seen); name = try trimmedShort(string())
            case "value": try mark(1, &seen); value = try number()
            case "unit": try mark(2, &seen); unit = try short(string())
            case "scale_min": try mark(3, &seen); scaleMin = try number()
            case "scale_max": try mark(4, &seen); scaleMax = try number()
            default: throw NotVouched()
            }
        }
        guard let name, let value else { throw NotVouched() }
        if let scaleMin, let scaleMax, scaleMin > scaleMax { throw NotVouched() }
        if let scaleMin, value < scaleMin { throw NotVouched() }
        if let scaleMax, value > scaleMax { throw NotVouched() }
        return Metric(name: name, value: value, unit: unit, scaleMin: scaleMin, scaleMax: scaleMax)
    }

    private mutating func location() throws(NotVouched) -> Location {
        var latitude: Double?, longitude: Double?, accuracy: Double?, altitude: Double?, placeName: String?
        var seen: UInt8 = 0
        try open()
        while let key = try nextMember() {
            switch key {
            case "latitude": try mark(0, &seen); latitude = try number()
            case "longitude": try mark(1, &seen); longitude = try number()
            case "accuracy": try mark(2, &seen); accuracy = try number()
            case "altitude": try mark(3, &seen); altitude = try number()
            case "place_name": try mark(4, &seen); placeName = try short(string())
            default: throw NotVouched()
            }
        }
        guard let latitude, (-90...90).contains(latitude), let longitude, (-180...180).contains(longitude) else { throw NotVouched() }
        if let accuracy, accuracy < 0 { throw NotVouched() }
        return Location(latitude: latitude, longitude: longitude, accuracy: accuracy, altitude: altitude, placeName: placeName)
    }

    private mutating func tags() throws(NotVouched) -> [String] {
        guard next == UInt8(ascii: "[") else { throw NotVouched() }
        parser.index += 1
        var tags: [String] = []
        parser.skipSpace()
        if next == UInt8(ascii: "]") { parser.index += 1; return tags }
        while true {
            parser.skipSpace()
            guard tags.count < EntryLimits.tagCount else { throw NotVouched() }
            tags.append(try trimmedShort(string()))
            parser.skipSpace()
            switch next {
            case UInt8(ascii: ","): parser.index += 1
            case UInt8(ascii: "]"): parser.index += 1; return tags
            default: throw NotVouched()
            }
        }
    }

    // MARK: - Values

    /// The byte at the read position, or 0 at the end (never a valid start of anything).
    private var next: UInt8 { parser.index < parser.bytes.count ? parser.bytes[parser.index] : 0 }

    private mutating func string() throws(NotVouched) -> String {
        guard next == UInt8(ascii: "\"") else { throw NotVouched() }
        do { return try parser.parseString() } catch { throw NotVouched() }
    }

    private mutating func number() throws(NotVouched) -> Double {
        guard next == UInt8(ascii: "-") || (next >= 0x30 && next <= 0x39) else { throw NotVouched() }
        do { return try parser.parseNumber() } catch { throw NotVouched() }
    }

    /// A string whose raw bytes equal `expected`'s (no escapes can be involved, since a
    /// backslash is not among them): the already validated string itself, without a copy.
    private mutating func sameString(as expected: String) throws(NotVouched) -> String {
        guard next == UInt8(ascii: "\"") else { throw NotVouched() }
        var copy = expected
        let length = copy.utf8.count
        let start = parser.index + 1
        guard start + length < parser.bytes.count, parser.bytes[start + length] == UInt8(ascii: "\"") else { throw NotVouched() }
        let equal = copy.withUTF8 { utf8 in memcmp(utf8.baseAddress!, parser.bytes.baseAddress! + start, length) == 0 }
        guard equal else { throw NotVouched() }
        parser.index = start + length + 1
        return expected
    }

    /// An entry ID in our form, with no capital letter (which an import would lowercase).
    private mutating func entryID() throws(NotVouched) -> String {
        let id = try string()
        guard (try? LogEntry.validateEntryID(id, field: "id")) != nil, !id.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else {
            throw NotVouched()
        }
        return id
    }

    /// An ISO 8601 time, read in place when the string has no escapes.
    private mutating func timestamp() throws(NotVouched) -> Timestamp {
        guard next == UInt8(ascii: "\"") else { throw NotVouched() }
        let start = parser.index + 1
        var end = start
        while end < parser.bytes.count, parser.bytes[end] != UInt8(ascii: "\""), parser.bytes[end] != UInt8(ascii: "\\") { end += 1 }
        do {
            if end < parser.bytes.count, parser.bytes[end] == UInt8(ascii: "\"") {
                parser.index = end + 1
                return try Timestamp(iso8601: UnsafeBufferPointer(rebasing: parser.bytes[start..<end]))
            }
            return try Timestamp(iso8601: try string())
        } catch {
            throw NotVouched()
        }
    }

    /// `requireShort`: checked by byte count first (a character is at least one byte), by the
    /// reference rule itself only for long or empty strings.
    private func short(_ value: String) throws(NotVouched) -> String {
        let bytes = value.utf8.count
        if bytes > 0, bytes <= EntryLimits.shortStringCharacters { return value }
        do { try LogEntry.requireShort(value, field: "") } catch { throw NotVouched() }
        return value
    }

    /// `requireShort(value.trimmingSpaces)`: a first byte that is visible ASCII cannot be trimmed
    /// away, so only other strings pay for the trimming.
    private func trimmedShort(_ value: String) throws(NotVouched) -> String {
        let utf8 = value.utf8
        if let first = utf8.first, first > 0x20, first < 0x7F, utf8.count <= EntryLimits.shortStringCharacters { return value }
        do { try LogEntry.requireShort(value.trimmingSpaces, field: "") } catch { throw NotVouched() }
        return value
    }

    private func category(_ value: String) throws(NotVouched) -> String {
        let bytes = value.utf8.count
        guard bytes > 0, bytes <= EntryLimits.categoryCharacters
                || (bytes <= EntryLimits.shortStringBytes && value.count <= EntryLimits.categoryCharacters) else { throw NotVouched() }
        return value
    }

    // MARK: - Objects

    private mutating func open() throws(NotVouched) {
        guard next == UInt8(ascii: "{") else { throw NotVouched() }
        parser.index += 1
        opened = true
    }

    /// The next member name of the object being read (its value follows), or nil after its
    /// closing brace. Names with escapes are left to the reference path.
    private mutating func nextMember() throws(NotVouched) -> MemberName? {
        parser.skipSpace()
        if opened {
            opened = false
            if next == UInt8(ascii: "}") { parser.index += 1; return nil }
        } else {
            switch next {
            case UInt8(ascii: "}"): parser.index += 1; return nil
            case UInt8(ascii: ","): parser.index += 1; parser.skipSpace()
            default: throw NotVouched()
            }
        }
        guard next == UInt8(ascii: "\"") else { throw NotVouched() }
        let start = parser.index + 1
        var end = start
        while end < parser.bytes.count, parser.bytes[end] != UInt8(ascii: "\"") {
            guard parser.bytes[end] != UInt8(ascii: "\\") else { throw NotVouched() }
            end += 1
        }
        parser.index = end + 1
        parser.skipSpace()
        guard end < parser.bytes.count, next == UInt8(ascii: ":") else { throw NotVouched() }
        parser.index += 1
        parser.skipSpace()
        return MemberName(UnsafeBufferPointer(rebasing: parser.bytes[start..<end]))
    }

    /// Sets bit `bit` of `seen`; a member named twice is refused by the reference.
    private func mark(_ bit: UInt8, _ seen: inout UInt8) throws(NotVouched) {
        guard seen & (1 << bit) == 0 else { throw NotVouched() }
        seen |= 1 << bit
    }
}

/// A member name as raw bytes, matched against the literal names of the LifeLog schema.
private struct MemberName {
    let bytes: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    static func ~= (name: StaticString, member: MemberName) -> Bool {
        name.utf8CodeUnitCount == member.bytes.count
            && memcmp(name.utf8Start, member.bytes.baseAddress!, member.bytes.count) == 0
    }
}
