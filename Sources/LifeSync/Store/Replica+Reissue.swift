extension Replica {
    /// The tables whose rows are writes in their origins' logs, with how each says "deleted".
    private static let writeTables: [(table: String, deleted: String)] = [
        ("entries", "0"), ("tombstones", "1"), ("kept_writes", "deleted"), ("recordings", "deleted"),
    ]

    /// Moves our own `origin`'s writes above `fork` to the current incarnation (inside the
    /// caller's transaction, which started it), takes the origin's vector entry back to `fork`,
    /// and keeps the repair, with the digests of the writes given up, for peers that may hold
    /// them (PROTOCOL.md §7.2.3). Returns the writes moved.
    func reissue(_ origin: String, above fork: UInt64) throws -> [Reissue] {
        let current = identity.incarnation
        precondition(origin != current, "a forked origin is repaired under a new incarnation")
        let count = try replicaVector()[origin]
        let base = try currentSequence()
        let moved = try restamp(origin, above: fork, to: current, base: base, only: nil)
        let top = base + max(count, fork) - fork
        let followed = try carryLaterWrites(seeing: origin, above: fork, to: current, base: base, after: top)
        let sent = try database.rows("SELECT seq, digest FROM own_writes WHERE origin_no = ? AND seq > ? AND length(digest) = 32 ORDER BY seq",
                                     [try database.originParameter(origin), .counter(fork)]) {
            Seal.Member(sequence: UInt64(clamping: $0.int64(0)), digest: SHA256.Digest(bytes: $0.blob(1)))
        }
        if !sent.isEmpty, let signer {
            // A HISTORY carries 65,536 members at most: the latest, which a peer got last.
            var repair = History.Repair(nodeID: identity.nodeID, origin: origin, fork: fork, movedTo: current, base: base,
                                        members: Array(sent.suffix(Message.Limits.maximumHistoryProbes)), publicKey: signer.publicKey, signature: [])
            repair.signature = try signer.sign(repair.message)
            try keep(repair)
        }
        try database.run("DELETE FROM own_writes WHERE origin_no = ? AND seq > ?", [try database.originParameter(origin), .counter(fork)])
        try database.run("UPDATE replica_vector SET seq = ? WHERE origin = ?", [.counter(fork), .text(origin)])
        try database.run("UPDATE replica_vector SET seq = max(seq, ?) WHERE origin = ?", [.counter(top + UInt64(followed.count)), .text(current)])
        return moved + followed
    }

    /// The writes of our incarnations started after `origin` (this replica's own line,
    /// `own_incarnations`) that saw its forked writes — their vectors name it above `fork` —
    /// move to `target` after the re-issued ones (from `after` + 1), their vectors naming the
    /// re-issued writes' new numbers (PROTOCOL.md §7.2.3 step 4). Kept as they were, they named
    /// numbers that are the old history's now, read as having seen those writes (superseding
    /// them without a trace), and lost sight of the writes they had seen (restore seed 179 with
    /// hostile peers). Each keeps its HLC and content and still names its old number, so it
    /// supersedes the copy under that number wherever it went. An incarnation started on a line
    /// this replica lost (after the copy it was restored from) is bound to the same node but is
    /// not ours here: its writes saw the old history, and stay as they are.
    private func carryLaterWrites(seeing origin: String, above fork: UInt64, to target: String, base: UInt64, after top: UInt64) throws -> [Reissue] {
        // `target` among them: a write an earlier repair of this exchange moved there may name
        // this origin too.
        let later = try database.rows("SELECT origin FROM own_incarnations WHERE started > (SELECT started FROM own_incarnations WHERE origin = ?) ORDER BY started",
                                      [.text(origin)]) { $0.string(0) }
        var rows: [HeldWrite] = []
        for incarnation in later {
            rows += try heldWrites(of: incarnation, above: 0).filter { $0.stamp.vector[origin] > fork }.sorted { $0.stamp.sequence < $1.stamp.sequence }
        }
        var moved: [Reissue] = []
        for (offset, row) in rows.enumerated() {
            let sequence = top + UInt64(offset) + 1
            var vector = Replica.translated(row.stamp.vector, origin, above: fork, to: target, base: base)
            vector[target] = max(vector[target], sequence)
            let new = VersionStamp(hlc: row.stamp.hlc, origin: target, sequence: sequence, vector: vector, deleted: row.stamp.deleted)
            try move(row, to: new)
            moved.append(Reissue(id: row.id, old: row.stamp, new: new))
        }
        return moved
    }

    /// A vector as it reads once `origin`'s writes above `fork` moved to `target` from `base`:
    /// an entry above the fork names the fork and the moved writes' new numbers instead.
    package static func translated(_ vector: VersionVector, _ origin: String, above fork: UInt64, to target: String, base: UInt64) -> VersionVector {
        guard vector[origin] > fork else { return vector }
        var result = vector
        result[target] = max(result[target], base + (vector[origin] - fork))
        result[origin] = fork
        return result
    }

    /// Moves writes of `origin` above `fork` to `target`: write (origin, s) becomes (target,
    /// `base` + s − fork), and in every moved write's vector the numbers of `origin` above the
    /// fork become `target`'s the same way (a moved write has seen the moved writes it had seen,
    /// and nothing of the history that takes the old numbers). HLC, content and fields stay: a
    /// moved write orders where it was made, so it never overrides an edit made after it
    /// elsewhere. With `only`, just the rows whose digest is the one given for their number.
    /// Conflicts naming a moved write follow it; clashes above the fork go, and so does a loss
    /// between twins.
    func restamp(_ origin: String, above fork: UInt64, to target: String, base: UInt64,
                 only: [UInt64: SHA256.Digest]?) throws -> [Reissue] {
        // A clash above the fork (§8: another write held at the same number) was the two histories
        // meeting: the old write comes back as the origin's, the forked one under `target`.
        try database.run("DELETE FROM conflicts WHERE loser_origin = ?1 AND winner_origin = ?1 AND loser_seq = winner_seq AND loser_seq > ?2",
                         [.text(origin), .counter(fork)])
        var rows = try heldWrites(of: origin, above: fork)
        if let only {
            rows = try rows.filter { row in
                guard let wanted = only[row.stamp.sequence] else { return false }
                return try heldDigest(origin, row.stamp.sequence) == wanted
            }
        }
        var moved: [Reissue] = []
        for row in rows.sorted(by: { $0.stamp.sequence < $1.stamp.sequence }) {
            let sequence = base + (row.stamp.sequence - fork)
            let vector = Replica.translated(row.stamp.vector, origin, above: fork, to: target, base: base)
            let new = VersionStamp(hlc: row.stamp.hlc, origin: target, sequence: sequence, vector: vector, deleted: row.stamp.deleted)
            try move(row, to: new)
            moved.append(Reissue(id: row.id, old: row.stamp, new: new))
        }
        return moved
    }

    /// A write held in one of `writeTables`, as read for a move.
    private struct HeldWrite {
        var table: String
        var id: String
        var stamp: VersionStamp
    }

    /// The writes of `origin` above `sequence` held in any of `writeTables` (a damaged one is
    /// left where it is).
    private func heldWrites(of origin: String, above sequence: UInt64) throws -> [HeldWrite] {
        var rows: [HeldWrite] = []
        for (table, deleted) in Replica.writeTables {
            try database.forEachRow("SELECT hlc, origin_no, origin_seq, vector, \(deleted), id FROM \(table) WHERE origin_no = ? AND origin_seq > ?",
                                    [try database.originParameter(origin), .counter(sequence)]) { row in
                guard let stamp = try? self.stamp(from: row, deleted: row.int64(4) != 0, origin: origin) else { return }
                rows.append(HeldWrite(table: table, id: row.string(5), stamp: stamp))
            }
        }
        return rows
    }

    /// Moves one held write to the number and vector of `new` (same HLC and content). Its
    /// conflicts follow it; a twin already held at the new number (the same write, relayed
    /// under it before the repair) stands, and ours gives way.
    private func move(_ row: HeldWrite, to new: VersionStamp) throws {
        let old: [SQLValue] = [try database.originParameter(row.stamp.origin), .counter(row.stamp.sequence)]
        let conflictSide: [SQLValue] = [.text(row.stamp.origin), .counter(row.stamp.sequence)]
        let target: [SQLValue] = [try database.originParameter(new.origin), .counter(new.sequence)]
        let twinTable = try twin(of: row.id, hlc: row.stamp.hlc, at: new.origin, new.sequence)
        if let twinTable, twinTable != "kept_writes" || row.table == "kept_writes" {
            // Its twin holds the new number already: our copy gives way.
            try database.run("DELETE FROM \(row.table) WHERE origin_no = ? AND origin_seq = ?", old)
        } else {
            // A twin kept only beside the entry, while ours is the entry itself: the entry moves.
            if twinTable != nil { try database.run("DELETE FROM kept_writes WHERE origin_no = ? AND origin_seq = ?", target) }
            try database.run("UPDATE \(row.table) SET origin_no = ?, origin_seq = ?, vector = ? WHERE origin_no = ? AND origin_seq = ?",
                             [.integer(try database.originNumber(new.origin)), .counter(new.sequence),
                              .blob(try StoredVector.bytes(new.vector, own: new.own, in: database))] + old)
        }
        // A conflict already recorded under the new number (the twin's) is the same conflict.
        for side in ["loser", "winner"] {
            try database.run("UPDATE OR IGNORE conflicts SET \(side)_origin = ?, \(side)_seq = ? WHERE \(side)_origin = ? AND \(side)_seq = ?",
                             [.text(new.origin), .counter(new.sequence)] + conflictSide)
            try database.run("DELETE FROM conflicts WHERE \(side)_origin = ? AND \(side)_seq = ?", conflictSide)
        }
        // Twins that met before the repair did were two writes to the merge, and one lost to
        // the other; under one number they are one write, and a write never loses to itself.
        // (A clash, another write at the same number, differs in its entry, HLC or kind.)
        try database.run("""
            DELETE FROM conflicts WHERE entry_id = ?3 AND loser_origin = ?1 AND loser_seq = ?2 AND winner_origin = ?1 AND winner_seq = ?2
                AND loser_hlc = ?4 AND winner_hlc = ?4 AND loser_deleted = winner_deleted
            """, [.text(new.origin), .counter(new.sequence), .text(row.id), .integer(row.stamp.hlc.rawValue)])
    }

    /// The table holding `target`'s write `sequence` when it is the same write as ours (same ID
    /// and HLC): it reached us under its new number first, relayed before the repair did, and
    /// our copy under the old number is its twin. Nil when nothing holds that number. A
    /// different write there is a clash no repair explains: refused.
    /// - Throws: `ReplicaError.damaged` for that clash.
    private func twin(of id: String, hlc: HLCTimestamp, at target: String, _ sequence: UInt64) throws -> String? {
        guard let held = try recordHolding(origin: target, sequence: sequence) else { return nil }
        guard held.id == id, held.stamp.hlc == hlc else {
            throw ReplicaError.damaged("\(target)#\(sequence) holds \(held.id), not the write of \(id) a repair moves there")
        }
        for (table, _) in Replica.writeTables
        where try database.firstRow("SELECT 1 FROM \(table) WHERE origin_no = ? AND origin_seq = ?",
                                    [try database.originParameter(target), .counter(sequence)], { _ in true }) != nil {
            return table
        }
        return nil
    }

    func repairCount() throws -> Int64 {
        try database.firstRow("SELECT coalesce(max(id), 0) FROM history_repairs") { $0.int64(0) } ?? 0
    }

    /// The repairs kept after the one numbered `id`.
    func newRepairs(since id: Int64) throws -> [(origin: String, fork: UInt64)] {
        try database.rows("SELECT origin, fork FROM history_repairs WHERE id > ? ORDER BY id", [.integer(id)]) { ($0.string(0), UInt64(clamping: $0.int64(1))) }
    }

    /// Keeps a repair (ours, or a peer's we verified) to tell every peer that may need it.
    private func keep(_ repair: History.Repair) throws {
        var members = ByteWriter(capacity: repair.members.count * 40)
        Seal.write(repair.members, to: &members)
        try database.run("""
            INSERT OR IGNORE INTO history_repairs(node_id, origin, fork, moved_to, base, members, public_key, signature)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(repair.nodeID), .text(repair.origin), .counter(repair.fork), .text(repair.movedTo), .counter(repair.base),
                  .blob(members.bytes), .blob(repair.publicKey), .blob(repair.signature)])
    }

    /// The repairs we keep (ours and those we took in) whose given-up writes `peerVector` may
    /// hold (it holds the origin past the fork), as many as a HISTORY carries.
    func repairs(for peerVector: VersionVector) throws -> [History.Repair] {
        var room = Message.Limits.maximumHistoryProbes
        let sql = "SELECT node_id, origin, fork, moved_to, base, members, public_key, signature FROM history_repairs ORDER BY id"
        return try database.rows(sql) { row -> History.Repair? in
            guard peerVector[row.string(1)] > UInt64(clamping: row.int64(2)), let members = Seal.members(from: row.blob(5)),
                  !members.isEmpty, members.count <= room else { return nil }
            room -= members.count
            return History.Repair(nodeID: row.string(0), origin: row.string(1), fork: UInt64(clamping: row.int64(2)), movedTo: row.string(3),
                                  base: UInt64(clamping: row.int64(4)), members: members, publicKey: row.blob(6), signature: row.blob(7))
        }.compactMap { $0 }
    }

    /// The digests of our own `origin`'s writes we gave up in a repair, by number.
    func givenUp(_ origin: String) throws -> [UInt64: SHA256.Digest] {
        var result: [UInt64: SHA256.Digest] = [:]
        try database.forEachRow("SELECT members FROM history_repairs WHERE origin = ?", [.text(origin)]) { row in
            for member in Seal.members(from: row.blob(0)) ?? [] { result[member.sequence] = member.digest }
        }
        return result
    }

    /// Takes in repairs a peer tells of (inside the caller's transaction): each one signed by the
    /// node both its incarnations are bound to, with that node's key (§5.9.7 rule 2), whoever
    /// relays it. The writes it gave up that we hold move where it moved them, and the seals
    /// that vouched for them go. If we took the given-up history in at some number, our vector
    /// entry for the origin goes back below it (`coveredAfterRepair`): the history above comes
    /// back from whoever holds it, and what we hold of it below stays ours to send. We keep the
    /// repair to tell our own peers. A repair that does not check out is ignored.
    func takeRepairs(_ repairs: [History.Repair]) throws -> Int {
        let own = try ownOrigins()
        var moved = 0
        for repair in repairs where !own.contains(repair.origin) && repair.nodeID != identity.nodeID
            && Identifier.incarnation(repair.origin, isBoundTo: repair.nodeID) && Identifier.incarnation(repair.movedTo, isBoundTo: repair.nodeID)
            && signatureVerifier.isValid(signature: repair.signature, of: repair.message, publicKey: repair.publicKey) {
            do {
                try requireNodeKey(repair.publicKey, of: repair.nodeID, what: "a repair of origin \(repair.origin)", refusal: ReplicaError.forgedWrite)
            } catch ReplicaError.forgedWrite {
                continue
            }
            try keep(repair)
            try settleForks(by: repair)
            let given = Dictionary(repair.members.map { ($0.sequence, $0.digest) }, uniquingKeysWith: { a, _ in a })
            let restamped = try restamp(repair.origin, above: repair.fork, to: repair.movedTo, base: repair.base, only: given)
            moved += restamped.count
            var received: [Int64] = []
            // Which history we took at each number above the fork: the one of the first seal we
            // kept naming it (seals are kept as they vouch for a write new here, in that order).
            var tookGivenUp: [UInt64: Bool] = [:]
            try database.forEachRow("SELECT id, members FROM seals WHERE origin = ? AND last_seq > ? ORDER BY id",
                                    [.text(repair.origin), .counter(repair.fork)]) { row in
                let members = Seal.members(from: row.blob(1)) ?? []
                if members.contains(where: { given[$0.sequence] == $0.digest }) { received.append(row.int64(0)) }
                for member in members where member.sequence > repair.fork && tookGivenUp[member.sequence] == nil {
                    tookGivenUp[member.sequence] = given[member.sequence] == member.digest
                }
            }
            // A given-up write we held that no seal names (kept before seals existed) was taken too.
            for write in restamped where tookGivenUp[write.old.sequence] == nil { tookGivenUp[write.old.sequence] = true }
            for id in received { try database.run("DELETE FROM seals WHERE id = ?", [.integer(id)]) }
            guard let covered = Replica.coveredAfterRepair(fork: repair.fork, took: tookGivenUp) else { continue }
            try database.run("UPDATE replica_vector SET seq = min(seq, ?) WHERE origin = ?", [.counter(covered), .text(repair.origin)])
        }
        return moved
    }

    /// How far our vector may still cover an origin after its owner's repair (PROTOCOL.md §7.2.3
    /// step 1), from which history we took at each number above the fork (`took`: true for the
    /// given-up one): nil when we took none of the given-up writes (the vector stays), else the
    /// last number below the first given-up one at which we took the other history — the fork
    /// if none. A relay can hold the origin's old history and then a forked write relayed past
    /// its end (restore seed 5663 with two phones): going back to the fork, it forgot old writes
    /// no other replica held, and they were never sent again. Numbers nothing tells of (a write
    /// superseded before it reached us) count with the history around them: below the last
    /// number of the other history they were taken with it; after it, with the given-up one.
    static func coveredAfterRepair(fork: UInt64, took: [UInt64: Bool]) -> UInt64? {
        guard let firstGivenUp = took.filter(\.value).keys.min() else { return nil }
        return took.filter { !$0.value && $0.key < firstGivenUp }.keys.max() ?? fork
    }
}
