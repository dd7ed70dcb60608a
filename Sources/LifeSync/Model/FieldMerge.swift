/// One write of an entry as the per-field merge sees it: its stamp, the fields it changed, and
/// the whole entry as its writer left it (nil for a delete).
package struct EntryWrite: Equatable, Sendable {
    package var stamp: VersionStamp
    package var fields: FieldMask
    package var entry: LogEntry?

    package init(stamp: VersionStamp, fields: FieldMask = .all, entry: LogEntry?) {
        precondition(stamp.deleted == (entry == nil), "a write carries an entry exactly when it is not a delete")
        self.stamp = stamp
        self.fields = entry == nil ? .all : fields
        self.entry = entry
    }
}

/// A write that lost, for the conflicts table: `fields` are the fields it lost to a concurrent
/// write that had not seen it (nil: it lost whole, to or against a delete).
package struct FieldLoss: Equatable, Sendable {
    package var loser: EntryWrite
    package var fields: FieldMask?
    package var winner: VersionStamp
}

extension FieldLoss {
    /// Whether `write` takes part in this loss: it lost, or it won what was lost. A loser beaten
    /// on several fields names its greatest winner; the write may have won another of the fields
    /// (the text), and that loss is news even when the named winner (of the tags) is not.
    func involves(_ write: VersionStamp, in result: FieldMergeResult) -> Bool {
        loser.stamp.isSameWrite(as: write) || winner.isSameWrite(as: write)
            || (fields?.fields ?? []).contains { result.winner(of: $0)?.isSameWrite(as: write) == true }
    }
}

/// What a set of writes of one entry makes of it.
package struct FieldMergeResult: Equatable, Sendable {
    /// The write the record's row carries: the greatest live write, or when the entry is
    /// deleted, the greatest delete.
    package var latest: EntryWrite
    /// The entry as it reads (nil: deleted).
    package var content: LogEntry?
    /// The other writes that still decide part of it, ascending: each earlier write that wins a
    /// field, and the greatest delete the entry outlived (the floor). Everything else can never
    /// matter again and is dropped.
    package var kept: [EntryWrite]
    package var losses: [FieldLoss]
    /// The fields together passed the size an entry may take, so `content` is the latest write's
    /// own entry whole (the kept writes still decide the fields once a later write allows).
    package var standsWhole = false

    /// The greatest delete the entry outlived (nil when it is deleted, or never was): the writes
    /// below it count for nothing but their conflicts.
    package var floor: EntryWrite? {
        content == nil ? nil : kept.last { $0.entry == nil }
    }

    /// Whether `write` is part of the result (as the latest or kept).
    package func holds(_ stamp: VersionStamp) -> Bool {
        latest.stamp.isSameWrite(as: stamp) || kept.contains { $0.stamp.isSameWrite(as: stamp) }
    }

    /// The write whose value of `field` stands (nil when the entry is deleted): the greatest
    /// held write that changed it, or the latest when none did.
    package func winner(of field: EntryField) -> VersionStamp? {
        guard content != nil else { return nil }
        guard !standsWhole else { return latest.stamp }
        let floor = self.floor
        let live = (kept + [latest]).filter { write in write.entry != nil && floor.map { $0.stamp.precedes(write.stamp) } ?? true }
        return (live.last { $0.fields.contains(field) } ?? latest).stamp
    }
}

