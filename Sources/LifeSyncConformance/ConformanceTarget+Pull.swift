import LifeSync

/// Taking changes from the target: the receiving half of delta sync (§7.4), as a client that
/// applies everything it is sent (in memory) and acknowledges each batch as it arrives.
extension ConformanceTarget {
    /// What one pull delivered.
    package struct Pulled {
        package var changes: [Change] = []
        package var batches = 0
        /// The join of every batch's `through`.
        package var through = VersionVector()
        /// The vector of the CAUGHT_UP that ended the pull.
        package var caughtUp = VersionVector()
        /// Every origin-table entry that named an owner.
        package var owners: [String: OriginInfo] = [:]
        /// Every seal the batches carried.
        package var seals: [Seal] = []

        /// The last change of `id` delivered: whether the target sent the entry at all.
        func change(id: String) -> Change? { changes.last { $0.id == id } }
    }

    /// Reads BATCHes, acknowledging each, until CAUGHT_UP. Batch IDs must count from 1 (§5.2),
    /// and every change must be covered by its batch's `through` (§5.2.1).
    func pull(on connection: ProbeConnection, firstBatchID: UInt64 = 1, limit: Int = 1_000_000) throws -> Pulled {
        var pulled = Pulled()
        return try waitFor("CAUGHT_UP after the target's batches", on: connection) { message in
            switch message {
            case .batch(let batch):
                let due = firstBatchID + UInt64(pulled.batches)
                guard batch.id == due else {
                    throw ConformanceFailure("BATCH \(batch.id) where BATCH \(due) was due: batch IDs count from 1 per connection, +1 per BATCH (§5.2)", connection)
                }
                for change in batch.changes where change.stamp.sequence > batch.through[change.stamp.origin] {
                    throw ConformanceFailure("BATCH \(batch.id) sends \(change.id) at \(change.stamp.origin):\(change.stamp.sequence) above its through (\(batch.through[change.stamp.origin])) (§5.2.1)", connection)
                }
                try checkSeals(of: batch, on: connection)
                pulled.batches += 1
                pulled.changes += batch.changes
                pulled.seals += batch.seals
                pulled.through = pulled.through.joined(with: batch.through)
                for info in batch.origins where info.nodeID != nil { pulled.owners[info.origin] = info }
                guard pulled.changes.count <= limit else { throw ConformanceFailure("more than \(limit) changes pulled", connection) }
                _ = connection.send(.ack(Ack(batchID: batch.id, applied: UInt32(batch.changes.count), conflicts: 0)))
                return nil
            case .caughtUp(let vector):
                pulled.caughtUp = vector
                return pulled
            default:
                return nil
            }
        }
    }

    /// Every change the target sends is vouched for by a seal of its origin that verifies, made
    /// as the origin's owner; the target's own with the key the runner pins for it (§5.2.5).
    func checkSeals(of batch: Batch, on connection: ProbeConnection) throws {
        let owners = Dictionary(batch.origins.compactMap { info in info.nodeID.map { (info.origin, $0) } }, uniquingKeysWith: { a, _ in a })
        for seal in batch.seals {
            guard seal.hasValidSignature(ECDSAP256Verifier()) else {
                throw ConformanceFailure("BATCH \(batch.id): a seal of \(seal.origin) made as \(seal.nodeID) does not verify with the key it carries (§5.2.5)", connection)
            }
            if let owner = owners[seal.origin], owner != seal.nodeID {
                throw ConformanceFailure("BATCH \(batch.id): a seal of \(seal.origin) is made as \(seal.nodeID), the origin table names \(owner) (§5.2.5)", connection)
            }
            if seal.nodeID == trusted.nodeID, SHA256.hash(seal.publicKey) != trusted.fingerprint {
                throw ConformanceFailure("BATCH \(batch.id): the target seals with a key other than its own (§5.2.5)", connection)
            }
        }
        for change in batch.changes {
            let digest = change.digest
            guard batch.seals.contains(where: { $0.origin == change.stamp.origin && $0.vouches(for: change.stamp.sequence, digest: digest) }) else {
                throw ConformanceFailure("BATCH \(batch.id) sends \(change.id) at \(change.stamp.origin):\(change.stamp.sequence) with no seal of its origin vouching for it (§5.2.5)", connection)
            }
        }
    }

    /// A new session that claims everything the target last said it holds, but of each origin
    /// of `since` only up to the sequence given: the target sends exactly its current versions
    /// of those origins' later writes (and whatever else is new since), and the pull keeps those.
    func readBack(_ since: [String: UInt64]) throws -> Pulled {
        var claim = knownVector
        for (origin, sequence) in since { claim[origin] = sequence }
        let (connection, _) = try open(vector: claim)
        defer { connection.close() }
        var pulled = try pull(on: connection)
        pulled.changes = pulled.changes.filter { change in since[change.stamp.origin].map { change.stamp.sequence > $0 } ?? false }
        return pulled
    }

    /// What the target holds now, by its HELLO on a session that asks for nothing.
    @discardableResult
    func refreshVector() throws -> VersionVector {
        let (connection, hello) = try open(vector: VersionVector(), capabilities: [.seals])
        connection.close()
        return hello.vector
    }

    /// The write that stands for entry `id` at the target now (its greatest live write, or its
    /// tombstone), by pulling the origins that may hold it from where they stood before it was
    /// written. The target also sends the earlier writes it keeps (a write that still wins a
    /// field, the delete an update outlived: §8), so the last one delivered need not be it: the
    /// merge of all of them decides, as at any receiver.
    func current(_ id: String, since: [String: UInt64]) throws -> Change? {
        let writes = try heldWrites(id, since: since)
        guard !writes.isEmpty else { return nil }
        let standing = FieldMerge.merge(writes).latest
        return Change(id: id, stamp: standing.stamp, entry: standing.entry, fields: standing.fields)
    }

    /// The writes of entry `id` the target delivers from the origins of `since` (each above the
    /// sequence given), as the merge takes them.
    func heldWrites(_ id: String, since: [String: UInt64]) throws -> [EntryWrite] {
        try readBack(since).changes.filter { $0.id == id && $0.kind == .entry }
            .map { EntryWrite(stamp: $0.stamp, fields: $0.fields, entry: $0.entry) }
    }
}
