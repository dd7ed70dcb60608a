/// A field of an entry that a write can change on its own: the unit of the per-field merge
/// (PROTOCOL.md §8). `id` is the record's identity and `recorded_at` bookkeeping of its latest
/// write; neither is a field.
///
/// The LifeLog document's eight fields each have a bit in a write's `FieldMask`, in the order of
/// `standard` (PROTOCOL.md §5.2.1). Every other member of `data` (`LogData.extra`) is a field of
/// its own too, named rather than numbered, so a field added later merges on every node of this
/// revision without a new protocol version.
package enum EntryField: Hashable, Sendable {
    case timestamp, source, deviceId, category, text, metric, location, tags
    /// A member of `data` beyond the document's four, by its name (`LogData.isExtraName`).
    case extra(String)

    /// The document's fields, in bit order.
    package static let standard: [EntryField] = [.timestamp, .source, .deviceId, .category, .text, .metric, .location, .tags]

    /// Its bit in the mask's byte; nil for an extra member, which a mask names.
    package var bit: UInt8? {
        switch self {
        case .timestamp: 0
        case .source: 1
        case .deviceId: 2
        case .category: 3
        case .text: 4
        case .metric: 5
        case .location: 6
        case .tags: 7
        case .extra: nil
        }
    }

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
        case .extra(let member): "data." + member
        }
    }

    package init?(name: String) {
        if let field = EntryField.standard.first(where: { $0.name == name }) {
            self = field
        } else if name.hasPrefix("data."), LogData.isExtraName(String(name.dropFirst(5))) {
            self = .extra(String(name.dropFirst(5)))
        } else {
            return nil
        }
    }
}

/// The fields a write stamps: those it changed. A new entry stamps every field; an edit only
/// what differs from the version its writer saw, so a concurrent edit of another field survives.
///
///     FieldMask.changed(from: before, to: after)   // [.text] after a text edit
///
/// A mask is the byte of the document's fields and the names of the extra members it changed,
/// or, for a write of every field (`all`), every extra member whatever its name: a new entry
/// or a resolution sets each member it leaves out to absent.
package struct FieldMask: Hashable, Sendable {
    /// The document's fields, one bit each (`EntryField.bit`).
    package var bits: UInt8
    /// The extra members of `data` it changed, ascending by bytes; nil for every one (`all`).
    package private(set) var extra: [String]?

    package init(bits: UInt8, extra: [String] = []) {
        self.bits = bits
        self.extra = extra.isEmpty ? [] : Array(Set(extra)).sorted()  // most masks name none
    }

    package init(_ fields: [EntryField]) {
        var bits: UInt8 = 0
        var extra: [String] = []
        for field in fields {
            if let bit = field.bit { bits |= 1 << bit } else if case .extra(let name) = field { extra.append(name) }
        }
        self.init(bits: bits, extra: extra)
    }

    /// The fields of `bits` and every extra member, whatever its name.
    package static func everyExtraMember(bits: UInt8) -> FieldMask {
        var mask = FieldMask(bits: bits)
        mask.extra = nil
        return mask
    }

    /// Every field, extra members included: a new entry, a delete, a resolution, and every change
    /// of protocol revisions before fields.
    package static let all = FieldMask.everyExtraMember(bits: 0xFF)
    package static let none = FieldMask(bits: 0)

    package func contains(_ field: EntryField) -> Bool {
        if let bit = field.bit { return bits & (1 << bit) != 0 }
        guard case .extra(let name) = field, let extra else { return true }
        return extra.contains(name)
    }

    /// The fields it names: the document's, then the extra members. `all` names no extra member
    /// (it covers whichever an entry has); `fields(among:)` lists them.
    package var fields: [EntryField] { EntryField.standard.filter(contains) + (extra ?? []).map(EntryField.extra) }

    /// The fields it covers of an entry whose extra members are `members` (ascending).
    package func fields(among members: [String]) -> [EntryField] {
        extra == nil ? EntryField.standard + members.map(EntryField.extra) : fields
    }

    package var isEmpty: Bool { bits == 0 && extra?.isEmpty == true }

    package func isSubset(of other: FieldMask) -> Bool {
        guard bits & ~other.bits == 0 else { return false }
        guard let theirs = other.extra else { return true }
        guard let mine = extra else { return false }
        return mine.allSatisfy(theirs.contains)
    }

    package func intersects(_ other: FieldMask) -> Bool {
        if bits & other.bits != 0 { return true }
        switch (extra, other.extra) {
        case (nil, nil): return true
        case (nil, let named?), (let named?, nil): return !named.isEmpty
        case (let mine?, let theirs?): return mine.contains(where: theirs.contains)
        }
    }

    package func union(_ other: FieldMask) -> FieldMask {
        guard let mine = extra, let theirs = other.extra else { return FieldMask.everyExtraMember(bits: bits | other.bits) }
        return FieldMask(bits: bits | other.bits, extra: mine + theirs)
    }

    package func intersection(_ other: FieldMask) -> FieldMask {
        switch (extra, other.extra) {
        case (nil, nil): return FieldMask.everyExtraMember(bits: bits & other.bits)
        case (nil, let named?), (let named?, nil): return FieldMask(bits: bits & other.bits, extra: named)
        case (let mine?, let theirs?): return FieldMask(bits: bits & other.bits, extra: mine.filter(theirs.contains))
        }
    }

    /// Without the fields of `other` (without any extra member when `other` is `all`). A mask
    /// of every extra member keeps them all when `other` names some: "every member but these"
    /// is not a mask. (The masks this runs on are a merge's losses, which name their members.)
    package func removing(_ other: FieldMask) -> FieldMask {
        guard let mine = extra else {
            return other.extra == nil ? FieldMask(bits: bits & ~other.bits) : FieldMask.everyExtraMember(bits: bits & ~other.bits)
        }
        return FieldMask(bits: bits & ~other.bits, extra: other.extra.map { theirs in mine.filter { !theirs.contains($0) } } ?? [])
    }

    package mutating func insert(_ field: EntryField) { self = union(FieldMask([field])) }

    /// The fields on which `after` differs from `before`.
    package static func changed(from before: LogEntry, to after: LogEntry) -> FieldMask {
        let members = Set(before.data.extra.keys).union(after.data.extra.keys)
        return FieldMask(EntryField.standard.filter { !before.hasSameValue(as: after, in: $0) }
            + members.map(EntryField.extra).filter { !before.hasSameValue(as: after, in: $0) })
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
        case .extra(let name): data.extra[name] == other.data.extra[name]
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
        case .extra(let name): data.extra[name] = other.data.extra[name]
        }
    }
}

extension FieldMask: CustomStringConvertible {
    /// `all`, or the byte in hex and the extra members it names: `0x90`, `0x00+image_url`.
    package var description: String {
        if self == .all { return "all" }
        let hex = String(bits, radix: 16)
        let byte = "0x" + (hex.count == 1 ? "0" : "") + hex
        guard let extra else { return byte + "+every extra member" }
        return extra.isEmpty ? byte : byte + "+" + extra.joined(separator: ",")
    }
}
