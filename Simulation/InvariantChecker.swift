import LifeSync

extension Simulator {
    /// Converged: every full replica is up and holds the same state, and each node's own writes
    /// have reached every full replica — each is there, or absorbed by what is there (superseded,
    /// or beaten by a concurrent winner: receiving it would change nothing).
    ///
    /// A replica's vector is not the proof: it advances only as far as delivered data justifies
    /// (`DeltaSync.admit`), and a write a relay no longer holds (superseded, or its loss answered)
    /// never travels on, so nothing delivered can prove it to the replicas behind that relay.
    func checkConvergence() -> Bool { convergenceGap() == nil }

    /// What keeps the run from having converged, in words for the liveness violation; nil once
    /// it has.
    func convergenceGap() -> String? {
        let full = names.filter { nodes[$0]!.role.isFullReplica }
        if full.isEmpty { return "no full replica" }
        if let down = full.first(where: { !network.isUp($0) }) { return "\(down) is down" }
        let replicas = full.map { nodes[$0]!.replica! }
        guard let hashes = try? replicas.map({ try $0.canonicalHash() }) else { return "a full replica cannot be read" }
        if Set(hashes).count != 1 { return "the full replicas differ: \(differences(full))" }
        // Every honest loser is listed alike everywhere; a clash a hostile peer forged is kept
        // where it was found (it never travels: its (origin, sequence) belongs to another write).
        let honest = Set(ledger.writes.map { "\($0.stamp.origin)#\($0.stamp.sequence)" })
        let conflictSets = replicas.map { (try? $0.conflicts()) ?? [] }
        // Twins a history repair renumbered are one write again, which never lost to itself. (A
        // clash, another write at the same number, is another entry's, or differs in HLC or kind.)
        for (index, conflicts) in conflictSets.enumerated() {
            let name = full[index], replica = replicas[index]
            if let twin = conflicts.first(where: { conflict in
                conflict.loser.origin == conflict.winner.origin && conflict.loser.sequence == conflict.winner.sequence
                    && conflict.loser.hlc == conflict.winner.hlc && conflict.loser.deleted == conflict.winner.deleted
                    && ((try? replica.entryWrites(id: conflict.entryID)) ?? []).contains { $0.stamp.origin == conflict.loser.origin && $0.stamp.sequence == conflict.loser.sequence && $0.stamp.hlc == conflict.loser.hlc }
            }) {
                return "\(name) lists \(twin.loser.origin.prefix(13))#\(twin.loser.sequence) as having lost \(twin.entryID) to itself"
            }
        }
        let conflictLists = conflictSets.map { conflicts in
            conflicts.filter { honest.contains("\($0.loser.origin)#\($0.loser.sequence)") }.map { "\($0.entryID)|\($0.loser.origin.prefix(13))#\($0.loser.sequence)|\($0.lostFields.map { $0.fields.map(\.name).joined(separator: ",") } ?? "whole")" }.sorted()
        }
        if let odd = zip(full, conflictLists).first(where: { $0.1 != conflictLists[0] }) {
            let missing = Set(conflictLists[0]).symmetricDifference(odd.1).sorted().prefix(3)
            return "the conflicts differ between \(full[0]) and \(odd.0): \(missing.joined(separator: ", "))"
        }
        guard let vectors = try? replicas.map({ try $0.replicaVector() }) else { return "a replica vector cannot be read" }
        for name in names {
            guard let replica = nodes[name]?.replica ?? (try? Replica(path: nodes[name]!.path, clock: nodes[name]!.clock, random: nodeRandom)),
                  let own = try? replica.ownOrigins(), let vector = try? replica.replicaVector() else { return "\(name) cannot be read" }
            for origin in own where vector[origin] > 0 {
                for (other, otherVector) in zip(full, vectors) where otherVector[origin] < vector[origin] {
                    if let write = firstUnabsorbed(origin: origin, above: otherVector[origin], by: nodes[other]!.replica!) {
                        let held = (try? nodes[other]!.replica!.versionStamp(id: write.id)).map { "\($0.origin.prefix(13))#\($0.sequence)" } ?? "nothing"
                        return "\(name)'s write \(origin.prefix(13))#\(write.stamp.sequence) to \(write.id) has not reached \(other), which holds \(held) there (its vector: \(otherVector[origin]))"
                    }
                }
            }
        }
        if let gap = forkedWritesGap(full: full) { return gap }
        return recordingsGap()
    }

