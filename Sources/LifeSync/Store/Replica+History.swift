/// One write a history repair moved from a forked origin to the current incarnation.
public struct Reissue: Equatable, Sendable {
    public var id: String
    /// The write as it stood, under the origin that forked.
    public var old: VersionStamp
    /// The same write under the current incarnation: same HLC, content and fields.
    public var new: VersionStamp
}

/// What a history repair did to one of our origins (PROTOCOL.md §7.2.3).
public struct HistoryRepair: Equatable, Sendable {
    public var origin: String
    /// Our history of `origin` agrees with the peer's up to here; the vector entry went back to it.
    public var fork: UInt64
    /// Where the writes above the fork went: write (origin, s) is now (`movedTo`, `base` + s − fork).
    public var movedTo: String
    public var base: UInt64
    public var reissued: [Reissue]
}

/// What a replica made of a peer's HISTORY.
package struct HistoryOutcome: Equatable, Sendable {
    /// Our origins that forked, repaired.
    package var repairs: [HistoryRepair] = []
    /// The incarnation given up for the repairs, and the new one.
    package var rotated: (old: String, new: String)?
    /// Writes of other nodes' origins we held and moved where their repairs moved them.
    package var movedForPeer = 0
    /// Repairs we kept for the first time (ours, or taken in), and forks of third nodes' origins
    /// we learned of (§7.2.4): (origin, fork or agreed point) of each.
    package var learned: [(origin: String, fork: UInt64)] = []
    /// Our origins the peer's digests show it holds, unforked, up to the number given: a claim
    /// of more than we hold of them (we were restored) counts as that much, not as nothing.
    package var agreed: [String: UInt64] = [:]

    package static func == (a: HistoryOutcome, b: HistoryOutcome) -> Bool {
        a.repairs == b.repairs && a.rotated?.old == b.rotated?.old && a.rotated?.new == b.rotated?.new && a.movedForPeer == b.movedForPeer
            && a.learned.map(\.origin) == b.learned.map(\.origin) && a.learned.map(\.fork) == b.learned.map(\.fork)
    }
}

/// Histories compared at the handshake (PROTOCOL.md §7.2.3): what this replica tells a peer of
/// the peer's own origins (`historyProbes`), and what it does when a peer's HISTORY shows that
/// its own replica forked from the history its peers hold (`repairHistory`).
extension Replica {
    /// How many of the greatest known digests below the shared top a HISTORY names per origin,
    /// before the log-spaced ones further down.
    static let denseProbes = 64

    /// Notes the digest of each write of our current incarnation made since `before` that we
    /// hold (inside the caller's transaction; `writeTransaction` calls it before committing), so
    /// our log names every write of our history, sent or not (`own_writes`).
    func noteOwnWrites(after before: WriteMark) throws {
        let origin = identity.incarnation
        var after = before.incarnation == origin ? before.sequence : 0
        if let noted = ownWritesNoted, noted.incarnation == origin { after = max(after, noted.sequence) }
        let count = try currentSequence()
        while after < count {
            let rows = try encodedChanges(origin: origin, after: after, limit: 512)
            for row in rows where !row.isDamaged {
                try database.run("INSERT OR IGNORE INTO own_writes(origin_no, seq, digest) VALUES (?, ?, ?)",
                                 [.integer(try database.originNumber(origin)), .counter(row.stamp.sequence), .blob(row.digest.bytes)])
            }
            guard rows.count == 512, let last = rows.last else { break }
            after = last.stamp.sequence
        }
    }

    private func note(_ seals: [Seal]) throws {
        for seal in seals {
            for member in seal.members {
                try database.run("INSERT OR IGNORE INTO own_writes(origin_no, seq, digest) VALUES (?, ?, ?)",
                                 [.integer(try database.originNumber(seal.origin)), .counter(member.sequence), .blob(member.digest.bytes)])
            }
        }
    }

    /// Our own writes a peer gave back (our replica had lost them): their digests from the seals
    /// they came with, and every number our vector now covers as the peers' history (an empty
    /// digest: a write superseded there, which we will never see). `before` is our vector as it
    /// was before the batches. Inside the caller's transaction (`apply`), so a batch is never
    /// kept without its note. Our origins are read as they are after the batches: an
    /// incarnation we started after the copy we were restored from is ours too, though we
    /// learn of it only now (restore seed 3448: its numbers went unlogged, and the next HISTORY
    /// read them as a fork).
    func noteReceivedOwn(_ seals: [Seal], before: VersionVector) throws {
        let vector = try replicaVector()
        let grown = try ownOrigins().filter { vector[$0] > before[$0] }
        guard !grown.isEmpty else { return }
        try note(seals.filter { grown.contains($0.origin) })
        for origin in grown.sorted() {
            try database.run("""
                WITH RECURSIVE covered(seq) AS (SELECT ?2 UNION ALL SELECT seq + 1 FROM covered WHERE seq < ?3)
                INSERT OR IGNORE INTO own_writes(origin_no, seq, digest) SELECT ?1, seq, x'' FROM covered
                """, [.integer(try database.originNumber(origin)), .counter(before[origin] + 1), .counter(vector[origin])])
        }
    }

