/// An input that breaks a rule, naming the field (`data.metric.value`) and the rule.
public struct ValidationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { field.isEmpty ? reason : "\(field): \(reason)" }
}

/// What fills the fields an input may leave out.
package struct EntryDefaults {
    /// Creates the `id` when absent.
    package var makeID: () -> String
    /// `recorded_at` when absent (now).
    package var recordedAt: Timestamp
    /// `timestamp` when absent; nil makes `timestamp` required.
    package var timestamp: Timestamp?
    package var source: String
    package var deviceId: String
    /// A user's input as the LifeLog document writes it: a bare UUID `id`, `created_at`,
    /// `synced` and the app's camelCase field names are taken (LogEntry+LifeLogInput.swift).
    /// Never set for what a peer sends.
    package var acceptsLifeLogForm: Bool
    /// An absent `id` is derived from the entry's content instead of made by `makeID`, so an
    /// import recognises the entries it took before.
    package var derivesAbsentID: Bool

    package init(makeID: @escaping () -> String, recordedAt: Timestamp, timestamp: Timestamp?, source: String, deviceId: String,
                acceptsLifeLogForm: Bool = false, derivesAbsentID: Bool = false) {
        self.makeID = makeID
        self.recordedAt = recordedAt
        self.timestamp = timestamp
        self.source = source
        self.deviceId = deviceId
        self.acceptsLifeLogForm = acceptsLifeLogForm
        self.derivesAbsentID = derivesAbsentID
    }
}

/// The limits every way in enforces (CLI, library, network, and later HTTP): characters for
/// what a person reads, bytes for what a machine stores and sends. A character can be a base
/// letter with any number of combining marks, so a bound in characters alone bounds nothing.
package enum EntryLimits {
    package static let categoryCharacters = 64
    package static let textBytes = 64 * 1024
    package static let shortStringCharacters = 256
    /// Every short string (source, device, category, metric name and unit, place, each tag).
    package static let shortStringBytes = 1024
    package static let tagCount = 64
    /// The whole entry as canonical JSON (PROTOCOL.md §5.2.2), which is what peers receive:
    /// 64 KiB of text made of control characters escapes to 384 KiB, so the text rule alone
    /// does not keep an entry under the wire's bound. One number for validation and the wire.
    package static let encodedBytes = 256 * 1024
}

extension LogEntry {
    /// Builds an entry from untrusted JSON, filling absent fields from `defaults`. Unknown
    /// fields are refused, so a typo (`"catgory"`) is not silently dropped.
    package static func validated(from json: JSONValue, defaults: EntryDefaults) throws(ValidationError) -> LogEntry {
        var fields = try FieldReader(defaults.acceptsLifeLogForm ? lifeLogSpellingsNormalised(json) : json, path: "")
        let givenID = try fields.optionalString("id")
        if let givenID, !defaults.acceptsLifeLogForm { try validateEntryID(givenID, field: "id") }
        let normalisedID = try givenID.map { given throws(ValidationError) in
            guard defaults.acceptsLifeLogForm else { return given }
            guard let id = Identifier.normalisedEntryID(given) else {
                throw ValidationError(field: "id", reason: "must be a UUID or {prefix}_{uuid-v4}, got \"\(given.prefix(80))\"")
            }
            return id
        }
        guard let timestamp = try fields.optionalTimestamp("timestamp") ?? defaults.timestamp else {
            throw ValidationError(field: "timestamp", reason: "is required")
        }
        let givenRecordedAt = try fields.optionalTimestamp("recorded_at")
        let recordedAt = givenRecordedAt ?? defaults.recordedAt
        let givenSource = try fields.optionalString("source")
        let source = givenSource ?? defaults.source
        try requireShort(source, field: "source")
        let givenDeviceId = try fields.optionalString("device_id")
        let deviceId = givenDeviceId ?? defaults.deviceId
        try requireShort(deviceId, field: "device_id")
        let category = try fields.optionalString("category")
        if let category {
            if category.isEmpty { throw ValidationError(field: "category", reason: "must not be empty (omit it instead)") }
            if category.count > EntryLimits.categoryCharacters || category.utf8.count > EntryLimits.shortStringBytes {
                throw ValidationError(field: "category", reason: "longer than \(EntryLimits.categoryCharacters) characters")
            }
        }
        let data = try fields.optional("data").map { value throws(ValidationError) in try LogData.validated(from: value, path: "data") } ?? LogData()
        if defaults.acceptsLifeLogForm { try fields.dropLifeLogCopyFields() }
        try fields.refuseUnknown()
        let id: String
        if let normalisedID {
            id = normalisedID
        } else if defaults.derivesAbsentID {
            id = contentID(timestamp: timestamp, recordedAt: givenRecordedAt, source: givenSource, deviceId: givenDeviceId,
                           category: category, data: data)
        } else {
            id = defaults.makeID()
        }
        try validateEntryID(id, field: "id")
        let entry = LogEntry(id: id, timestamp: timestamp, recordedAt: recordedAt, source: source, deviceId: deviceId,
                             category: category, data: data)
        try entry.requireEncodedSize()
        return entry
    }