    /// A device restored whole writes again under sequence numbers its peers already hold for
    /// other writes, so their vectors look ahead of it until it repairs its history at a handshake
    /// (PROTOCOL.md §7.2.3): what it wrote since the restore is checked write by write instead.
    /// (Found by `simulate --restores --seed 4289`: the run was called converged while a
    /// restored watch still held five writes nobody else had.)
    private func forkedWritesGap(full: [String]) -> String? {
        for name in names {
            guard let since = nodes[name]?.restoredAt else { continue }
            // One the writer replaced never travels: its replacement, checked too, stands for it.
            for write in ledger.writes where write.node == name && write.time >= since && !supersededAtWriter(write) {
                for other in full where !absorbed(write, by: nodes[other]!.replica!) {
                    return "\(name)'s write \(write.stamp.origin.prefix(13))#\(write.stamp.sequence) to \(write.id) since its restore has not reached \(other)"
                }
            }
        }
        return nil
    }

    func supersededAtWriter(_ write: WriteLedger.Write) -> Bool {
        guard let held = try? nodes[write.node]?.replica?.versionStamp(id: write.id) else { return false }
        return !(held.origin == write.stamp.origin && held.sequence == write.stamp.sequence) && held.vector[write.stamp.origin] >= write.stamp.sequence
    }

    func keptAsConflict(_ write: WriteLedger.Write) -> Bool {
        let versions = ledger.writes(to: write.id)
        return nodes.values.contains { node in
            ((try? node.replica?.conflicts()) ?? []).contains { conflict in
                guard conflict.entryID == write.id else { return false }
                if conflict.loser.origin == write.stamp.origin && conflict.loser.sequence == write.stamp.sequence { return true }
                // The loser's own vector is not kept in the conflicts table; the ledger has it.
                return versions.contains {
                    $0.stamp.origin == conflict.loser.origin && $0.stamp.sequence == conflict.loser.sequence
                        && $0.stamp.vector[write.stamp.origin] >= write.stamp.sequence
                }
            }
        }
    }

    /// The first few records whose versions differ between the full replicas.
    func differences(_ full: [String]) -> String {
        var versions: [String: [String]] = [:]
        for name in full {
            for id in ledger.ids {
                let stamp = try? nodes[name]!.replica!.versionStamp(id: id)
                versions[id, default: []].append(stamp.map { "\($0.origin.prefix(13))#\($0.sequence)\($0.deleted ? " deleted" : "")" } ?? "none")
            }
        }
        let differing = versions.filter { Set($0.value).count > 1 }.sorted { $0.key < $1.key }.prefix(3)
        if differing.isEmpty { return "(not in a ledger record: recordings, conflicts or a hostile-only record)" }
        return differing.map { "\($0.key): \(zip(full, $0.value).map { "\($0)=\($1)" }.joined(separator: ", "))" }.joined(separator: "; ")
    }

    /// The first ledger write of `origin` above `sequence` that would still change something at
    /// `replica`, if any.
    func firstUnabsorbed(origin: String, above sequence: UInt64, by replica: Replica) -> WriteLedger.Write? {
        ledger.writes.first { write in
            guard write.stamp.origin == origin, write.stamp.sequence > sequence else { return false }
            return !absorbed(write, by: replica)
        }
    }

