import LifeSync

/// The per-field merge (§8, §5.2.1 flags bit 1). A target's state of an entry is the merge of
/// the writes it still holds, and delta sync delivers every write that still decides a field
/// (each in its origin's log), so the runner reads an entry back as the writes the target sends
/// and merges them itself with the reference's `FieldMerge`, a pure function of that set. A
/// target that dropped a write still winning a field, or merged whole entries, shows up as a
/// missing write or a wrong field value.
extension ConformanceCases {
    /// A write of `origin` carrying the whole entry as its writer left it (`text`, `tags`), and
    /// the fields it changed: `.all` for a creation, fewer for an edit (flags bit 1 on the wire).
    /// `members` are extra members of `data` (§5.2.2) with string values, named below `tags` so the
    /// content stays canonical.
    static func fieldWrite(_ target: ConformanceTarget, id: String, origin: String, sequence: UInt64, hlc: HLCTimestamp,
                           seen: VersionVector = VersionVector(), text: String, tags: [String], members: [(String, String)] = [],
                           fields: FieldMask) -> EncodedChange {
        precondition(members.allSatisfy { $0.0 < "tags" } && members.map(\.0) == members.map(\.0).sorted(), "canonical member order")
        var vector = seen
        vector[origin] = max(vector[origin], sequence)
        let extra = members.map { "\"\($0.0)\":\"\($0.1)\"," }.joined()
            + "\"tags\":[" + tags.map { "\"\($0)\"" }.joined(separator: ",") + "],"
        return EncodedChange(id: id, stamp: VersionStamp(hlc: hlc, origin: origin, sequence: sequence, vector: vector, deleted: false),
                             payload: target.entryJSON(id: id, text: text, extra: extra), fields: fields)
    }

    /// One write: the same (origin, seq).
    static func sameWrite(_ a: VersionStamp, _ b: VersionStamp) -> Bool { a.origin == b.origin && a.sequence == b.sequence }

    static func describe(_ write: EncodedChange) -> String {
        "\(write.stamp.origin):\(write.stamp.sequence) (fields \(write.fields))"
    }

    /// A creation of a new entry by the pair's first origin and two concurrent edits of it, the
    /// first edit by that origin, the second by the other and stamped above it; and the writes
    /// the target holds of the entry afterwards.
    struct ConcurrentEdits {
        let id: String
        let first: EncodedChange, second: EncodedChange
        let held: [EntryWrite]
    }

    /// Pushes what `write` makes for step 0 (the creation, seeing nothing), 1 and 2 (the edits,
    /// each having seen the creation only), in one batch for the creation and one for both edits
    /// (an id may recur in a batch, §5.2.1), and reads the writes back.
    static func concurrentEdits(_ target: ConformanceTarget,
                                _ write: (_ id: String, _ origin: String, _ sequence: UInt64, _ hlc: HLCTimestamp, _ seen: VersionVector, _ step: Int) -> EncodedChange) throws -> ConcurrentEdits {
        try target.requireReceivesEntries()
        guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends back no other node's writes to read (§7.3)") }
        let origins = target.pair
        let base = target.now
        let id = target.newEntryID()
        let created = target.pairSequence(), edited = target.pairSequence()
        let creation = write(id, origins[0], created, base, VersionVector(), 0)
        let seen = VersionVector([(origins[0], created)])
        let first = write(id, origins[0], edited, HLCTimestamp(rawValue: base.rawValue + 1), seen, 1)
        let second = write(id, origins[1], edited, HLCTimestamp(rawValue: base.rawValue + 2), seen, 2)
        try target.pushAll([[creation], [second, first]])
        return ConcurrentEdits(id: id, first: first, second: second,
                               held: try target.heldWrites(id, since: [origins[0]: created - 1, origins[1]: edited - 1]))
    }

