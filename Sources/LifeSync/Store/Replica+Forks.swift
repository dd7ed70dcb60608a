/// Forks of third nodes' origins (PROTOCOL.md §7.2.4). When two devices are restored whole, a
/// relay can hold one history of a node's origin and another relay the other, while the node
/// itself only ever meets the relay that agrees with it: nobody exchanges the writes (both
/// vectors cover them) and the node never learns it forked (restore seed 5663). So peers that
/// set bit 6 compare what both hold of every origin, not only of each other's; a relay that
/// finds two writes at one number keeps the fork (`known_forks`) and tells every peer that holds
/// the origin past the agreed point, until one of them is the origin's owner: it repairs as for
/// a fork it found itself (§7.2.3), and the fork is settled wherever its repair arrives.
extension Replica {
    /// Notes the forks a peer's HISTORY shows of origins neither ours nor its own (inside
    /// `takeHistory`'s transaction, after the repairs it told of): its probes compared with the
    /// digests of our seals, and the forks it knew of. Kept only for origins our vector names
    /// (so the table stays within the replica's origins), one per origin, the lowest agreed
    /// point winning; never one a repair we keep has settled. Returns the forks newly kept.
    func noteForks(_ history: History, peer nodeID: String, own: Set<String>, vector: VersionVector) throws -> [(origin: String, fork: UInt64)] {
        var kept: [(origin: String, fork: UInt64)] = []
        var found: [History.Fork] = history.forks.filter { !own.contains($0.origin) }
        for theirs in history.origins where !own.contains(theirs.origin) && !Identifier.incarnation(theirs.origin, isBoundTo: nodeID) {
            var agreed: UInt64 = 0
            for probe in theirs.probes where probe.sequence <= vector[theirs.origin] {
                guard let mine = try relayedDigest(theirs.origin, probe.sequence) else { continue }
                if mine == probe.digest { agreed = probe.sequence; continue }
                found.append(History.Fork(origin: theirs.origin, agreed: agreed, sequence: probe.sequence, digests: (mine, probe.digest)))
                break
            }
        }
        for fork in found where vector[fork.origin] >= 1 {
            guard try !isSettled(fork) else { continue }
            try database.run("""
                INSERT INTO known_forks(origin, agreed, seq, first, second) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT(origin) DO UPDATE SET agreed = ?2, seq = ?3, first = ?4, second = ?5 WHERE ?2 < agreed
                """, [.text(fork.origin), .counter(fork.agreed), .counter(fork.sequence), .blob(fork.digests.0.bytes), .blob(fork.digests.1.bytes)])
            if database.changes > 0 { kept.append((fork.origin, fork.agreed)) }
        }
        return kept
    }

    /// The forks we know of that `peerVector` holds past their agreed point, for a HISTORY to a
    /// peer that sets bit 6 (its owner among them), origins ascending.
    func knownForks(for peerVector: VersionVector) throws -> [History.Fork] {
        try database.rows("SELECT origin, agreed, seq, first, second FROM known_forks ORDER BY origin LIMIT ?",
                          [.integer(Int64(Message.Limits.maximumOrigins))]) { row -> History.Fork? in
            let fork = History.Fork(origin: row.string(0), agreed: UInt64(clamping: row.int64(1)), sequence: UInt64(clamping: row.int64(2)),
                                    digests: (SHA256.Digest(bytes: row.blob(3)), SHA256.Digest(bytes: row.blob(4))))
            return peerVector[fork.origin] > fork.agreed ? fork : nil
        }.compactMap { $0 }
    }

    /// Where the forks a peer told of put the fork of each of our own origins: at most their
    /// agreed point, when one of the two is the write we hold at the number (not one our vector
    /// took in without it) and the other is not one we gave up in a repair (that fork is
    /// settled: the peer gets our repair in this exchange). A fork naming neither of ours says
    /// nothing: a relay holding another write than ours shows it in its own probes, and a
    /// buggy peer's made-up digests cannot make us re-issue our history.
    func forkBounds(_ forks: [History.Fork], own: Set<String>, vector: VersionVector) throws -> [String: UInt64] {
        var bounds: [String: UInt64] = [:]
        for fork in forks where own.contains(fork.origin) && fork.sequence <= vector[fork.origin] {
            guard case .digest(let mine)? = try ownDigest(fork.origin, fork.sequence), fork.names(mine) else { continue }
            if let given = try givenUp(fork.origin)[fork.sequence], fork.names(given) { continue }
            bounds[fork.origin] = min(bounds[fork.origin] ?? .max, fork.agreed)
        }
        return bounds
    }

    /// Forgets the known forks a repair settles: one of the two writes is among those it gave up.
    func settleForks(by repair: History.Repair) throws {
        guard let fork = try database.firstRow("SELECT seq, first, second FROM known_forks WHERE origin = ?", [.text(repair.origin)], { row in
            (UInt64(clamping: row.int64(0)), SHA256.Digest(bytes: row.blob(1)), SHA256.Digest(bytes: row.blob(2)))
        }) else { return }
        if repair.members.contains(where: { $0.sequence == fork.0 && ($0.digest == fork.1 || $0.digest == fork.2) }) {
            try database.run("DELETE FROM known_forks WHERE origin = ?", [.text(repair.origin)])
        }
    }

    private func isSettled(_ fork: History.Fork) throws -> Bool {
        var settled = false
        try database.forEachRow("SELECT members FROM history_repairs WHERE origin = ?", [.text(fork.origin)]) { row in
            if (Seal.members(from: row.blob(0)) ?? []).contains(where: { $0.sequence == fork.sequence && fork.names($0.digest) }) { settled = true }
        }
        return settled
    }

    /// The digest of a third node's write at (`origin`, `sequence`) as the seals we keep vouch
    /// for it, else as we hold it.
    private func relayedDigest(_ origin: String, _ sequence: UInt64) throws -> SHA256.Digest? {
        if let member = try sealMembers(origin, atMost: sequence).first(where: { $0.sequence == sequence }) { return member.digest }
        return try heldDigest(origin, sequence)
    }
}