/// The per-field merge (PROTOCOL.md §8), as a pure function of the set of writes an entry has
/// seen. The result depends only on the set, so any delivery order, with duplicates, converges:
///
/// - Deletes against writes keep the whole-entry rule: the entry is deleted when its greatest
///   delete is above its greatest write (stamp order, `VersionStamp.precedes`).
/// - Otherwise only the writes above the greatest delete count (a delete forgets what it
///   deleted, also where it loses). Each field takes the value of the greatest of them that
///   changed it; a field none of them changed keeps the greatest write's value.
/// - A write that wins no field and is not the greatest is dropped: fields only ever gain
///   greater writes, so it can never win one again (and a greater delete drops it as well).
///
/// Because a causally later write is stamped above what it replaces, an edit wins every field
/// it changed over every version its writer had seen; only concurrent writes to the same field
/// resolve by stamp, and the loser of that field is a conflict.
///
///     let result = FieldMerge.merge([create, textEditOnPhone, tagEditOnMac])
///     result.content?.data.text   // the phone's text
///     result.content?.data.tags   // the mac's tags
package enum FieldMerge {
    package static func merge(_ writes: [EntryWrite]) -> FieldMergeResult {
        precondition(!writes.isEmpty, "a merge of no writes")
        var ordered: [EntryWrite] = []
        for write in writes.sorted(by: { $0.stamp.precedes($1.stamp) }) {
            // Equal in the order means the same (origin, sequence): one write, seen twice.
            if let last = ordered.last, last.stamp.isSameWrite(as: write.stamp) { continue }
            ordered.append(write)
        }
        let floor = ordered.last { $0.entry == nil }
        guard let greatest = ordered.last(where: { $0.entry != nil }), floor.map({ $0.stamp.precedes(greatest.stamp) }) ?? true else {
            let delete = floor!
            // Every write the delete had not seen lost to it, whole, unless another write that
            // had seen it decided for it (`answered`); each such loser is held, so it travels.
            let members = extraMembers(of: ordered)
            let losses = ordered.filter { !$0.stamp.isSameWrite(as: delete.stamp) && !delete.stamp.hasSeen($0.stamp) && !$0.isNoOpEdit
                && !FieldMerge.answered($0, in: ordered, members: members) }
                .map { FieldLoss(loser: $0, fields: nil, winner: delete.stamp) }
            let kept = ordered.filter { write in
                !write.stamp.isSameWrite(as: delete.stamp)
                    && (write.entry == nil || losses.contains { $0.loser.stamp.isSameWrite(as: write.stamp) } || FieldMerge.isResolution(write))
            }
            return FieldMergeResult(latest: delete, content: nil, kept: kept, losses: losses)
        }
        let counted = ordered.filter { write in write.entry != nil && (floor.map { $0.stamp.precedes(write.stamp) } ?? true) }
        var content = greatest.entry!
        // The fields: the document's eight, then every extra member a write holds or names.
        let members = extraMembers(of: ordered)
        func slot(_ field: EntryField) -> Int {
            if let bit = field.bit { return Int(bit) }
            guard case .extra(let name) = field, let index = members.firstIndex(of: name) else { preconditionFailure("a field outside the merge") }
            return EntryField.standard.count + index
        }
        var winners: [Int?] = Array(repeating: nil, count: EntryField.standard.count + members.count)
        for field in EntryField.standard + members.map(EntryField.extra) {
            guard let index = counted.lastIndex(where: { $0.fields.contains(field) }) else { continue }
            winners[slot(field)] = index
            content.take(field, from: counted[index].entry!)
        }
        // Fields of different writes can together pass the size a single entry may take: then
        // the greatest write stands whole, so nothing is stored that could not be sent on. The
        // writes are kept as the fields decide (the set, not the fallback, is the state: a later
        // write can bring the entry back under the bound), and each value the fallback hides is
        // reported as lost to the greatest write.
        let standsWhole = (try? content.requireEncodedSize()) == nil
        if standsWhole { content = greatest.entry! }

        var kept: [EntryWrite] = []
        var losses: [FieldLoss] = []
        for (index, write) in counted.enumerated() {
            var lost = FieldMask.none
            var beatenBy: VersionStamp?
            for field in write.fields.fields(among: members) {
                guard let winner = winners[slot(field)] else { continue }
                if winner == index {
                    if standsWhole && index != counted.count - 1 && !content.hasSameValue(as: write.entry!, in: field) {
                        lost.insert(field)
                        beatenBy = greatest.stamp
                    }
                    continue
                }
                // Answered once any write of the field had seen it: the value was in view when
                // the field was decided. (A greatest write that had seen both sides but did not
                // change the field leaves the loss standing: an edit of the text settles nothing
                // about the category.)
                guard !counted.contains(where: { $0.fields.contains(field) && !$0.stamp.isSameWrite(as: write.stamp) && $0.stamp.hasSeen(write.stamp) }) else { continue }
                lost.insert(field)
                let stamp = counted[winner].stamp
                if beatenBy.map({ $0.precedes(stamp) }) ?? true { beatenBy = stamp }
            }
            if let beatenBy { losses.append(FieldLoss(loser: write, fields: lost, winner: beatenBy)) }
            let held = winners.contains(index) || beatenBy != nil || isResolution(write)
            if index != counted.count - 1 && held { kept.append(write) }
        }
        if let floor {
            // Below the floor: an edit lost whole, until the writes that had seen it decide for
            // it (`answered`: a delete, or a write of each field it changed).
            for write in ordered where write.entry != nil && !write.isNoOpEdit && write.stamp.precedes(floor.stamp)
                && !floor.stamp.hasSeen(write.stamp) && !answered(write, in: ordered, members: members) {
                losses.append(FieldLoss(loser: write, fields: nil, winner: floor.stamp))
                kept.append(write)
            }
        }
        // A delete an update won against stays a conflict until the user settles it: a
        // resolution, or a delete again (a later ordinary edit, even one made after seeing the
        // delete, decides nothing about it).
        for delete in ordered where delete.entry == nil && !answered(delete, in: ordered, members: members) {
            losses.append(FieldLoss(loser: delete, fields: nil, winner: greatest.stamp))
        }
        // Every delete stays, and every resolution, so a delete's answer is never dropped while
        // the delete is held or may still arrive (the floor among them decides what counts).
        for write in ordered where (write.entry == nil || isResolution(write) && write.stamp.precedes(greatest.stamp))
            && !kept.contains(where: { $0.stamp.isSameWrite(as: write.stamp) }) {
            kept.append(write)
        }
        kept.sort { $0.stamp.precedes($1.stamp) }
        assert(kept.allSatisfy { $0.stamp.precedes(greatest.stamp) }, "the kept writes are below the latest")
        assert(content.id == greatest.entry!.id, "a merge keeps the entry's identity")
        return FieldMergeResult(latest: greatest, content: content, kept: kept, losses: losses, standsWhole: standsWhole)
    }
}

