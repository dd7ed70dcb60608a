/// One write of an entry as the per-field merge sees it: its stamp, the fields it changed, and
/// the whole entry as its writer left it (nil for a delete).
public struct EntryWrite: Equatable, Sendable {
    public var stamp: VersionStamp
    public var fields: FieldMask
    public var entry: LogEntry?

    public init(stamp: VersionStamp, fields: FieldMask = .all, entry: LogEntry?) {
        precondition(stamp.deleted == (entry == nil), "a write carries an entry exactly when it is not a delete")
        self.stamp = stamp
        self.fields = entry == nil ? .all : fields
        self.entry = entry
    }
}

/// A write that lost, for the conflicts table: `fields` are the fields it lost to a concurrent
/// write that had not seen it (nil: it lost whole, to or against a delete).
public struct FieldLoss: Equatable, Sendable {
    public var loser: EntryWrite
    public var fields: FieldMask?
    public var winner: VersionStamp
}

/// What a set of writes of one entry makes of it.
public struct FieldMergeResult: Equatable, Sendable {
    /// The write the record's row carries: the greatest live write, or when the entry is
    /// deleted, the greatest delete.
    public var latest: EntryWrite
    /// The entry as it reads (nil: deleted).
    public var content: LogEntry?
    /// The other writes that still decide part of it, ascending: each earlier write that wins a
    /// field, and the greatest delete the entry outlived (the floor). Everything else can never
    /// matter again and is dropped.
    public var kept: [EntryWrite]
    public var losses: [FieldLoss]
    /// The fields together passed the size an entry may take, so `content` is the latest write's
    /// own entry whole (the kept writes still decide the fields once a later write allows).
    public var standsWhole = false

    /// Whether `write` is part of the result (as the latest or kept).
    public func holds(_ stamp: VersionStamp) -> Bool {
        latest.stamp.isSameWrite(as: stamp) || kept.contains { $0.stamp.isSameWrite(as: stamp) }
    }

    /// The write whose value of `field` stands (nil when the entry is deleted): the greatest
    /// held write that changed it, or the latest when none did.
    public func winner(of field: EntryField) -> VersionStamp? {
        guard content != nil else { return nil }
        guard !standsWhole else { return latest.stamp }
        let live = (kept + [latest]).filter { $0.entry != nil }
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
public enum FieldMerge {
    public static func merge(_ writes: [EntryWrite]) -> FieldMergeResult {
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
            // A concurrent delete that lost is a loser too (whole-entry rule, as before fields).
            // An edit that changed nothing (a no-op patch) lost nothing.
            let losses = ordered.filter { !$0.stamp.isSameWrite(as: delete.stamp) && !delete.stamp.hasSeen($0.stamp) && !$0.isNoOpEdit }
                .map { FieldLoss(loser: $0, fields: nil, winner: delete.stamp) }
            return FieldMergeResult(latest: delete, content: nil, kept: [], losses: losses)
        }
        let counted = ordered.filter { write in write.entry != nil && (floor.map { $0.stamp.precedes(write.stamp) } ?? true) }
        var content = greatest.entry!
        var winners: [Int?] = Array(repeating: nil, count: EntryField.allCases.count)
        for field in EntryField.allCases {
            guard let index = counted.lastIndex(where: { $0.fields.contains(field) }) else { continue }
            winners[field.rawValue] = index
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
        // An edit below the floor is settled only by a greatest write of every field that had
        // seen both (a resolution): any other leaves some field the edit changed unchosen.
        func settled(_ loser: VersionStamp, _ winner: VersionStamp) -> Bool {
            greatest.fields == .all && greatest.stamp.hasSeen(loser) && greatest.stamp.hasSeen(winner)
        }
        for (index, write) in counted.enumerated() {
            let wins = winners.contains(index)
            if index != counted.count - 1 && wins { kept.append(write) }
            var lost = FieldMask.none
            var beatenBy: VersionStamp?
            for field in write.fields.fields {
                guard let winner = winners[field.rawValue] else { continue }
                if winner == index {
                    if standsWhole && index != counted.count - 1 && !content.hasSameValue(as: write.entry!, in: field) {
                        lost.insert(field)
                        beatenBy = greatest.stamp
                    }
                    continue
                }
                let stamp = counted[winner].stamp
                // (A greatest write that had seen both sides but did not change the field leaves
                // the loss standing: an edit of the text settles nothing about the category.)
                guard !stamp.hasSeen(write.stamp) else { continue }
                lost.insert(field)
                if beatenBy.map({ $0.precedes(stamp) }) ?? true { beatenBy = stamp }
            }
            if let beatenBy { losses.append(FieldLoss(loser: write, fields: lost, winner: beatenBy)) }
        }
        if let floor {
            kept.insert(floor, at: 0)
            for write in ordered where write.entry != nil && !write.isNoOpEdit && write.stamp.precedes(floor.stamp)
                && !floor.stamp.hasSeen(write.stamp) && !settled(write.stamp, floor.stamp) {
                losses.append(FieldLoss(loser: write, fields: nil, winner: floor.stamp))
            }
        }
        for delete in ordered where delete.entry == nil && !greatest.stamp.hasSeen(delete.stamp) {
            losses.append(FieldLoss(loser: delete, fields: nil, winner: greatest.stamp))
        }
        assert(kept.allSatisfy { $0.stamp.precedes(greatest.stamp) }, "the kept writes are below the latest")
        assert(content.id == greatest.entry!.id, "a merge keeps the entry's identity")
        return FieldMergeResult(latest: greatest, content: content, kept: kept, losses: losses, standsWhole: standsWhole)
    }
}

extension EntryWrite {
    /// An edit that changed no field (a patch that set what stood): whatever it meets, it has
    /// nothing to lose, so it is never a conflict.
    var isNoOpEdit: Bool { entry != nil && fields.isEmpty }
}
