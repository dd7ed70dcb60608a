/// A field of an entry that a write can change on its own: the unit of the per-field merge
/// (PROTOCOL.md §8). `id` is the record's identity and `recorded_at` bookkeeping of its latest
/// write; neither is a field.
///
/// Each field has a bit in a write's `FieldMask`, in the order below (PROTOCOL.md §5.2.1).
package enum EntryField: Int, CaseIterable, Sendable {
    case timestamp, source, deviceId, category, text, metric, location, tags

    /// The name a user edits it by (`conflicts resolve --field`), as `editableFields` lists it.
    package var name: String {
        switch self {
        case .timestamp: "timestamp"
        case .source: "source"
        case .deviceId: "device_id"
        case .category: "category"
        case .text: "data.text"
        case .metric: "data.metric"
        case .location: "data.location"
        case .tags: "data.tags"
        }
    }

    package init?(name: String) {
        guard let field = EntryField.allCases.first(where: { $0.name == name }) else { return nil }
        self = field
    }
}

/// The fields a write stamps: those it changed. A new entry stamps every field; an edit only
/// what differs from the version its writer saw, so a concurrent edit of another field survives.
///
///     FieldMask.changed(from: before, to: after)   // [.text] after a text edit
package struct FieldMask: Equatable, Hashable, Sendable {
    package var rawValue: UInt8

    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package init(_ fields: [EntryField]) {
        rawValue = fields.reduce(0) { $0 | (1 << UInt8($1.rawValue)) }
    }

    /// Every field: a new entry, and every change of protocol revisions before fields.
    package static let all = FieldMask(EntryField.allCases)
    package static let none = FieldMask(rawValue: 0)

    /// Bits above the last field; a mask with any of them set is malformed.
    package static let unknownBits: UInt8 = ~all.rawValue

    package func contains(_ field: EntryField) -> Bool { rawValue & (1 << UInt8(field.rawValue)) != 0 }
    package var fields: [EntryField] { EntryField.allCases.filter(contains) }
    package var isEmpty: Bool { rawValue == 0 }
    package func isSubset(of other: FieldMask) -> Bool { rawValue & ~other.rawValue == 0 }
    package func intersects(_ other: FieldMask) -> Bool { rawValue & other.rawValue != 0 }
    package func union(_ other: FieldMask) -> FieldMask { FieldMask(rawValue: rawValue | other.rawValue) }
    package func removing(_ other: FieldMask) -> FieldMask { FieldMask(rawValue: rawValue & ~other.rawValue) }
    package mutating func insert(_ field: EntryField) { self = union(FieldMask([field])) }

    /// The fields on which `after` differs from `before`.
    package static func changed(from before: LogEntry, to after: LogEntry) -> FieldMask {
        FieldMask(EntryField.allCases.filter { !before.hasSameValue(as: after, in: $0) })
    }
}

extension LogEntry {
    /// Whether the two entries hold the same value in `field`.
    package func hasSameValue(as other: LogEntry, in field: EntryField) -> Bool {
        switch field {
        case .timestamp: timestamp == other.timestamp
        case .source: source == other.source
        case .deviceId: deviceId == other.deviceId
        case .category: category == other.category
        case .text: data.text == other.data.text
        case .metric: data.metric == other.data.metric
        case .location: data.location == other.data.location
        case .tags: data.tags == other.data.tags
        }
    }

    /// Sets `field` to `other`'s value of it (absent there: absent here).
    package mutating func take(_ field: EntryField, from other: LogEntry) {
        switch field {
        case .timestamp: timestamp = other.timestamp
        case .source: source = other.source
        case .deviceId: deviceId = other.deviceId
        case .category: category = other.category
        case .text: data.text = other.data.text
        case .metric: data.metric = other.data.metric
        case .location: data.location = other.data.location
        case .tags: data.tags = other.data.tags
        }
    }
}
