/// What became of one entry of a batch (the HTTP API's POST of an array).
package enum BatchOutcome: Equatable, Sendable {
    case created
    /// The replica holds an entry with this ID and the same content: nothing to do, so a client
    /// retrying a batch it is unsure went through does no harm.
    case alreadyPresent
    case refused(ValidationError)
    /// Valid, but not written because another item of an all-or-nothing batch was refused.
    case notWritten
}

extension Replica {
    /// Writes a batch of entries (each already validated, or the reason it is not) in one
    /// transaction. Each item is written unless refused; with `atomic`, one refusal writes
    /// nothing and the valid items come back `.notWritten`.
    ///
    /// New entries take the bulk path of `importEntries`: sequence numbers counted in the
    /// transaction and written back once, one held INSERT per entry.
    package func addBatch(_ items: [Result<LogEntry, ValidationError>], atomic: Bool) throws -> [BatchOutcome] {
        struct Refused: Error { var outcomes: [BatchOutcome] }
        do {
            return try writeTransaction {
                var batch = BatchWrite(writer: RecordWriter(database: database, counts: countTally, createdAt: now), sequence: try currentSequence(),
                                       mayHaveTombstones: try tombstoneCount() > 0)
                // Near the ceiling, one write at a time, so the incarnation can give way (nextSequence).
                let bulk = batch.sequence < Message.Limits.maximumSequence - UInt64(items.count)
                var outcomes: [BatchOutcome] = []
                outcomes.reserveCapacity(items.count)
                for item in items {
                    switch item {
                    case .failure(let error): outcomes.append(.refused(error))
                    case .success(let entry): outcomes.append(try bulk ? store(entry, into: &batch) : store(entry))
                    }
                }
                if bulk { try database.run("UPDATE replica_vector SET seq = ? WHERE origin = ?", [.counter(batch.sequence), .text(identity.incarnation)]) }
                if atomic && outcomes.contains(where: { if case .refused = $0 { return true } else { return false } }) {
                    throw Refused(outcomes: outcomes)  // rolls the transaction back
                }
                return outcomes
            }
        } catch let refused as Refused {
            return refused.outcomes.map { if case .refused = $0 { return $0 } else { return .notWritten } }
        }
    }

    /// What a bulk batch carries from one entry to the next.
    private struct BatchWrite {
        var writer: RecordWriter
        /// The last sequence number taken, not yet written back to `replica_vector`.
        var sequence: UInt64
        var mayHaveTombstones: Bool
    }

    /// One entry of a bulk batch: an insert unless the ID is taken, then what is there decides.
    private func store(_ entry: LogEntry, into batch: inout BatchWrite) throws -> BatchOutcome {
        if batch.mayHaveTombstones, try storedVersion(id: entry.id)?.place == .tombstone { return Self.deletedHere(entry.id) }
        let sequence = batch.sequence + 1
        let stamp = VersionStamp(hlc: hlc.tick(now: clock.nowMilliseconds()), origin: identity.incarnation,
                                 sequence: sequence, vector: VersionVector([(identity.incarnation, sequence)]), deleted: false)
        if try batch.writer.store(id: entry.id, entry: entry, stamp: stamp, previous: nil, ifAbsent: true) {
            batch.sequence = sequence
            return .created
        }
        return try self.entry(id: entry.id).isSameContent(as: entry) ? .alreadyPresent : Self.otherContent(entry.id)
    }

    /// One entry, written as `add` writes it (the path near the sequence ceiling).
    private func store(_ entry: LogEntry) throws -> BatchOutcome {
        guard let existing = try storedVersion(id: entry.id) else {
            try writeLocal(id: entry.id, entry: entry, previous: nil)
            return .created
        }
        if existing.place == .tombstone { return Self.deletedHere(entry.id) }
        return try self.entry(id: entry.id).isSameContent(as: entry) ? .alreadyPresent : Self.otherContent(entry.id)
    }

    private static func deletedHere(_ id: String) -> BatchOutcome {
        .refused(ValidationError(field: "id", reason: "entry \(id) was deleted; deleted IDs are not reused"))
    }

    private static func otherContent(_ id: String) -> BatchOutcome {
        .refused(ValidationError(field: "id", reason: "entry \(id) already exists with other content; use PUT or PATCH to change it"))
    }
}
