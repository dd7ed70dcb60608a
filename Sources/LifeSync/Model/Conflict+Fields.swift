/// One field on which the two sides of a conflict differ: what a user compares to decide.
///
/// Fields are named as a user edits them: a top-level member (`category`, `timestamp`,
/// `source`, …) or a member of `data` (`data.text`, `data.tags`, …). `nil` is "absent".
package struct FieldDifference: Equatable, Sendable {
    package var field: String
    package var winner: JSONValue?
    package var loser: JSONValue?

    package init(field: String, winner: JSONValue?, loser: JSONValue?) {
        self.field = field
        self.winner = winner
        self.loser = loser
    }
}

extension LogEntry {
    /// Every field a user can edit, with its value: each top-level member but `id` and
    /// `recorded_at` (bookkeeping), and each member of `data` on its own, so two versions that
    /// differ only in their tags show one difference, `data.tags`, not the whole `data` object.
    ///
    ///     entry.editableFields.first { $0.field == "data.text" }?.value   // .string("…")
    public var editableFields: [(field: String, value: JSONValue)] {
        guard case .object(let members) = json else { preconditionFailure("an entry encodes as an object") }
        var fields: [(field: String, value: JSONValue)] = []
        for (key, value) in members where key != "id" && key != "recorded_at" {
            if key == "data", case .object(let dataMembers) = value {
                fields += dataMembers.map { ("data." + $0.0, $0.1) }
            } else {
                fields.append((key, value))
            }
        }
        return fields
    }

    /// The fields on which `winner` and `loser` differ, in a stable order (by name). A side that
    /// is a delete (nil) has no fields: every field of the other side differs.
    package static func differences(winner: LogEntry?, loser: LogEntry?) -> [FieldDifference] {
        var byField: [String: FieldDifference] = [:]
        for (field, value) in winner?.editableFields ?? [] { byField[field] = FieldDifference(field: field, winner: value, loser: nil) }
        for (field, value) in loser?.editableFields ?? [] { byField[field, default: FieldDifference(field: field, winner: nil, loser: nil)].loser = value }
        return byField.values.filter { $0.winner != $0.loser }.sorted { $0.field < $1.field }
    }

    /// The merge patch (RFC 7396) that sets `field` to `value` (nil: removes it). Applied after
    /// the patch that removes the field, it replaces an object member wholesale instead of
    /// merging into it (a location keeps no member of the value it replaces).
    static func patch(setting field: String, to value: JSONValue?) -> JSONValue {
        let parts = field.split(separator: ".", maxSplits: 1).map(String.init)
        let leaf = value ?? .null
        return parts.count == 2 && parts[0] == "data"
            ? .object([("data", .object([(parts[1], leaf)]))])
            : .object([(field, leaf)])
    }

    /// This entry with `field` taken from `other` (absent there: removed here), validated again
    /// as any edit is. Throws when `field` is not an editable field of either.
    func taking(_ field: String, from other: LogEntry, defaults: EntryDefaults) throws(ValidationError) -> LogEntry {
        let known = Set(editableFields.map(\.field)).union(other.editableFields.map(\.field))
        guard known.contains(field) else {
            throw ValidationError(field: "--field", reason: "\(field) is not a field of either version (fields: \(known.sorted().joined(separator: ", ")))")
        }
        let value = other.editableFields.first { $0.field == field }?.value
        var result = MergePatch.apply(LogEntry.patch(setting: field, to: nil), to: json)
        if let value { result = MergePatch.apply(LogEntry.patch(setting: field, to: value), to: result) }
        let entry = try LogEntry.validated(from: result, defaults: defaults)
        precondition(entry.id == id, "taking a field keeps the entry's identity")
        return entry
    }
}