    /// Refuses an entry whose canonical JSON exceeds `EntryLimits.encodedBytes`. Counting is
    /// skipped when even the worst case fits: every string byte escaped to six, plus the keys
    /// and numbers.
    func requireEncodedSize() throws(ValidationError) {
        var strings = id.utf8.count + source.utf8.count + deviceId.utf8.count + (category?.utf8.count ?? 0)
            + (data.text?.utf8.count ?? 0) + (data.metric.map { $0.name.utf8.count + ($0.unit?.utf8.count ?? 0) } ?? 0)
            + (data.location?.placeName?.utf8.count ?? 0)
        for tag in data.tags ?? [] { strings += tag.utf8.count + 3 }
        // Extra members have no worst case short of encoding them.
        guard strings * 6 + 1024 > EntryLimits.encodedBytes || !data.extra.isEmpty else { return }
        let encoded = json.canonicalText.utf8.count
        guard encoded <= EntryLimits.encodedBytes else {
            throw ValidationError(field: "", reason: "the entry encodes to \(encoded) bytes of JSON, more than the \(EntryLimits.encodedBytes) an entry may take (control characters in text count six bytes each)")
        }
    }

    /// Entry IDs are `{prefix}_{uuid-v4}`, lowercase; the prefix is the creating role for our own
    /// devices, or a short lowercase word for other sources (`drafts_…`).
    public static func validateEntryID(_ id: String, field: String) throws(ValidationError) {
        // Byte-wise, in place: this runs for every change a peer sends.
        var copy = id
        let valid = copy.withUTF8 { utf8 in
            var prefixLength = 0
            for b in utf8 {
                if b == UInt8(ascii: "_") { break }
                guard (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) else { return false }
                prefixLength += 1
            }
            return prefixLength > 0 && prefixLength <= 16 && prefixLength < utf8.count
                && Identifier.isUUIDv4(UnsafeBufferPointer(rebasing: utf8[(prefixLength + 1)...]))
        }
        guard valid else {
            throw ValidationError(field: field, reason: "must look like {role}_{uuid-v4} in lowercase, got \"\(id.prefix(80))\"")
        }
    }

    static func requireShort(_ value: String, field: String) throws(ValidationError) {
        if value.isEmpty { throw ValidationError(field: field, reason: "must not be empty") }
        if value.utf8.count > EntryLimits.shortStringBytes {
            throw ValidationError(field: field, reason: "longer than \(EntryLimits.shortStringBytes) bytes")
        }
        if value.count > EntryLimits.shortStringCharacters {
            throw ValidationError(field: field, reason: "longer than \(EntryLimits.shortStringCharacters) characters")
        }
    }
}

extension LogData {
    static func validated(from json: JSONValue, path: String) throws(ValidationError) -> LogData {
        var fields = try FieldReader(json, path: path)
        let text = try fields.optionalString("text")
        if let text, text.utf8.count > EntryLimits.textBytes {
            throw ValidationError(field: path + ".text", reason: "longer than \(EntryLimits.textBytes) bytes")
        }
        let metric = try fields.optional("metric").map { v throws(ValidationError) in try Metric.validated(from: v, path: path + ".metric") }
        let location = try fields.optional("location").map { v throws(ValidationError) in try Location.validated(from: v, path: path + ".location") }
        var tags: [String]?
        if let value = try fields.optional("tags") {
            guard case .array(let items) = value else {
                throw ValidationError(field: path + ".tags", reason: "must be an array of strings, got \(value.typeName)")
            }
            if items.count > EntryLimits.tagCount {
                throw ValidationError(field: path + ".tags", reason: "more than \(EntryLimits.tagCount) tags")
            }
            var collected: [String] = []
            for (i, item) in items.enumerated() {
                guard case .string(let tag) = item else {
                    throw ValidationError(field: "\(path).tags[\(i)]", reason: "must be a string, got \(item.typeName)")
                }
                try LogEntry.requireShort(tag.trimmingSpaces, field: "\(path).tags[\(i)]")
                collected.append(tag)
            }
            tags = collected
        }
        var extra: [String: JSONValue] = [:]
        for (name, value) in fields.unread() where value != .null {
            try LogData.requireExtraName(name, path: path)
            try LogData.requireBoundedObjects(value, field: path + "." + name)
            extra[name] = value
        }
        return LogData(text: text, metric: metric, location: location, tags: tags, extra: extra)
    }

