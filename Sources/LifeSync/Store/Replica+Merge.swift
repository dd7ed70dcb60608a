import CSQLite

/// What applying a batch of remote changes did.
public struct ApplyOutcome: Equatable, Sendable {
    /// Changes whose content became the local version.
    public var applied = 0
    /// Changes the local version already had, or beat.
    public var unchanged = 0
    /// Concurrent versions that lost (either side) and went to the conflicts table.
    public var conflicts = 0
    /// Remote HLCs beyond the drift bound (accepted, but the local clock was not dragged along).
    public var clockSkewed = 0
    /// Changes whose (origin, sequence) another version already holds with other content: a
    /// forged or buggy write. Each is set aside in the conflicts table; the rest of the batch
    /// applies, so one such change can never wedge its origin.
    public var clashes = 0
    /// Recordings to remove from storage (their file and any partial download): a user delete
    /// of a recording this replica holds bytes of won the merge.
    public var recordingsToRemove: [(id: String, fileName: String)] = []
    /// Recordings whose metadata arrived while this replica knows nothing of their bytes: the
    /// storage may hold them already (`Replica.adoptStoredCopy`).
    public var recordingsArrived: [String] = []
    /// Recordings deleted by a peer that this replica never had metadata of: a file of theirs its
    /// storage may hold goes too (`RecordingStorage.storedFileName`).
    public var unknownRecordingsDeleted: [String] = []
    /// The (origin, sequence) of each change the replica held already: a copy of a write that
    /// arrived before, from this peer or another (or one learnt to be superseded). Among the
    /// `unchanged`; `/metrics` counts copies of one change with it.
    public var heldAlready: [(origin: String, sequence: UInt64)] = []

    public init() {}

    public static func == (a: ApplyOutcome, b: ApplyOutcome) -> Bool {
        a.applied == b.applied && a.unchanged == b.unchanged && a.conflicts == b.conflicts && a.clockSkewed == b.clockSkewed
            && a.clashes == b.clashes
            && a.recordingsToRemove.map(\.id) == b.recordingsToRemove.map(\.id)
    }
}

extension Replica {
    /// Applies remote changes in one transaction, then advances the replica vector to
    /// `through`. Either all of it is committed or none: a sender acknowledges nothing we did
    /// not durably keep.
    ///
    /// `through` says, per origin, how far the batch covers that origin's log: rows missing below
    /// it were superseded at the sender, and their successors travel under their own origins.
    ///
    /// Durability: the batch and the vector advance commit atomically together; the commit is not
    /// fsynced on its own (WAL with `synchronous = NORMAL`). A power cut can roll back the last
    /// batches, but then it rolls back the vector with them, so the next HELLO asks for them
    /// again — the sender still holds them. Local writes, which exist nowhere else, stay fully
    /// synced (`synchronous = FULL`), and their fsync makes any earlier batch durable too.
    ///
    /// While applying, the WAL is checkpointed only past 65536 pages (`withUnsyncedCommits`): a
    /// checkpoint in the stream stalled the receiver — in the fsyncs, and then in rewriting WAL
    /// pages the kernel was still writing back (`perf sched` showed a quarter second of each in
    /// a 100k-entry sync at 64 MiB). The session checkpoints instead when the peer has sent
    /// everything (`checkpoint()`), so a bulk sync borrows up to 256 MiB of disk for a while;
    /// the limit only bounds the WAL of an endless stream. (A checkpoint from a second thread
    /// during the stream was tried: it slowed the batches more than the stalls it saved.) Local
    /// writes checkpoint at the default again.
    @discardableResult
    package func apply(_ changes: [Change], through: VersionVector) throws -> ApplyOutcome {
        try apply([(changes, through)])[0]
    }