    static let fields: [ConformanceCase] = [
        ConformanceCase("8", "merge.fields-concurrent-both-survive",
                        "two concurrent edits of different fields (data.text from one origin, data.tags from another) both survive, whatever their stamps") { target in
            // The tag edit is stamped above the text edit, so a whole-entry merge would lose the text.
            let edits = try concurrentEdits(target) { id, origin, sequence, hlc, seen, step in
                fieldWrite(target, id: id, origin: origin, sequence: sequence, hlc: hlc, seen: seen,
                           text: step == 1 ? "text edit" : "original", tags: [step == 2 ? "after" : "before"],
                           fields: [.all, FieldMask([.text]), FieldMask([.tags])][step])
            }
            let (id, writes, textEdit, tagEdit) = (edits.id, edits.held, edits.first, edits.second)
            for (write, field) in [(textEdit, "data.text"), (tagEdit, "data.tags")]
            where !writes.contains(where: { sameWrite($0.stamp, write.stamp) }) {
                throw ConformanceFailure("the target no longer sends \(describe(write)), the only write of \(field) above the creation: "
                                         + "it dropped a write that still wins a field (§8: kept writes stay in their origins' logs)")
            }
            guard !writes.isEmpty, let content = FieldMerge.merge(writes).content else {
                throw ConformanceFailure("\(id) reads back deleted or missing after a creation and two edits")
            }
            guard content.data.text == "text edit", content.data.tags == ["after"] else {
                throw ConformanceFailure("\(id) reads back with data.text \(content.data.text ?? "absent") and data.tags \(content.data.tags ?? []); "
                                         + "§8 keeps each field's own greatest write: data.text \"text edit\" (\(describe(textEdit))) and data.tags [after] (\(describe(tagEdit)))")
            }
            return .pass("\(writes.count) writes held")
        },
        ConformanceCase("8", "merge.extra-members-per-field",
                        "members of data beyond the document's four are kept, and two concurrent edits of different ones (flags bit 2) both survive and are sent on with their names") { target in
            let edits = try concurrentEdits(target) { id, origin, sequence, hlc, seen, step in
                let members = [("image_url", step == 1 ? "u1" : "u0"), ("mood_note", step == 2 ? "m2" : "m0")]
                return fieldWrite(target, id: id, origin: origin, sequence: sequence, hlc: hlc, seen: seen, text: "original", tags: ["t"],
                                  members: members, fields: [.all, FieldMask([.extra("image_url")]), FieldMask([.extra("mood_note")])][step])
            }
            let (id, writes) = (edits.id, edits.held)
            for edit in [edits.first, edits.second] {
                guard let held = writes.first(where: { sameWrite($0.stamp, edit.stamp) }) else {
                    throw ConformanceFailure("the target no longer sends \(describe(edit)), the only write of its extra member above the creation "
                                             + "(§8: each extra member of data is a field)")
                }
                guard held.fields == edit.fields else {
                    throw ConformanceFailure("the target sends \(describe(edit)) back with fields \(held.fields): the names of flags bit 2 travel unchanged (§5.2.1, §7.4)")
                }
            }
            guard let content = FieldMerge.merge(writes).content else { throw ConformanceFailure("\(id) reads back deleted or missing") }
            guard content.data.extra == ["image_url": .string("u1"), "mood_note": .string("m2")] else {
                throw ConformanceFailure("\(id) reads back with data \(content.data.json.canonicalText); §8 keeps each extra member's own greatest write: "
                                         + "image_url \"u1\" (\(describe(edits.first))) and mood_note \"m2\" (\(describe(edits.second)))")
            }
            return .pass("\(writes.count) writes held")
        },
        ConformanceCase("8", "merge.partial-change-unknown-entry",
                        "a partial change (flags bit 1) of an entry the target does not hold is stored whole, and sent on with its mask unchanged") { target in
            try target.requireReceivesEntries()
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends back no other node's writes to read (§7.3)") }
            let origin = target.pair[0]
            let id = target.newEntryID()
            let sequence = target.sequences(origin, count: 1).lowerBound
            let mask = FieldMask([.text, .tags])
            let partial = fieldWrite(target, id: id, origin: origin, sequence: sequence, hlc: target.now,
                                     text: "partial", tags: ["whole", "entry"], fields: mask)
            try target.pushAll([[partial]])
            let writes = try target.heldWrites(id, since: [origin: sequence - 1])
            guard let held = writes.first(where: { sameWrite($0.stamp, partial.stamp) }) else {
                throw ConformanceFailure("\(id) is missing from the read-back after \(describe(partial)) was acknowledged "
                                         + "(a receiver MUST accept a partial change of an entry it does not hold, §8)")
            }
            let sent = try LogEntry.validatedComplete(from: try JSONValue.parse(bytes: partial.payload))
            guard held.entry == sent else {
                throw ConformanceFailure("the target sends \(id) back as \(held.entry?.json.canonicalText ?? "a delete"), "
                                         + "not the whole entry it was sent (§5.2.1: a change carries the whole entry)")
            }
            guard held.fields == mask else {
                throw ConformanceFailure("the target sends \(describe(partial)) back with fields \(held.fields): "
                                         + "relayed changes are sent unchanged (§7.4)")
            }
            return .pass(nil)
        },
    ]
}
