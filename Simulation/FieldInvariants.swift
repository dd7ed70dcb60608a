import LifeSync

/// Invariants 2 and 3 of DESIGN.md restated per field (the per-field merge), for one entry:
/// what the full replicas hold of it against every write the ledger saw made.
///
/// - No acknowledged write lost: for each field a write changed, its value stands, or the write
///   whose value stands had seen it (superseded), or it is kept as a conflict for that field, or
///   a write that is itself accounted for on that field or whole had seen it (an edit replaced by
///   a later edit or delete of the same node that lost); a delete, which holds no field, once
///   any write accounted for had seen it. A deleted entry is held to the whole-entry rule.
/// - Causality: a write never loses a field it changed to a write it had seen; and the entry's
///   latest write is never one some other write had seen (no resurrection by an older delete).
struct FieldInvariants {
    let id: String
    let writes: [WriteLedger.Write]
    /// The per-field merge of what the reference full replica holds of the entry.
    let result: FieldMergeResult
    /// Kept losers, by "id|origin|seq": the fields they lost (nil: whole).
    let kept: [String: FieldMask?]

    func violations() -> [String] {
        var found: [String] = []
        let final = result.latest.stamp
        for write in writes {
            let w = write.stamp
            if !w.isSame(final) && w.vector[final.origin] >= final.sequence {
                let kind = w.deleted && !final.deleted ? "no resurrection" : "causality"
                found.append("\(kind): \(id): the write \(w.label) on \(write.node) had seen the final version \(final.label) but lost to it")
            }
        }
        // A unit is a write and one field it changed (nil: the whole write, for deletes and
        // deleted entries). An edit that changed nothing (a no-op patch) has nothing to lose.
        let members = FieldMerge.extraMembers(of: writes.map(\.write))
        let units: [(write: WriteLedger.Write, field: EntryField?)] = writes.flatMap { write -> [(write: WriteLedger.Write, field: EntryField?)] in
            if write.stamp.deleted { return [(write, nil)] }
            if write.write.fields.isEmpty { return [] }
            return result.content == nil ? [(write, nil)] : write.write.fields.fields(among: members).map { (write, Optional($0)) }
        }
        func winner(_ field: EntryField?) -> VersionStamp { field.flatMap { result.winner(of: $0) } ?? final }
        func keptAsLoser(_ w: VersionStamp, _ field: EntryField?) -> Bool {
            guard let lost = kept["\(id)|\(w.origin)|\(w.sequence)"] else { return false }
            guard let lost, let field else { return true }
            return lost.contains(field)
        }
        var accounted = Set<String>()
        for unit in units {
            let w = unit.write.stamp, standing = winner(unit.field)
            if let field = unit.field, !w.isSame(standing), w.vector[standing.origin] >= standing.sequence {
                found.append("causality: \(id): the write \(w.label) on \(unit.write.node) changed \(field.name) after seeing \(standing.label), whose value stands")
            }
            if w.isSame(standing) || standing.vector[w.origin] >= w.sequence || keptAsLoser(w, unit.field) {
                accounted.insert(key(w, unit.field))
            }
        }
        var grew = true
        while grew {
            grew = false
            for unit in units where !accounted.contains(key(unit.write.stamp, unit.field)) {
                let w = unit.write.stamp
                // By a write accounted for on this field, or whole (a delete made after seeing it).
                // A delete holds no field: any accounted write made after seeing it answered it
                // (an edit of the text by someone who saw the entry deleted and kept it alive).
                let seenByAccounted = units.contains {
                    ($0.field == unit.field || $0.field == nil || w.deleted) && accounted.contains(key($0.write.stamp, $0.field))
                        && $0.write.stamp.vector[w.origin] >= w.sequence
                }
                if seenByAccounted { accounted.insert(key(w, unit.field)); grew = true }
            }
        }
        for unit in units where !accounted.contains(key(unit.write.stamp, unit.field)) {
            let w = unit.write.stamp, standing = winner(unit.field)
            found.append("no acknowledged write lost: \(id): \(unit.field.map { "the \($0.name) of " } ?? "")the write \(w.label) on \(unit.write.node) at \(unit.write.time) ms is neither what stands (\(standing.label)\(final.deleted ? " delete" : ""), vector \(standing.vector.entries.map { "\($0.origin.prefix(13))=\($0.sequence)" })), nor seen by it, nor kept in a conflicts table")
        }
        return found
    }

    private func key(_ w: VersionStamp, _ field: EntryField?) -> String { "\(w.origin)#\(w.sequence)|\(field?.name ?? "*")" }
}

extension VersionStamp {
    fileprivate func isSame(_ other: VersionStamp) -> Bool { origin == other.origin && sequence == other.sequence }
    fileprivate var label: String { "\(origin.prefix(13))#\(sequence)" }
}