    /// Applies several batches in one transaction, each as `apply(_:through:)` would and in
    /// order, and records which node each of `origins` belongs to (where not known yet);
    /// returns one outcome per batch. All of it is committed or none.
    ///
    /// A receiver that finds several batches waiting commits them together: each commit writes
    /// every page it dirtied to the WAL, and with random entry IDs a batch dirties most of the
    /// ID index, so one commit for three batches writes a third of the pages.
    ///
    /// `seals`, one per batch, are the origins' seals the batches came with (PROTOCOL.md §5.2.5):
    /// every change must be sealed by its origin, else nothing is written
    /// (`ReplicaError.forgedWrite`), and the seals are kept for relaying. Without them (a local
    /// caller applying changes it vouches for itself) nothing is checked and the writes of other
    /// origins cannot be relayed.
    package func apply(_ batches: [(changes: [Change], through: VersionVector)],
                      origins: [(origin: String, nodeID: String, role: Role)] = [],
                      seals: [ReceivedSeals]? = nil) throws -> [ApplyOutcome] {
        precondition(seals == nil || seals!.count == batches.count, "one set of seals per batch")
        return try database.withUnsyncedCommits { try writeTransaction {
            keepsTextPending = true  // indexed when the burst ends (`checkpoint`)
            try requireOriginRoom(batches.flatMap(\.through.entries).map(\.origin) + origins.map(\.origin))
            let now = clock.nowMilliseconds()
            // With no tombstones, a new live entry needs no lookup first: try the insert, and
            // merge only when the ID turns out to be taken (the common case of a fresh replica).
            var noTombstones = try tombstoneCount() == 0
            var writer = RecordWriter(database: database, counts: countTally, createdAt: Timestamp(millisecondsSince1970: now))
            let before = try replicaVector()
            var absorbed = Dictionary(uniqueKeysWithValues: before.entries.map { ($0.origin, $0.sequence) })
            let own = seals == nil ? [] : try ownOrigins()
            let outcomes = try batches.enumerated().map { number, batch in
                if let seals, !plantedBugs.contains(.ignoresSeals) {
                    let vouching = try checkSeals(batch.changes, seals[number], own: own)
                    try keepSeals(batch.changes, vouching: vouching, seals: seals[number].seals, own: own, absorbed: absorbed)
                }
                var outcome = ApplyOutcome()
                for change in batch.changes {
                    if change.stamp.sequence <= absorbed[change.stamp.origin, default: 0] {
                        try skipAbsorbed(change, into: &outcome)
                        continue
                    }
                    if change.entry == nil { noTombstones = false }
                    if !hlc.observe(change.stamp.hlc, now: now) { outcome.clockSkewed += 1 }
                    if change.kind == .recording {
                        try mergeRecording(change, into: &outcome)
                        continue
                    }
                    if noTombstones, let entry = change.entry {
                        switch try storeUnlessClashing(change, outcome: &outcome, { try writer.store(id: change.id, entry: entry, stamp: change.stamp, previous: nil, ifAbsent: true, fields: change.fields) }) {
                        case true?: outcome.applied += 1; continue
                        case nil: continue
                        case false?: break
                        }
                    }
                    try merge(change, into: &outcome, writer: &writer)
                }
                for entry in batch.through.entries {
                    try database.run("""
                        INSERT INTO replica_vector(origin, seq) VALUES (?1, ?2)
                        ON CONFLICT(origin) DO UPDATE SET seq = max(seq, ?2)
                        """, [.text(entry.origin), .counter(entry.sequence)])
                    absorbed[entry.origin] = max(absorbed[entry.origin, default: 0], entry.sequence)
                }
                return outcome
            }
            for origin in origins { try recordOriginIfUnknown(origin.origin, nodeID: origin.nodeID, role: origin.role) }
            // Our own writes given back (a restored replica) join our history in the same commit.
            if let seals { try noteReceivedOwn(seals.flatMap(\.seals), before: before) }
            return outcomes
        } }
    }

    /// Starts indexing the burst's backlog (`startTextCatchUp`), and copies the WAL back into
    /// the database file without waiting for readers or writers (SQLite's PASSIVE checkpoint);
    /// the next write then starts the WAL over, shrunk to `journal_size_limit`. Called when a
    /// sync burst ends, off the path of arriving batches.
    public func checkpoint() {
        try? startTextCatchUp()
        try? database.run("PRAGMA wal_checkpoint(PASSIVE)")
    }

    /// Merges a received entry change into what the replica holds of its entry: the per-field
    /// merge (`FieldMerge`) of the stored writes and this one. Conflicts are recorded for what
    /// this change lost, or made lose; earlier ones were recorded when they happened.
    func merge(_ change: Change, into outcome: inout ApplyOutcome, writer: inout RecordWriter) throws {
        if let holder = try recordHolding(origin: change.stamp.origin, sequence: change.stamp.sequence) {
            if holder.id != change.id || holder.stamp.hlc != change.stamp.hlc || holder.stamp.deleted != change.stamp.deleted {
                // The same (origin, sequence) with another stamp: not the write we hold.
                try recordConflict(id: change.id, loser: change.stamp, loserEntry: change.entry, winner: holder.stamp)
                outcome.clashes += 1
            }
            outcome.unchanged += 1
            outcome.heldAlready.append((change.stamp.origin, change.stamp.sequence))
            return
        }
        guard let stored = try storedWrites(id: change.id) else {
            if try storeUnlessClashing(change, outcome: &outcome, {
                try writer.store(id: change.id, entry: change.entry, stamp: change.stamp, previous: nil, fields: change.fields)
            }) != nil {
                outcome.applied += 1
            }
            return
        }
        var result = FieldMerge.merge(stored.all + [change.write])
        if plantedBugs.contains(.dropsFieldWinners) { result = FieldMerge.merge([result.latest]) }
        if plantedBugs.contains(.reversedOriginTieBreak), let flipped = Replica.reversedTieBreak(stored.latest, change.write, result) {
            result = flipped
        }
        try storeMerged(id: change.id, result, over: stored, writer: &writer)
        outcome.conflicts += try reconcileConflicts(id: change.id, result, writes: stored.all + [change.write], arriving: change.stamp)
        if result.holds(change.stamp) { outcome.applied += 1 } else { outcome.unchanged += 1 }
    }