    /// Whether `name` may name an extra member of `data`: 1 to 64 ASCII letters, digits and
    /// underscores, a letter first (`image_url`, `mood2`), and none of the document's four.
    package static func isExtraName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), LogData.isLetter(bytes[0]) else { return false }
        return bytes.allSatisfy { LogData.isLetter($0) || (0x30...0x39).contains($0) || $0 == 0x5F } && !standardMembers.contains(name)
    }

    static let standardMembers = ["location", "metric", "tags", "text"]

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }

    /// Refuses a name `isExtraName` refuses, and one a letter away from a document member
    /// (`txt`, `Tags`, `tag`): that is a typo, which would otherwise be kept as a member of its own.
    static func requireExtraName(_ name: String, path: String) throws(ValidationError) {
        guard isExtraName(name) else {
            throw ValidationError(field: path + "." + name.prefix(80),
                                  reason: "unknown field: a member of data beyond text, metric, location and tags is named by 1 to 64 ASCII letters, digits and underscores, a letter first")
        }
        if let meant = standardMembers.first(where: { LogData.isOneEditApart(name.lowercased(), $0) }) {
            throw ValidationError(field: path + "." + name, reason: "unknown field (did you mean \(path).\(meant)?)")
        }
    }

    /// Whether `a` becomes `b` by one insertion, deletion or substitution, or is `b` already.
    private static func isOneEditApart(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard abs(x.count - y.count) <= 1 else { return false }
        var i = 0, j = 0, edits = 0
        while i < x.count && j < y.count {
            if x[i] == y[j] { i += 1; j += 1; continue }
            edits += 1
            if edits > 1 { return false }
            if x.count > y.count { i += 1 } else if x.count < y.count { j += 1 } else { i += 1; j += 1 }
        }
        return edits + (x.count - i) + (y.count - j) <= 1
    }

    /// Every object inside an extra member keeps the rule of every object of an entry: at most
    /// 64 members. (Depth is the parser's: 64 levels.)
    private static func requireBoundedObjects(_ value: JSONValue, field: String) throws(ValidationError) {
        switch value {
        case .object(let members):
            guard members.count <= 64 else { throw ValidationError(field: field, reason: "has \(members.count) members; no LifeLog object has that many") }
            for (key, member) in members { try requireBoundedObjects(member, field: field + "." + key) }
        case .array(let items):
            for (i, item) in items.enumerated() { try requireBoundedObjects(item, field: "\(field)[\(i)]") }
        default: return
        }
    }
}

extension Metric {
    static func validated(from json: JSONValue, path: String) throws(ValidationError) -> Metric {
        var fields = try FieldReader(json, path: path)
        guard let name = try fields.optionalString("name") else { throw ValidationError(field: path + ".name", reason: "is required") }
        try LogEntry.requireShort(name.trimmingSpaces, field: path + ".name")
        guard let value = try fields.optionalNumber("value") else { throw ValidationError(field: path + ".value", reason: "is required") }
        let unit = try fields.optionalString("unit")
        if let unit { try LogEntry.requireShort(unit, field: path + ".unit") }
        let scaleMin = try fields.optionalNumber("scale_min")
        let scaleMax = try fields.optionalNumber("scale_max")
        if let scaleMin, let scaleMax, scaleMin > scaleMax {
            throw ValidationError(field: path + ".scale_min", reason: "\(JSONValue.numberText(scaleMin)) is greater than scale_max \(JSONValue.numberText(scaleMax))")
        }
        if let scaleMin, value < scaleMin {
            throw ValidationError(field: path + ".value", reason: "\(JSONValue.numberText(value)) is below scale_min \(JSONValue.numberText(scaleMin))")
        }
        if let scaleMax, value > scaleMax {
            throw ValidationError(field: path + ".value", reason: "\(JSONValue.numberText(value)) is above scale_max \(JSONValue.numberText(scaleMax))")
        }
        try fields.refuseUnknown()
        return Metric(name: name, value: value, unit: unit, scaleMin: scaleMin, scaleMax: scaleMax)
    }
}

