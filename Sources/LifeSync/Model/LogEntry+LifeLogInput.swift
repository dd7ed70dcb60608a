/// LifeLog data as the LifeLog document's own apps and backend write it, taken in on a user's
/// ways in (`add`, `import`, `Replica.add(json:)`, `Replica.importDefaults()`) and never from a
/// peer, whose entries are always in our form already.
///
/// An entry must keep one identity across re-imports and replicas: every node importing the same
/// input must arrive at the same ID, so each rule is a pure function of the input.
///
/// - `{prefix}_{uuid-v4}` in any case: lowercased.
/// - A bare version-4 UUID in any case (Swift's `UUID().uuidString` and Drafts' `UUID.make()`
///   are uppercase): `lifelog_` and the UUID in lowercase, so `550E8400-…` is `lifelog_550e8400-…`.
/// - A bare UUID of another version: `lifelog_` and a version-4-shaped UUID from the SHA-256 of its
///   lowercase text (its own digits would fail the version-4 rule every peer applies).
/// - No `id` on import: `lifelog_` and a UUID from the SHA-256 of the entry's content as given —
///   `timestamp`, `data`, and `recorded_at`, `source`, `device_id` and `category` when present, as
///   canonical JSON. The same row imported twice, or on two nodes, is then the same entry. A field
///   the input leaves out counts as absent rather than as this node's default, so the ID does not
///   depend on which node imports it.
/// - `created_at` (the backend's row time) and `synced` (the app's "uploaded" flag) describe a
///   copy, not the entry: their types are checked and they are dropped.
/// - The app's Swift model encoded by a default `JSONEncoder` spells fields in camelCase:
///   `recordedAt`, `deviceId`, `data.location.placeName`, and `data.metric.scaleMin`/`scaleMax`
///   (the document maps those two to snake_case, a model without its `CodingKeys` does not).
///   Each is the same field as its snake_case name (`lifeLogSpellingsNormalised`); one object
///   giving both spellings of a field is refused. What is stored and sent stays snake_case.
extension Identifier {
    /// The prefix of IDs made from LifeLog input.
    package static let lifeLogPrefix = "lifelog"

    /// `given` mapped to an entry ID by the rules above, or nil when no rule applies.
    package static func normalisedEntryID(_ given: String) -> String? {
        guard given.utf8.count <= 64 else { return nil }
        let lower = given.lowercased()
        if (try? LogEntry.validateEntryID(lower, field: "id")) != nil { return lower }
        guard isUUIDShaped(lower) else { return nil }
        if isUUIDv4(lower[...]) { return lifeLogPrefix + "_" + lower }
        return lifeLogPrefix + "_" + uuidV4(bytes: SHA256.hash(Array(("lifesync bare uuid\n" + lower).utf8)).bytes)
    }

    /// The stored entry an ID a client holds addresses, by the rule its entry was created with:
    /// `550E8400-…` (as the LifeLog app keeps it) addresses `lifelog_550e8400-…`, and an ID in our
    /// own form in any case addresses itself lowercased. An entry whose own ID carries another
    /// prefix with the same UUID (`phone_550e8400-…`) is a different entry, addressed by its full
    /// ID. A text no rule applies to is returned as given (and is not found).
    package static func addressedEntryID(_ given: String) -> String {
        normalisedEntryID(given) ?? given
    }

    /// `8-4-4-4-12` lowercase hex digits, whatever the version and variant.
    package static func isUUIDShaped(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (i, b) in bytes.enumerated() {
            let isDash = i == 8 || i == 13 || i == 18 || i == 23
            let isHex = (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66)
            if isDash ? b != UInt8(ascii: "-") : !isHex { return false }
        }
        return true
    }
}

extension LogEntry {
    /// The ID of an imported entry that names none: see the rules above. `nil` means the input
    /// left that field out.
    static func contentID(timestamp: Timestamp, recordedAt: Timestamp?, source: String?, deviceId: String?,
                          category: String?, data: LogData) -> String {
        var members: [(String, JSONValue)] = [("timestamp", .string(timestamp.iso8601)), ("data", data.json)]
        if let recordedAt { members.append(("recorded_at", .string(recordedAt.iso8601))) }
        if let source { members.append(("source", .string(source))) }
        if let deviceId { members.append(("device_id", .string(deviceId))) }
        if let category { members.append(("category", .string(category))) }
        let digest = SHA256.hash(Array(("lifesync content id\n" + JSONValue.object(members).canonicalText).utf8))
        return Identifier.lifeLogPrefix + "_" + Identifier.uuidV4(bytes: digest.bytes)
    }

    /// The camelCase spellings of each object of an entry, and the field each one is.
    private static let camelCaseSpellings: [(camel: String, snake: String)] = [("recordedAt", "recorded_at"), ("deviceId", "device_id")]
    private static let nestedCamelCaseSpellings: [(object: String, spellings: [(camel: String, snake: String)])] = [
        ("metric", [("scaleMin", "scale_min"), ("scaleMax", "scale_max")]),
        ("location", [("placeName", "place_name")]),
    ]

    /// `json` (an entry, or a merge patch of one) with the LifeLog app's camelCase member names
    /// as their snake_case fields (see the rules above); anything else is left as it is, for
    /// the validator to judge. Refuses an object that names one field in both spellings.
    public static func lifeLogSpellingsNormalised(_ json: JSONValue) throws(ValidationError) -> JSONValue {
        guard case .object(var members) = json else { return json }
        var changed = try renameCamelCase(&members, path: "", camelCaseSpellings)
        if let dataIndex = members.firstIndex(where: { $0.0 == "data" }), case .object(var data) = members[dataIndex].1 {
            var dataChanged = false
            for (object, spellings) in nestedCamelCaseSpellings {
                guard let index = data.firstIndex(where: { $0.0 == object }), case .object(var inner) = data[index].1 else { continue }
                if try renameCamelCase(&inner, path: "data." + object, spellings) {
                    data[index].1 = .object(inner)
                    dataChanged = true
                }
            }
            if dataChanged {
                members[dataIndex].1 = .object(data)
                changed = true
            }
        }
        return changed ? .object(members) : json
    }

    /// Renames the camelCase members of one object; true if any was.
    private static func renameCamelCase(_ members: inout [(String, JSONValue)], path: String,
                                        _ spellings: [(camel: String, snake: String)]) throws(ValidationError) -> Bool {
        var changed = false
        for (camel, snake) in spellings {
            guard let index = members.firstIndex(where: { $0.0 == camel }) else { continue }
            if members.contains(where: { $0.0 == snake }) {
                throw ValidationError(field: path.isEmpty ? snake : path + "." + snake,
                                      reason: "given twice, as \"\(snake)\" and as \"\(camel)\" (the same field); send one")
            }
            members[index].0 = snake
            changed = true
        }
        return changed
    }

    /// Neither a category nor anything in `data`: what `add` refuses to write.
    public var isEmpty: Bool { category == nil && data == LogData() }
}

extension FieldReader {
    /// Checks and drops the fields that describe a LifeLog copy rather than the entry.
    mutating func dropLifeLogCopyFields() throws(ValidationError) {
        _ = try optionalString("created_at")
        if let synced = try optional("synced") {
            guard case .bool = synced else { throw ValidationError(field: "synced", reason: "must be true or false, got \(synced.typeName)") }
        }
    }
}