    /// The planted bug `reversedOriginTieBreak` (test-only): between two whole writes of equal
    /// HLC and weight from different origins, the other one stands.
    private static func reversedTieBreak(_ local: EntryWrite, _ remote: EntryWrite, _ result: FieldMergeResult) -> FieldMergeResult? {
        guard local.stamp.hlc == remote.stamp.hlc, local.stamp.vector.weight == remote.stamp.vector.weight,
              local.stamp.origin != remote.stamp.origin, local.fields == .all, remote.fields == .all else { return nil }
        return FieldMerge.merge([result.latest.stamp.isSameWrite(as: remote.stamp) ? local : remote])
    }

    /// A change whose (origin, sequence) the replica vector already covers was absorbed here
    /// before: it is held, or was superseded or beaten. Applying it again could only undo that
    /// (a twin of a superseded write, stamped above the edit that replaced it, would win; a twin
    /// of a delete under another ID would live on here and nowhere else), so it is left out. Only
    /// a change that differs from the record still holding its (origin, sequence) is worth a
    /// note: that is a clash, kept in the conflicts table.
    func skipAbsorbed(_ change: Change, into outcome: inout ApplyOutcome) throws {
        outcome.unchanged += 1
        outcome.heldAlready.append((change.stamp.origin, change.stamp.sequence))
        guard let holder = try recordHolding(origin: change.stamp.origin, sequence: change.stamp.sequence) else { return }
        if holder.id != change.id || holder.stamp.hlc != change.stamp.hlc || holder.stamp.deleted != change.stamp.deleted {
            try recordConflict(id: change.id, loser: change.stamp, loserEntry: change.entry, winner: holder.stamp)
            outcome.clashes += 1
        }
    }

    /// Runs `store`; when another record already holds the change's (origin, sequence) — which
    /// an honest origin never writes twice — the change is kept in the conflicts table instead
    /// and nil returned. Otherwise `store`'s own answer.
    func storeUnlessClashing(_ change: Change, outcome: inout ApplyOutcome, _ store: () throws -> Bool) throws -> Bool? {
        do {
            return try store()
        } catch let error as SQLiteError where error.code == Replica.uniqueConstraintFailed {
            let holder = try recordHolding(origin: change.stamp.origin, sequence: change.stamp.sequence)?.stamp ?? change.stamp
            try recordConflict(id: change.id, loser: change.stamp, loserEntry: change.entry, winner: holder)
            outcome.clashes += 1
            return nil
        }
    }

    /// SQLITE_CONSTRAINT_UNIQUE (a C macro Swift does not import): only the (origin, origin_seq)
    /// indexes can raise it here, since every insert resolves a clash on `id` itself.
    static let uniqueConstraintFailed: Int32 = SQLITE_CONSTRAINT | (8 << 8)

    /// The ID and stamp of the record that holds (origin, sequence), if any.
    func recordHolding(origin: String, sequence: UInt64) throws -> (id: String, stamp: VersionStamp)? {
        try database.firstRow("""
            SELECT hlc, origin_no, origin_seq, vector, 0, id FROM entries WHERE origin_no = ?1 AND origin_seq = ?2
            UNION ALL SELECT hlc, origin_no, origin_seq, vector, 1, id FROM tombstones WHERE origin_no = ?1 AND origin_seq = ?2
            UNION ALL SELECT hlc, origin_no, origin_seq, vector, deleted, id FROM recordings WHERE origin_no = ?1 AND origin_seq = ?2
            UNION ALL SELECT hlc, origin_no, origin_seq, vector, deleted, id FROM kept_writes WHERE origin_no = ?1 AND origin_seq = ?2
            """, [try database.originParameter(origin), .counter(sequence)]) { row in
            (row.string(5), try self.stamp(from: row, deleted: row.int64(4) != 0, origin: origin))
        }
    }

    /// Refuses to learn origins past `Message.Limits.maximumReplicaOrigins`: a replica that knew
    /// more could not send its own vector in a HELLO.
    func requireOriginRoom(_ named: [String]) throws {
        var fresh = Set<String>()
        for origin in named where !fresh.contains(origin) {
            if try database.firstRow("SELECT 1 FROM replica_vector WHERE origin = ?", [.text(origin)], { _ in true }) == nil { fresh.insert(origin) }
        }
        guard !fresh.isEmpty else { return }
        let known = Int(try database.firstRow("SELECT count(*) FROM replica_vector", [], { $0.int64(0) }) ?? 0)
        guard known + fresh.count <= Message.Limits.maximumReplicaOrigins else {
            throw ReplicaError.limitExceeded("the batch names \(fresh.count) new origins; this replica knows \(known) and keeps at most \(Message.Limits.maximumReplicaOrigins)")
        }
    }

    /// The highest sequence of `origin` among the rows this replica stores (live, deleted,
    /// recordings): used to admit a peer's `through` only as far as data justifies it. One index
    /// probe per table.
    public func justifiedSequence(origin: String) throws -> UInt64 {
        var best: UInt64 = 0
        for table in ["entries", "tombstones", "recordings", "kept_writes"] {
            let own = try database.firstRow("SELECT max(origin_seq) FROM \(table) WHERE origin_no = ?", [try database.originParameter(origin)]) { $0.int64(0) } ?? 0
            best = max(best, UInt64(clamping: own))
        }
        return min(best, Message.Limits.maximumSequence)
    }
}