    /// What this replica knows of the origins bound to `nodeID` (§2.3.1), up to what both hold
    /// (`peerVector`): per origin, its vector entry and digests from the seals it keeps — the
    /// `denseProbes` greatest, then one at each power-of-two distance below them. With
    /// `thirdParties` (a peer that sets bit 6 `forks`), every other origin both hold that is not
    /// ours is named too, while the HISTORY's probe bound leaves room (§7.2.4).
    package func historyProbes(of nodeID: String, peerVector: VersionVector, thirdParties: Bool = false) throws -> [History.Origin] {
        let own = try ownOrigins()
        var result: [History.Origin] = []
        var room = Message.Limits.maximumHistoryProbes
        let vector = try replicaVector()
        for entry in vector.entries where !own.contains(entry.origin) && Identifier.incarnation(entry.origin, isBoundTo: nodeID) {
            let shared = min(entry.sequence, peerVector[entry.origin])
            guard shared >= 1 else { continue }
            let probes = try knownDigests(entry.origin, atMost: shared)
            if !probes.isEmpty { result.append(History.Origin(origin: entry.origin, top: entry.sequence, probes: probes)) }
            room -= probes.count
        }
        guard thirdParties else { return result }
        for entry in vector.entries where !own.contains(entry.origin) && !Identifier.incarnation(entry.origin, isBoundTo: nodeID) {
            let shared = min(entry.sequence, peerVector[entry.origin])
            guard shared >= 1 else { continue }
            let probes = try knownDigests(entry.origin, atMost: shared)
            guard !probes.isEmpty, probes.count <= room else { continue }
            room -= probes.count
            result.append(History.Origin(origin: entry.origin, top: entry.sequence, probes: probes))
        }
        return result.sorted { $0.origin < $1.origin }
    }

    func knownDigests(_ origin: String, atMost top: UInt64) throws -> [Seal.Member] {
        var known: [UInt64: SHA256.Digest] = [:]
        // The greatest first: seals by their last member, until none can hold a greater one.
        var floor: UInt64?
        try database.forEachRow("SELECT last_seq, members FROM seals WHERE origin = ? AND first_seq <= ? ORDER BY last_seq DESC",
                                [.text(origin), .counter(top)]) { row in
            if let floor, UInt64(clamping: row.int64(0)) < floor { return }
            for member in Seal.members(from: row.blob(1)) ?? [] where member.sequence <= top { known[member.sequence] = member.digest }
            if known.count >= Replica.denseProbes { floor = known.keys.sorted(by: >).dropFirst(Replica.denseProbes - 1).first }
        }
        var probes = known.keys.sorted(by: >).prefix(Replica.denseProbes).map { Seal.Member(sequence: $0, digest: known[$0]!) }
        var distance: UInt64 = 1
        let base = probes.last?.sequence ?? top
        while distance < base {
            let target = base - distance
            distance *= 2
            if let member = try sealMembers(origin, atMost: target).max(by: { $0.sequence < $1.sequence }),
               !probes.contains(where: { $0.sequence == member.sequence }) {
                probes.append(member)
            }
        }
        return probes.sorted { $0.sequence < $1.sequence }
    }

    /// For every seal we keep of `origin` whose range covers `sequence`, its member with the
    /// greatest sequence at or below it (a seal may leave out writes of its range).
    func sealMembers(_ origin: String, atMost sequence: UInt64) throws -> [Seal.Member] {
        try database.rows("SELECT members FROM seals WHERE origin = ?1 AND first_seq <= ?2 AND last_seq >= ?2",
                          [.text(origin), .counter(sequence)]) { row in row.withBlob(0) { Seal.member(atMost: sequence, in: $0) } }.compactMap { $0 }
    }