extension Location {
    static func validated(from json: JSONValue, path: String) throws(ValidationError) -> Location {
        var fields = try FieldReader(json, path: path)
        guard let latitude = try fields.optionalNumber("latitude") else { throw ValidationError(field: path + ".latitude", reason: "is required") }
        guard (-90...90).contains(latitude) else { throw ValidationError(field: path + ".latitude", reason: "must be within -90…90, got \(JSONValue.numberText(latitude))") }
        guard let longitude = try fields.optionalNumber("longitude") else { throw ValidationError(field: path + ".longitude", reason: "is required") }
        guard (-180...180).contains(longitude) else { throw ValidationError(field: path + ".longitude", reason: "must be within -180…180, got \(JSONValue.numberText(longitude))") }
        let accuracy = try fields.optionalNumber("accuracy")
        if let accuracy, accuracy < 0 { throw ValidationError(field: path + ".accuracy", reason: "must be ≥ 0, got \(JSONValue.numberText(accuracy))") }
        let altitude = try fields.optionalNumber("altitude")
        let placeName = try fields.optionalString("place_name")
        if let placeName { try LogEntry.requireShort(placeName, field: path + ".place_name") }
        try fields.refuseUnknown()
        return Location(latitude: latitude, longitude: longitude, accuracy: accuracy, altitude: altitude, placeName: placeName)
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}

/// Reads typed members of one JSON object and remembers which were read, so the rest can be
/// refused as unknown. `null` counts as absent, as JSON clients commonly send it.
struct FieldReader {
    private let members: [(String, JSONValue)]
    private let path: String
    /// Which members were read, by position (objects with more than 64 members are refused).
    private var used: UInt64 = 0

    init(_ json: JSONValue, path: String) throws(ValidationError) {
        guard case .object(let members) = json else {
            throw ValidationError(field: path, reason: "must be a JSON object, got \(json.typeName)")
        }
        guard members.count <= 64 else { throw ValidationError(field: path, reason: "has \(members.count) members; no LifeLog object has that many") }
        self.members = members
        self.path = path
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    mutating func optional(_ key: String) throws(ValidationError) -> JSONValue? {
        guard let index = members.firstIndex(where: { $0.0 == key }) else { return nil }
        used |= 1 << UInt64(index)
        let value = members[index].1
        if case .null = value { return nil }
        return value
    }

    mutating func optionalString(_ key: String) throws(ValidationError) -> String? {
        guard let value = try optional(key) else { return nil }
        guard case .string(let s) = value else { throw ValidationError(field: name(key), reason: "must be a string, got \(value.typeName)") }
        return s
    }

    mutating func optionalNumber(_ key: String) throws(ValidationError) -> Double? {
        guard let value = try optional(key) else { return nil }
        guard case .number(let n) = value, n.isFinite else { throw ValidationError(field: name(key), reason: "must be a finite number, got \(value.typeName)") }
        return n
    }

    mutating func optionalTimestamp(_ key: String) throws(ValidationError) -> Timestamp? {
        guard let text = try optionalString(key) else { return nil }
        do {
            return try Timestamp(iso8601: text)
        } catch {
            throw ValidationError(field: name(key), reason: "not an ISO 8601 time with zone (\(error.reason)): \"\(text.prefix(64))\"")
        }
    }

    /// The members not read, in their order.
    func unread() -> [(String, JSONValue)] {
        members.enumerated().filter { used & (1 << UInt64($0.offset)) == 0 }.map(\.element)
    }

    func refuseUnknown() throws(ValidationError) {
        for (index, member) in members.enumerated() where used & (1 << UInt64(index)) == 0 {
            throw ValidationError(field: name(member.0), reason: "unknown field")
        }
    }
}

extension LogEntry {
    /// Validates a complete entry, as stored or as received from a peer: nothing is defaulted,
    /// every required field must be present.
    public static func validatedComplete(from json: JSONValue) throws(ValidationError) -> LogEntry {
        for key in ["id", "timestamp", "recorded_at", "source", "device_id", "data"] where json[key] == nil || json[key] == .null {
            if case .object = json { throw ValidationError(field: key, reason: "is required") }
        }
        let unused = EntryDefaults(makeID: { "" }, recordedAt: Timestamp(millisecondsSince1970: 0), timestamp: nil, source: "", deviceId: "")
        return try validated(from: json, defaults: unused)
    }
}