    /// Whether receiving `write` would change nothing at `replica`: the per-field merge of what
    /// the replica holds of the entry, with and without it, is the same.
    func absorbed(_ write: WriteLedger.Write, by replica: Replica) -> Bool {
        guard let held = try? replica.entryWrites(id: write.id), !held.isEmpty else { return false }
        if held.contains(where: { $0.stamp.origin == write.stamp.origin && $0.stamp.sequence == write.stamp.sequence && $0.stamp.hlc == write.stamp.hlc }) { return true }
        let before = FieldMerge.merge(held), after = FieldMerge.merge(held + [write.write])
        guard after.latest == before.latest && after.content == before.content && after.kept == before.kept else { return false }
        // A concurrent loser counts once a replica lists it (it is held and travels on, so the
        // convergence check then wants it on every full replica), or once its writer replaced it
        // (the replacement travels instead); until then it is still on its way.
        let lost = after.losses.contains { $0.loser.stamp.origin == write.stamp.origin && $0.loser.stamp.sequence == write.stamp.sequence }
        return !lost || keptAsConflict(write) || supersededAtWriter(write)
    }

    /// Which recording is not settled yet, or nil when every live recording's bytes are on every
    /// full replica and every recording a watch still holds is on a phone too — unless a user
    /// deleted it: a watch receives no metadata, so it never learns of the delete and keeps its
    /// copy (by design: a peer's FAILURE `deleted` removes nothing).
    ///
    /// A watch may well keep a recording a phone holds: it lets go only when it delivered every
    /// byte itself in a session that ended with the phone's CONFIRM, and a phone's mere "I have it"
    /// (a CONFIRM with no bytes sent) is recorded nowhere. So the truth is checked here, the
    /// phone's storage, not the watch's bookkeeping.
    func recordingsGap() -> String? {
        for name in names {
            guard let node = nodes[name], let replica = node.replica, let statuses = try? replica.recordingStatuses() else { return "\(name)'s recordings cannot be read" }
            for status in statuses where !status.deleted {
                if node.role.isFullReplica && status.file != .present && !bytesDeletedByUser(status.recording)
                    && !bytesStayOnWatch(status.recording.id) {
                    return "\(name) lacks the bytes of recording \(status.recording.id)"
                }
                if node.role == .watch && status.file == .present && !phoneHoldsBytes(of: status.recording) && hasPhone
                    && !userDeletedRecordings.contains(status.recording.id) { return "\(name) holds recording \(status.recording.id), and no phone does" }
                if node.role == .watch && !hasPhone, let other = names.first(where: { other in
                    nodes[other]!.role.isFullReplica && ((try? nodes[other]!.replica?.recording(id: status.recording.id)) ?? nil) == nil
                }) { return "\(other) lacks the record of recording \(status.recording.id), which \(name) holds" }
            }
        }
        return nil
    }
}

extension Simulator {
    var hasPhone: Bool { nodes.values.contains { $0.role == .phone } }

    /// A watch sends recording bytes to phones only (`RolePolicy.recordingBytesFlow`): in a
    /// household without a phone, a recording made on a watch stays there, and nothing is lost,
    /// since only a phone's confirmation lets a watch drop its copy. Its record still reaches
    /// every full replica.
    func bytesStayOnWatch(_ id: String) -> Bool {
        !hasPhone && attached.contains { $0.id == id && nodes[$0.node]?.role == .watch }
    }

    /// A user deleted the recording, which removed its bytes, and a restore of an older copy
    /// brought back only its record (the delete had reached no other replica): no node can have
    /// the bytes again, and the record says "awaiting bytes" until the user deletes it again.
    ///
    /// Or a device restored whole lost the only copy: the watch that made it let its own go
    /// once the phone confirmed it, and the phone was put back from a backup older than that.
    func bytesDeletedByUser(_ recording: Recording) -> Bool {
        (userDeletedRecordings.contains(recording.id) || recordingsLostByRestore.contains(recording.id)) && !nodes.values.contains { node in
            node.storage.files[recording.storageName].map { SHA256.hash($0) == recording.sha256 } ?? false
        }
    }

    func phoneHoldsBytes(of recording: Recording) -> Bool {
        names.contains { name in
            guard let node = nodes[name], node.role == .phone, let bytes = node.storage.files[recording.storageName] else { return false }
            return SHA256.hash(bytes) == recording.sha256
        }
    }
}

/// The invariants of DESIGN.md, checked against the write ledger once the run has settled.
struct InvariantChecker {
    let simulator: Simulator

