/// The conflicts table: losing concurrent versions kept as backup, and how a user settles them.
///
/// A record is settled — and cleared — once the entry's version here was written by someone who
/// had seen both sides (its vector covers the loser and the winner). A resolution is such a
/// write, made on purpose: its vector takes in every loser of the entry. Because the rule reads
/// only the version that arrives, the resolution clears the record on every replica it reaches,
/// with nothing new on the wire; a replica that receives the resolution before the versions it
/// settles records no conflict in the first place (it wins over both and has seen both).
///
/// ```swift
/// for conflict in try replica.conflicts() { print(conflict.entryID, conflict.fields) }
/// try replica.resolveConflict(entryID: id, keep: .loser, field: "data.text")
/// ```
extension Replica {
    /// Keeps a losing version. Recording the same loser twice is a no-op (merge is idempotent).
    /// `fields`: the fields the loser lost, when it lost only some (per-field merge); its
    /// `loserEntry` then differs from what stood in those fields only.
    func recordConflict(id: String, loser: VersionStamp, loserEntry: LogEntry?, winner: VersionStamp, fields: FieldMask? = nil) throws {
        try database.run("""
            INSERT OR IGNORE INTO conflicts(entry_id, loser_origin, loser_seq, loser_hlc, loser_deleted, loser_entry,
                winner_origin, winner_seq, winner_hlc, winner_deleted, detected_at, fields)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(id), .text(loser.origin), .counter(loser.sequence), .integer(loser.hlc.rawValue),
                  .integer(loser.deleted ? 1 : 0), loserEntry.map { .text($0.json.canonicalText) } ?? .null,
                  .text(winner.origin), .counter(winner.sequence), .integer(winner.hlc.rawValue),
                  .integer(winner.deleted ? 1 : 0), .text(now.iso8601), fields?.stored ?? .null])
    }

    /// Keeps what a write lost in a merge. A write that lost only some fields is kept as the
    /// entry as it stands with those fields set to the write's values: only what it lost is the
    /// backup. When the same write loses another field later, its record grows to hold both.
    /// A whole loss takes the place of a record of some fields of the same write: the write
    /// lost everything now (it fell below a delete it had not seen), and a record that kept
    /// only its earlier loss would be the only copy of it, short of the rest.
    func recordLoss(id: String, _ loss: FieldLoss, standing: LogEntry?) throws {
        let key: [SQLValue] = [.text(id), .text(loss.loser.stamp.origin), .counter(loss.loser.stamp.sequence)]
        guard var lost = loss.fields, let loser = loss.loser.entry, var kept = standing else {
            try database.run("DELETE FROM conflicts WHERE entry_id = ? AND loser_origin = ? AND loser_seq = ? AND fields IS NOT NULL", key)
            return try recordConflict(id: id, loser: loss.loser.stamp, loserEntry: loss.loser.entry, winner: loss.winner)
        }
        let recorded = try database.firstRow("SELECT fields FROM conflicts WHERE entry_id = ? AND loser_origin = ? AND loser_seq = ?", key) { row in
            try Replica.fieldMask(row, 0)
        }
        if let recorded {
            guard !lost.isSubset(of: recorded) else { return }
            lost = lost.union(recorded)
            try database.run("DELETE FROM conflicts WHERE entry_id = ? AND loser_origin = ? AND loser_seq = ?", key)
        }
        for field in lost.fields { kept.take(field, from: loser) }  // a loss names its extra members
        try recordConflict(id: id, loser: loss.loser.stamp, loserEntry: kept, winner: loss.winner, fields: lost)
    }

    /// The kept losing versions, newest detection first; `entryID` narrows them to one entry.
    package func conflicts(entryID: String? = nil) throws -> [Conflict] {
        var conflicts = try database.rows("""
            SELECT entry_id, loser_origin, loser_seq, loser_hlc, loser_deleted, loser_entry,
                   winner_origin, winner_seq, winner_hlc, winner_deleted, detected_at, fields
            FROM conflicts WHERE ?1 IS NULL OR entry_id = ?1 ORDER BY detected_at DESC, entry_id, loser_origin, loser_seq
            """, [entryID.map { .text($0) } ?? .null]) { row in
            let loserEntry = try row.optionalString(5).map { text in
                try LogEntry.validated(from: try JSONValue.parse(text), defaults: entryDefaults(requireTimestamp: true))
            }
            return Conflict(
                entryID: row.string(0),
                loser: VersionStamp(hlc: try row.hlc(3, "loser_hlc"), origin: row.string(1),
                                    sequence: try row.counter(2, upTo: Message.Limits.maximumSequence, "loser_seq"), vector: VersionVector(), deleted: row.int64(4) != 0),
                loserEntry: loserEntry,
                winner: VersionStamp(hlc: try row.hlc(8, "winner_hlc"), origin: row.string(6),
                                     sequence: try row.counter(7, upTo: Message.Limits.maximumSequence, "winner_seq"), vector: VersionVector(), deleted: row.int64(9) != 0),
                detectedAt: try Timestamp(iso8601: row.string(10)),
                lostFields: row.isNull(11) ? nil : try Replica.fieldMask(row, 11))
        }
        for index in conflicts.indices {
            let id = conflicts[index].entryID
            conflicts[index].current = try storedVersion(id: id)?.place == .live ? try entry(id: id) : nil
        }
        return conflicts
    }

    /// The node and role behind each origin this replica knows, to name the devices of a conflict.
    package func devices() throws -> [String: Conflict.Device] {
        var devices: [String: Conflict.Device] = [:]
        for known in try knownOrigins() {
            if let nodeID = known.nodeID { devices[known.origin] = Conflict.Device(nodeID: nodeID, role: known.role, name: try peerName(for: nodeID)) }
        }
        return devices
    }

    /// Settles the conflicts of `entryID` with a new local version, causally after every side:
    /// what stands now (`.winner`), the kept loser (`.loser`), or — with `field` — what stands
    /// now with that one field taken from the loser. `loserOrigin` picks the loser when the
    /// entry has several (an origin, or the node ID behind it). The version replicates, and it
    /// clears the records here and wherever it arrives. Returns its stamp.
    @discardableResult
    package func resolveConflict(entryID: String, keep side: ConflictSide, field: String? = nil, loserOrigin: String? = nil) throws -> VersionStamp {
        try writeTransaction {
            let records = try conflicts(entryID: entryID)
            guard !records.isEmpty else { throw ReplicaError.invalid(ValidationError(field: "ENTRY", reason: "no conflict is recorded for \(entryID)")) }
            guard let current = try storedVersion(id: entryID) else { throw ReplicaError.notFound(id: entryID) }
            let standing = records[0].current
            var content: LogEntry?
            switch side {
            case .winner:
                guard field == nil else { throw ReplicaError.invalid(ValidationError(field: "--field", reason: "takes a field from the loser; it goes with --keep loser")) }
                content = standing
            case .loser:
                let loser = try pickLoser(records, naming: loserOrigin)
                if let field {
                    guard let standing, let loserEntry = loser.loserEntry else {
                        throw ReplicaError.invalid(ValidationError(field: "--field", reason: "one side of this conflict is a delete; keep a whole side instead"))
                    }
                    do throws(ValidationError) { content = try standing.taking(field, from: loserEntry, defaults: entryDefaults()) } catch { throw ReplicaError.invalid(error) }
                } else if let lost = loser.lostFields, var kept = standing, let loserEntry = loser.loserEntry {
                    // It lost only these fields: keeping it takes them, and leaves what was written since.
                    for field in lost.fields { kept.take(field, from: loserEntry) }
                    content = kept
                } else {
                    content = loser.loserEntry
                }
            }
            // Every side this resolution settles, so its vector says it saw them all.
            var seen = VersionVector()
            for record in records {
                for stamp in [record.loser, record.winner] where seen[stamp.origin] < stamp.sequence { seen[stamp.origin] = stamp.sequence }
            }
            let settled = records.reduce(FieldMask.none) { $0.union($1.lostFields ?? .all) }
            let stamp = try writeLocal(id: entryID, entry: content, previous: current, alsoSeen: seen, restamps: settled)
            let unsettled = try conflicts(entryID: entryID)
            precondition(unsettled.isEmpty, "a resolution has seen every side it settles")
            return stamp
        }
    }

    /// The loser a resolution keeps: the only one, or the one `naming` picks (its origin, or
    /// the node ID behind it).
    private func pickLoser(_ records: [Conflict], naming: String?) throws -> Conflict {
        guard let naming else {
            guard records.count == 1 else {
                let devices = try devices()
                let names = records.map { devices[$0.loser.origin]?.nodeID ?? $0.loser.origin }
                throw ReplicaError.invalid(ValidationError(field: "--loser", reason: "\(records[0].entryID) has \(records.count) losing versions; name one (\(names.joined(separator: ", ")))"))
            }
            return records[0]
        }
        let devices = try devices()
        let matching = records.filter { $0.loser.origin == naming || devices[$0.loser.origin]?.nodeID == naming }
        guard let loser = matching.first else {
            throw ReplicaError.invalid(ValidationError(field: "--loser", reason: "no losing version of \(records[0].entryID) comes from \(naming)"))
        }
        return loser
    }

    /// Forgets the conflicts of `entryID` on this replica only (what stands stays, nothing is
    /// written, other replicas keep their records). Returns how many went.
    @discardableResult
    public func dismissConflicts(entryID: String) throws -> Int {
        try database.run("DELETE FROM conflicts WHERE entry_id = ?", [.text(entryID)])
        let removed = database.changes
        guard removed > 0 else { throw ReplicaError.invalid(ValidationError(field: "ENTRY", reason: "no conflict is recorded for \(entryID)")) }
        return removed
    }

    /// Brings entry `id`'s records in line with a merge of `writes` (what the replica held of it
    /// and the write that arrived, `arriving`): each loss the arriving write takes part in is
    /// recorded (returns how many); a record whose loser was among `writes` says exactly what
    /// the merge says it still lost, and goes once it lost nothing (PROTOCOL.md §8: a loser is
    /// held, and travels, as long as it is a conflict, so every replica that holds the same writes
    /// holds the same records). A record whose loser was not among them — a clash, or a record
    /// from before losers were held — is settled by the rule of `clearSettledConflicts`.
    @discardableResult
    func reconcileConflicts(id: String, _ result: FieldMergeResult, writes: [EntryWrite], arriving: VersionStamp) throws -> Int {
        var recorded = 0
        for loss in result.losses where loss.involves(arriving, in: result) {
            try recordLoss(id: id, loss, standing: result.content)
            recorded += 1
        }
        let records = try database.rows("SELECT loser_origin, loser_seq, fields FROM conflicts WHERE entry_id = ?", [.text(id)]) { row in
            (row.string(0), UInt64(clamping: row.int64(1)), row.isNull(2) ? nil : try Replica.fieldMask(row, 2))
        }
        for (origin, sequence, fields) in records where writes.contains(where: { $0.stamp.origin == origin && $0.stamp.sequence == sequence }) {
            let key: [SQLValue] = [.text(id), .text(origin), .counter(sequence)]
            guard let loss = result.losses.first(where: { $0.loser.stamp.origin == origin && $0.loser.stamp.sequence == sequence }) else {
                try database.run("DELETE FROM conflicts WHERE entry_id = ? AND loser_origin = ? AND loser_seq = ?", key)
                continue
            }
            if let fields, let lost = loss.fields, !fields.isSubset(of: lost) {
                try database.run("UPDATE conflicts SET fields = ? WHERE entry_id = ? AND loser_origin = ? AND loser_seq = ?",
                                 [fields.intersection(lost).stored] + key)
            }
        }
        try clearSettledConflicts(id: id, by: result.latest.stamp, fields: result.latest.fields, sparing: writes)
        return recorded
    }

    /// Settles what the version stamped `stamp`, which changed `fields`, settles of `id`'s
    /// records: it had seen both the loser and the winner. A record of some fields gives up only
    /// the fields the version changed (an edit of the text says nothing about a lost category),
    /// and goes once none is left: a loser that wins no field is dropped from the entry's writes,
    /// so what it lost of another field lives on in its record alone. A whole record goes: of a
    /// delete, with any such version; of an edit (one that fell below a delete), only with a
    /// version of every field (a resolution), for the record does not say which fields the edit
    /// changed. One index probe when there are none (the common case).
    func clearSettledConflicts(id: String, by stamp: VersionStamp, fields: FieldMask, sparing held: [EntryWrite] = []) throws {
        let sides = try database.rows("SELECT loser_origin, loser_seq, winner_origin, winner_seq, fields, loser_deleted FROM conflicts WHERE entry_id = ?", [.text(id)]) { row in
            (row.string(0), UInt64(clamping: row.int64(1)), row.string(2), UInt64(clamping: row.int64(3)),
             row.isNull(4) ? nil : try Replica.fieldMask(row, 4), row.int64(5) != 0)
        }
        for (loserOrigin, loserSequence, winnerOrigin, winnerSequence, lost, loserDeleted) in sides
        where !held.contains(where: { $0.stamp.origin == loserOrigin && $0.stamp.sequence == loserSequence })
            && stamp.vector[loserOrigin] >= loserSequence && stamp.vector[winnerOrigin] >= winnerSequence
            && (lost ?? .all).intersects(fields) && (lost != nil || loserDeleted || fields == .all) {
            let key: [SQLValue] = [.text(id), .text(loserOrigin), .counter(loserSequence)]
            let left = lost.map { $0.removing(fields) } ?? .none
            if left.isEmpty {
                try database.run("DELETE FROM conflicts WHERE entry_id = ? AND loser_origin = ? AND loser_seq = ?", key)
            } else {
                try database.run("UPDATE conflicts SET fields = ? WHERE entry_id = ? AND loser_origin = ? AND loser_seq = ?",
                                 [left.stored] + key)
            }
            assert(left.isSubset(of: lost ?? .none) && !left.intersects(fields), "a settled field leaves the record")
        }
    }
}
