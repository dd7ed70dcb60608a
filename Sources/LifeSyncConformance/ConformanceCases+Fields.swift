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
    static func fieldWrite(_ target: ConformanceTarget, id: String, origin: String, sequence: UInt64, hlc: HLCTimestamp,
                           seen: VersionVector = VersionVector(), text: String, tags: [String], fields: FieldMask) -> EncodedChange {
        var vector = seen
        vector[origin] = max(vector[origin], sequence)
        let extra = "\"tags\":[" + tags.map { "\"\($0)\"" }.joined(separator: ",") + "],"
        return EncodedChange(id: id, stamp: VersionStamp(hlc: hlc, origin: origin, sequence: sequence, vector: vector, deleted: false),
                             payload: target.entryJSON(id: id, text: text, extra: extra), fields: fields)
    }

    /// One write: the same (origin, seq).
    static func sameWrite(_ a: VersionStamp, _ b: VersionStamp) -> Bool { a.origin == b.origin && a.sequence == b.sequence }

    static func describe(_ write: EncodedChange) -> String {
        "\(write.stamp.origin):\(write.stamp.sequence) (fields 0x\(Hex.encode([write.fields.rawValue])))"
    }

    static let fields: [ConformanceCase] = [
        ConformanceCase("8", "merge.fields-concurrent-both-survive",
                        "two concurrent edits of different fields (data.text from one origin, data.tags from another) both survive, whatever their stamps") { target in
            try target.requireReceivesEntries()
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends back no other node's writes to read (§7.3)") }
            let origins = target.pair
            let base = target.now
            let id = target.newEntryID()
            let created = target.pairSequence(), edited = target.pairSequence()
            let creation = fieldWrite(target, id: id, origin: origins[0], sequence: created, hlc: base,
                                      text: "original", tags: ["before"], fields: .all)
            // Both writers saw the creation and nothing of each other. The tag edit is stamped
            // above the text edit, so a whole-entry merge would lose the text.
            let textEdit = fieldWrite(target, id: id, origin: origins[0], sequence: edited, hlc: HLCTimestamp(rawValue: base.rawValue + 1),
                                      seen: VersionVector([(origins[0], created)]), text: "text edit", tags: ["before"], fields: FieldMask([.text]))
            let tagEdit = fieldWrite(target, id: id, origin: origins[1], sequence: edited, hlc: HLCTimestamp(rawValue: base.rawValue + 2),
                                     seen: VersionVector([(origins[0], created)]), text: "original", tags: ["after"], fields: FieldMask([.tags]))
            // One batch carries both edits of the entry: an id may recur in a batch (§5.2.1).
            try target.pushAll([[creation], [tagEdit, textEdit]])
            let writes = try target.heldWrites(id, since: [origins[0]: created - 1, origins[1]: edited - 1])
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
                throw ConformanceFailure("the target sends \(describe(partial)) back with fields 0x\(Hex.encode([held.fields.rawValue])): "
                                         + "relayed changes are sent unchanged (§7.4)")
            }
            return .pass(nil)
        },
    ]
}