    func check() -> [String] {
        let full = simulator.names.filter { simulator.nodes[$0]!.role.isFullReplica }
        guard let reference = full.first.flatMap({ simulator.nodes[$0]?.replica }) else { return [] }
        var violations: [String] = []
        // Every loser the full replicas kept, with the fields it lost (nil: it lost whole). A
        // conflict counts only once every full replica lists it (convergence holds them equal).
        var kept: [String: FieldMask?] = [:]
        if let replica = simulator.nodes[full[0]]?.replica {
            for conflict in (try? replica.conflicts()) ?? [] {
                kept["\(conflict.entryID)|\(conflict.loser.origin)|\(conflict.loser.sequence)"] = conflict.lostFields
            }
        }
        // A record the hostile node created is its own: its later writes may claim (a forged
        // version vector) to have seen honest edits of it, which then go without a conflict copy
        // as superseded ones do — and honest edits inherit those claims. Invariants 2 and 3 cannot
        // tell those claims from true ones; such records are held to convergence only.
        let hostileRecords = simulator.hostile?.createdRecords ?? []
        for id in simulator.ledger.ids where !hostileRecords.contains(id) {
            let writes = simulator.ledger.writes(to: id)
            guard let held = try? reference.entryWrites(id: id), !held.isEmpty else {
                violations.append("no acknowledged write lost: \(id) (written on \(writes[0].node)) is missing from the full replicas")
                continue
            }
            violations += FieldInvariants(id: id, writes: writes, result: FieldMerge.merge(held), kept: kept).violations()
        }
        violations += checkRecordings(full: full)
        violations += checkStrangers()
        violations += checkForgeries()
        return Array(violations.prefix(20))
    }

    /// Invariant 5 and recording convergence: every recording attached and not deleted is on every
    /// full replica byte for byte; no permanent file differs from its checksum (no partial file is
    /// ever visible); every confirmation names the right checksum.
    func checkRecordings(full: [String]) -> [String] {
        var violations: [String] = []
        for name in simulator.names {
            guard let node = simulator.nodes[name], let replica = node.replica else { continue }
            for (fileName, bytes) in node.storage.files.sorted(by: { $0.key < $1.key }) {
                let id = String(fileName.prefix { $0 != "." })
                guard let known = try? replica.recording(id: id) else {
                    violations.append("recordings: \(name) holds \(fileName) without metadata"); continue
                }
                if SHA256.hash(bytes) != known.recording.sha256 {
                    violations.append("recordings: \(name) holds \(fileName) whose bytes do not match its checksum (a partial or corrupt file)")
                }
            }
            for status in (try? replica.recordingStatuses()) ?? [] {
                if status.deleted && !simulator.userDeletedRecordings.contains(status.recording.id) {
                    violations.append("recordings: \(name) holds \(status.recording.id) as deleted, but no user deleted it")
                }
                for confirmation in (try? replica.confirmations(id: status.recording.id)) ?? [] where confirmation.sha256 != status.recording.sha256 {
                    violations.append("recordings: \(name) recorded a confirmation of \(status.recording.id) with the wrong checksum")
                }
            }
        }
        for recording in simulator.attached {
            for name in full {
                guard let node = simulator.nodes[name], let replica = node.replica,
                      let known = try? replica.recording(id: recording.id) else {
                    violations.append("recordings: \(recording.id) (attached on \(recording.node)) never reached \(name)"); continue
                }
                if known.deleted { continue }
                if simulator.bytesStayOnWatch(recording.id) {
                    let kept = simulator.nodes[recording.node]?.storage.files[recording.fileName].map { SHA256.hash($0) == recording.sha256 } ?? false
                    if !kept { violations.append("recordings: \(recording.id), made on \(recording.node) in a household without a phone, is gone from it") }
                    continue
                }
                guard let bytes = node.storage.files[recording.fileName], SHA256.hash(bytes) == recording.sha256 else {
                    if simulator.bytesDeletedByUser(known.recording) { continue }
                    violations.append("recordings: \(recording.id) (attached on \(recording.node)) is not byte-identical on \(name)"); continue
                }
            }
        }
        return violations
    }
}