    /// Takes in a peer's HISTORY, in one transaction: first the repairs it tells of (`takeRepairs`),
    /// then our own origins compared with what the peer holds of them; every one
    /// that forked is repaired under one new incarnation (`reissue`), so the peer sends us its
    /// history from the fork. `sendsRecordings`: whether this peer takes recording metadata (else
    /// such rows are no evidence). `current`: our incarnation when the session began; a write we
    /// hold that the peer never saw is evidence only there (only it can have been written since
    /// a restore: an older one was left at a restore the replica could tell, §7.2.2).
    /// `peer`: the node that sent it (its own origins are its matter, not a third node's fork).
    package func takeHistory(_ history: History, from peer: String = "", sendsRecordings: Bool, current: String? = nil) throws -> HistoryOutcome {
        try writeTransaction {
            // Part of a sync burst: what it writes waits in the text index's backlog with the
            // batches (`checkpoint`); a reconnect indexed a broken session's whole backlog here.
            keepsTextPending = true
            var outcome = HistoryOutcome()
            let known = try repairCount()
            outcome.movedForPeer = try takeRepairs(history.repairs)
            let own = try ownOrigins()
            let vector = try replicaVector()
            let forksLearned = try noteForks(history, peer: peer, own: own, vector: vector)
            let bounds = try forkBounds(history.forks, own: own, vector: vector)
            let probed = Dictionary(history.origins.map { ($0.origin, $0) }, uniquingKeysWith: { a, _ in a })
            var forks: [(origin: String, fork: UInt64)] = []
            for origin in Set(probed.keys).union(bounds.keys).sorted() where own.contains(origin) {
                let theirs = probed[origin] ?? History.Origin(origin: origin, top: 0, probes: [])
                // The peer still holds writes we gave up: our repair, which it gets with our
                // HISTORY, settles it; its probes say nothing of our history meanwhile.
                let givenUp = try givenUp(origin)
                if theirs.probes.contains(where: { givenUp[$0.sequence] == $0.digest }) { continue }
                let verdicts = try theirs.probes.map { probe -> (sequence: UInt64, verdict: HistoryComparison.Verdict) in
                    switch try ownDigest(origin, probe.sequence) {
                    case nil: return (probe.sequence, .unknown)
                    // Taken in from a peer's history without its digest: the peers' history.
                    case .covered?: return (probe.sequence, .match)
                    case .digest(let mine)?: return (probe.sequence, mine == probe.digest ? .match : .mismatch)
                    }
                }
                let comparison = HistoryComparison(count: vector[origin], top: theirs.top, logStart: try ownLogStart(origin), probes: verdicts)
                let heldCounts = origin == (current ?? identity.incarnation) && probed[origin] != nil
                let probedFork = try comparison.forkPoint(firstHeldAbove: { heldCounts ? try firstHeld(origin, above: $0, recordings: sendsRecordings) : nil })
                // A fork two other replicas found between them (§7.2.4): ours forked at most there.
                if let fork = [probedFork, bounds[origin]].compactMap({ $0 }).min() { forks.append((origin, fork)) }
                else { outcome.agreed[origin] = comparison.agreement }
            }
            if !forks.isEmpty {
                let old = identity.incarnation
                try startIncarnation()
                for (origin, fork) in forks {
                    let base = try currentSequence()
                    outcome.repairs.append(HistoryRepair(origin: origin, fork: fork, movedTo: identity.incarnation, base: base,
                                                         reissued: try reissue(origin, above: fork)))
                }
                outcome.rotated = (old, identity.incarnation)
            }
            outcome.learned = try newRepairs(since: known) + forksLearned
            return outcome
        }
    }

    /// The digest of our write at (`origin`, `sequence`): as we made it or a peer gave it back
    /// (empty: a number taken in from a peer without its write), else as we hold it.
    func ownDigest(_ origin: String, _ sequence: UInt64) throws -> OwnDigest? {
        if let sent = try database.firstRow("SELECT digest FROM own_writes WHERE origin_no = ? AND seq = ?", [try database.originParameter(origin), .counter(sequence)],
                                            { $0.blob(0) }) {
            return sent.count == 32 ? .digest(SHA256.Digest(bytes: sent)) : .covered
        }
        return try heldDigest(origin, sequence).map { .digest($0) }
    }

    enum OwnDigest: Equatable {
        case digest(SHA256.Digest)
        /// A number our vector took in from a peer's history without its write.
        case covered
    }

    /// The digest of the write this replica holds at (`origin`, `sequence`), if any (not damaged).
    func heldDigest(_ origin: String, _ sequence: UInt64) throws -> SHA256.Digest? {
        guard sequence >= 1, let held = try encodedChanges(origin: origin, after: sequence - 1, limit: 1).first,
              held.stamp.sequence == sequence, !held.isDamaged else { return nil }
        return held.digest
    }

    func ownLogStart(_ origin: String) throws -> UInt64 {
        try database.firstRow("SELECT seq FROM own_writes_from WHERE origin = ?", [.text(origin)]) { UInt64(clamping: $0.int64(0)) } ?? 1
    }

    /// The lowest number above `sequence` of a row of `origin` we would send (not damaged; a
    /// recording's metadata only when `recordings`).
    func firstHeld(_ origin: String, above sequence: UInt64, recordings: Bool) throws -> UInt64? {
        var after = sequence
        while true {
            let rows = try encodedChanges(origin: origin, after: after, limit: 64)
            if let row = rows.first(where: { !$0.isDamaged && (recordings || $0.kind != .recording) }) { return row.stamp.sequence }
            guard rows.count == 64, let last = rows.last else { return nil }
            after = last.stamp.sequence
        }
    }
}
