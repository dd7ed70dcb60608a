/// What an import did with its entries.
package struct ImportSummary: Equatable, Sendable {
    /// New entries written.
    package var written = 0
    /// Already here with the same content (`recorded_at` aside): skipped.
    package var unchanged = 0
    /// Already here with other content (changed here, or by a peer, since): left as the replica
    /// has it. An import adds entries; it never overwrites one.
    package var keptAsHere: [String] = []
    /// Deleted here: deletes stick, an import does not bring an entry back.
    package var deletedHere: [String] = []

    package init() {}
}

extension Replica {
    /// Defaults for records being imported: `timestamp` required, LifeLog's own forms taken,
    /// and an absent `id` derived from the content, so re-importing finds the same entries
    /// (LogEntry+LifeLogInput.swift).
    package func importDefaults() -> EntryDefaults {
        var defaults = addDefaults()
        defaults.timestamp = nil
        defaults.derivesAbsentID = true
        return defaults
    }

    /// Imports entries all-or-nothing in one transaction. An entry is recognised by its ID:
    /// one the replica already holds, live or deleted, is left as it is and counted, so
    /// re-importing any input is harmless. Only the input contradicting itself (one ID, two
    /// contents) is refused, naming both positions.
    @discardableResult
    package func importEntries(_ entries: [LogEntry], positionName: (Int) -> String = { "entry \($0 + 1)" }) throws -> ImportSummary {
        var iterator = entries.enumerated().makeIterator()
        return try importEntries(positionName: positionName) { iterator.next().map { ($0.offset, $0.element) } }
    }

    /// The streaming form of `importEntries(_:positionName:)`: `next` gives each entry with its
    /// position in the input (what `positionName` names), nil at the end, and may throw to
    /// refuse the input, which rolls back everything written. Entries are written as they come,
    /// so memory does not grow with the input: SQLite keeps the transaction's pages on disk, and
    /// of the written entries only their positions are remembered, as runs of consecutive ones
    /// (`WrittenPositions`), to name one should a later record contradict it.
    ///
    /// This is the bulk path: sequence numbers are taken in one step and each new entry costs one
    /// INSERT, and the note of its digest (`own_writes`) made from the row as it is written
    /// rather than read back when the transaction ends, as are its text (`ImportIndexer`) and
    /// its counts (`CountTally`); only an ID that is already taken costs a second look.
    @discardableResult
    package func importEntries(positionName: (Int) -> String, _ next: () throws -> (position: Int, entry: LogEntry)?) throws -> ImportSummary {
        try writeTransaction {
            let mayHaveTombstones = try tombstoneCount() > 0
            var sequence = try currentSequence()
            let sequenceBefore = sequence
            var summary = ImportSummary()
            var writer = RecordWriter(database: database, counts: countTally, createdAt: now)
            var writtenAt = WrittenPositions()  // the position of each entry written, in sequence order
            var digests = try OwnWriteNotes(database: database, origin: identity.incarnation)
            // What was waiting for the text index first: the import's own rows are then the
            // whole backlog, and it indexes them as it writes them.
            try indexTextBacklog()
            var indexer = try ImportIndexer(database: database)
            while let (position, entry) = try next() {
                if mayHaveTombstones, try storedVersion(id: entry.id)?.place == .tombstone {
                    summary.deletedHere.append(entry.id)
                    continue
                }
                let stamp = VersionStamp(hlc: hlc.tick(now: clock.nowMilliseconds()), origin: identity.incarnation,
                                         sequence: sequence + 1, vector: VersionVector([(identity.incarnation, sequence + 1)]), deleted: false)
                if try writer.store(id: entry.id, entry: entry, stamp: stamp, previous: nil, ifAbsent: true) {
                    sequence += 1
                    summary.written += 1
                    try digests.note(stamp: stamp, id: entry.id, storedBy: writer)
                    try indexer.add(entry, feed: writer.lastFeedNumber!)
                    writtenAt.append(position)
                } else if try self.entry(id: entry.id).isSameContent(as: entry) {
                    summary.unchanged += 1
                } else if let stored = try storedVersion(id: entry.id)?.stamp,
                          stored.origin == identity.incarnation, stored.sequence > sequenceBefore {
                    // Written by this very input: it contradicts itself, and no replica can say which is meant.
                    let first = writtenAt.position(ofWritten: Int(stored.sequence - sequenceBefore) - 1)
                    throw ReplicaError.invalid(ValidationError(
                        field: "\(positionName(position)): id",
                        reason: "\(entry.id) is also at \(positionName(first)) with other content"))
                } else {
                    summary.keptAsHere.append(entry.id)
                }
            }
            try indexer.finish()
            try database.run("UPDATE replica_vector SET seq = ? WHERE origin = ?", [.counter(sequence), .text(identity.incarnation)])
            ownWritesNoted = WriteMark(incarnation: identity.incarnation, sequence: sequence)
            return summary
        }
    }
}

/// Notes the digests of new entries an import writes under our incarnation in `own_writes` as
/// they are written, from the row's own bytes (what `noteOwnWrites` would read back and
/// digest), through one statement and buffers kept for every row.
private struct OwnWriteNotes {
    private let statement: Statement
    private let originNumber: Int64
    private let hasher = SHA256()
    private var payload: [UInt8] = []
    private var digest: [UInt8] = []

    init(database: Database, origin: String) throws {
        statement = try database.prepare("INSERT OR IGNORE INTO own_writes(origin_no, seq, digest) VALUES (?, ?, ?)")
        originNumber = try database.originNumber(origin)
    }

    /// Notes the write `stamp` of entry `id` that `writer` just stored (a whole new entry).
    mutating func note(stamp: VersionStamp, id: String, storedBy writer: borrowing RecordWriter) throws {
        payload.removeAll(keepingCapacity: true)
        writer.writeStoredPayload(to: &payload)
        digest.removeAll(keepingCapacity: true)
        WriteDigest.of(kind: .entry, stamp: stamp, id: id, fields: .all, canonicalContent: payload[...], hasher: hasher).append(to: &digest)
        statement.bind(originNumber, at: 1)
        statement.bind(Int64(clamping: stamp.sequence), at: 2)
        try digest.withUnsafeBufferPointer { (bytes) throws(SQLiteError) in
            defer { statement.clearBindings() }
            statement.bindUncopiedBlob(bytes, at: 3)
            try statement.execute()
        }
    }
}

/// The input position of each entry an import wrote, in the order written, kept as runs of
/// consecutive positions: an input of new entries one after another costs one run, where a
/// number per entry took 4 MB of a million-entry import's memory. At worst (every other record
/// skipped) a run per entry, 8 bytes.
struct WrittenPositions {
    /// The first entry of each run (its index in the order written) and its position.
    private var runs: [(index: UInt32, position: UInt32)] = []
    private var count: UInt32 = 0
    /// The position that would continue the last run.
    private var continuing: UInt32?

    mutating func append(_ position: Int) {
        let position = UInt32(truncatingIfNeeded: position)
        if position != continuing { runs.append((count, position)) }
        count += 1
        continuing = position &+ 1
    }

    /// The position of the entry written `index`-th (from 0).
    func position(ofWritten index: Int) -> Int {
        precondition(index >= 0 && index < Int(count), "only a written entry has a position")
        // The last run starting at or before `index`.
        var low = 0, high = runs.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if Int(runs[middle].index) <= index { low = middle } else { high = middle }
        }
        return Int(runs[low].position) + (index - Int(runs[low].index))
    }
}