extension FieldMerge {
    /// A resolution: a write of every field made after seeing another device's writes (a new
    /// entry is a write of every field that has seen none). It may have decided for a delete,
    /// here or still on its way, so it is held for good, as every delete is: a delete's answer
    /// is never dropped while the delete may arrive or stays. Both are rare, one per decision.
    static func isResolution(_ write: EntryWrite) -> Bool {
        write.entry != nil && write.fields == .all && write.stamp.vector.entries.contains { $0.origin != write.stamp.origin }
    }

    /// Whether the writes that had seen `write` decided for it. A delete: a later delete or a
    /// resolution (a write of every field). An edit: a delete, or for each field it changed a
    /// write of that field (its writer had the value in view and chose). An edit of another field
    /// decides nothing, also on the edit's own device (whose later writes all have seen it).
    static func answered(_ write: EntryWrite, in writes: [EntryWrite], members: [String]) -> Bool {
        let seenBy = writes.filter { !$0.stamp.isSameWrite(as: write.stamp) && $0.stamp.hasSeen(write.stamp) }
        if write.entry == nil { return seenBy.contains { $0.entry == nil || $0.fields == .all } }
        if seenBy.contains(where: { $0.entry == nil }) { return true }
        return write.fields.fields(among: members).allSatisfy { field in seenBy.contains { $0.entry != nil && $0.fields.contains(field) } }
    }

    /// The extra members of `data` the writes hold or name, ascending: the fields beyond the
    /// document's eight that this merge decides. Empty, without allocating, for most entries.
    package static func extraMembers(of writes: [EntryWrite]) -> [String] {
        guard writes.contains(where: { !($0.entry?.data.extra.isEmpty ?? true) || !($0.fields.extra?.isEmpty ?? true) }) else { return [] }
        var names = Set<String>()
        for write in writes {
            names.formUnion(write.entry?.data.extra.keys ?? [:].keys)
            names.formUnion(write.fields.extra ?? [])
        }
        return names.sorted()
    }
}

extension EntryWrite {
    /// An edit that changed no field (a patch that set what stood): whatever it meets, it has
    /// nothing to lose, so it is never a conflict.
    var isNoOpEdit: Bool { entry != nil && fields.isEmpty }
}
