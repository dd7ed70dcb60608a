extension Replica {
    /// What fills an input's absent fields on this node: a new ID of this node's role, now,
    /// and this node as source and device.
    package func entryDefaults(requireTimestamp: Bool = false) -> EntryDefaults {
        let now = self.now
        return EntryDefaults(makeID: { [random, identity] in Identifier.make(role: identity.role, random: random) },
                             recordedAt: now, timestamp: requireTimestamp ? nil : now,
                             source: identity.role.rawValue, deviceId: identity.nodeID)
    }

    /// Defaults for a new entry a user writes: those of `entryDefaults()`, and LifeLog's own
    /// forms taken (a bare UUID `id`, `created_at`, `synced`; LogEntry+LifeLogInput.swift), so a
    /// Drafts action's object goes in as it is.
    package func addDefaults() -> EntryDefaults {
        var defaults = entryDefaults()
        defaults.acceptsLifeLogForm = true
        return defaults
    }

    /// Validates `json` as a new entry (`addDefaults()`) and writes it.
    @discardableResult
    public func add(json: JSONValue) throws -> LogEntry {
        let entry = try Replica.validate(json, defaults: addDefaults())
        try add(entry)
        return entry
    }

    /// Writes a new entry. Refuses an ID the replica already holds, live or deleted.
    public func add(_ entry: LogEntry) throws {
        try writeTransaction {
            if let existing = try storedVersion(id: entry.id) {
                throw ReplicaError.invalid(ValidationError(field: "id", reason: existing.place == .live
                    ? "entry \(entry.id) already exists; use update to change it"
                    : "entry \(entry.id) was deleted; deleted IDs are not reused"))
            }
            try writeLocal(id: entry.id, entry: entry, previous: nil)
        }
    }

    /// Applies an RFC 7396 merge patch to an entry and writes the result as a new version.
    /// The `id` cannot be patched. `check` sees the current version inside the transaction and
    /// may throw to refuse the write (an HTTP If-Match).
    @discardableResult
    public func update(id: String, patch: JSONValue, check: (VersionStamp) throws -> Void = { _ in }) throws -> LogEntry {
        // A null in a merge patch removes the member, and a removed required field would quietly
        // take its default (`"timestamp": null` moved the entry to now): refused instead.
        for field in ["timestamp", "source", "device_id", "data"] where patch[field] == .null {
            throw ReplicaError.invalid(ValidationError(field: field, reason: "is required; null would remove it (give a value\(field == "data" ? ", or {}" : "")"))
        }
        return try rewrite(id: id, check: check) { MergePatch.apply(patch, to: $0.json) }
    }

    /// Replaces an entry whole with `json` (absent fields take their defaults, as for `add`).
    @discardableResult
    public func replace(id: String, with json: JSONValue, check: (VersionStamp) throws -> Void = { _ in }) throws -> LogEntry {
        try rewrite(id: id, check: check) { _ in
            guard case .object(let members) = json, json["id"] == nil else { return json }
            return .object([("id", .string(id))] + members)
        }
    }

    /// Writes what `change` makes of the live entry `id` as its new version.
    private func rewrite(id: String, check: (VersionStamp) throws -> Void, _ change: (LogEntry) -> JSONValue) throws -> LogEntry {
        try writeTransaction {
            guard let current = try storedVersion(id: id), current.place == .live else { throw ReplicaError.notFound(id: id) }
            try check(current.stamp)
            let changed = change(try entry(id: id))
            guard case .object = changed, changed["id"] == .string(id) else {
                throw ReplicaError.invalid(ValidationError(field: "id", reason: "cannot be changed by an update"))
            }
            let after = try Replica.validate(changed, defaults: entryDefaults())
            try writeLocal(id: id, entry: after, previous: current)
            return after
        }
    }

    /// Deletes an entry: a tombstone that replicates and stays.
    public func delete(id: String, check: (VersionStamp) throws -> Void = { _ in }) throws {
        try writeTransaction {
            guard let current = try storedVersion(id: id), current.place == .live else { throw ReplicaError.notFound(id: id) }
            try check(current.stamp)
            try writeLocal(id: id, entry: nil, previous: current)
        }
    }

    static func validate(_ json: JSONValue, defaults: EntryDefaults) throws(ReplicaError) -> LogEntry {
        do { return try LogEntry.validated(from: json, defaults: defaults) } catch { throw .invalid(error) }
    }

    /// A write transaction that first catches up with what other processes wrote to the file
    /// (the clock, and the incarnation another process may have started), starts a new
    /// incarnation if the replica was restored from an older copy (`startFreshIfRestored`), notes
    /// the digests of the writes it made (`noteOwnWrites`), and notes the last sequence number
    /// outside the replica once it committed (`writeMarks`).
    func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        var before = WriteMark(incarnation: identity.incarnation, sequence: 0)
        let result = try database.transaction {
            ownWritesNoted = nil
            defer { ownWritesNoted = nil }
            try reloadIdentity()
            try startFreshIfRestored()
            before = WriteMark(incarnation: identity.incarnation, sequence: try currentSequence())
            let result = try deferringTextIndex(body)
            try noteOwnWrites(after: before)
            try persistClock()
            return result
        }
        recordWriteMark(after: before)
        return result
    }

    /// Stamps and stores one local write. An edit stamps only the fields it changed (PROTOCOL.md
    /// §8), so a concurrent edit of another field elsewhere survives it; it has seen every write
    /// the entry is made of, and `alsoSeen` (the sides a conflict resolution settles). It also
    /// stamps `restamps`, changed or not: a resolution stamps the fields it settles, so that it
    /// wins them and every replica it reaches clears the records of those fields.
    @discardableResult
    func writeLocal(id: String, entry: LogEntry?, previous: StoredVersion?, alsoSeen: VersionVector = VersionVector(),
                    restamps: FieldMask = .none) throws -> VersionStamp {
        let stored = previous == nil ? nil : try storedWrites(id: id)
        // Every write the entry is made of, but another device's it holds only as a whole
        // conflict (an edit below a delete, a delete an update won against): the user has not
        // decided on them, so the new write must not count as having seen them (a resolution
        // does, `alsoSeen`). This node's own writes are seen whatever they are: its vector entry
        // covers them, and what they had seen comes with them, so vectors stay closed.
        let undecided = stored.map { FieldMerge.merge($0.all).losses.filter { $0.fields == nil }.map(\.loser.stamp) } ?? []
        let own = undecided.isEmpty ? [] : try ownOrigins()
        let seen = (stored?.kept ?? []).filter { write in
            own.contains(write.stamp.origin) || !undecided.contains { $0.isSameWrite(as: write.stamp) }
        }.reduce(alsoSeen) { $0.joined(with: $1.stamp.vector) }
        let stamp = try nextStamp(previous: previous?.stamp, deleted: entry == nil, alsoSeen: seen)
        var fields = FieldMask.all
        if let entry, let before = stored?.content { fields = FieldMask.changed(from: before, to: entry).union(restamps) }
        // More extra members than a change may name (a resolution settling a loser's members
        // beside an edit of all of them): the write stamps every field instead, which it may.
        if (fields.extra?.count ?? 0) > FieldMask.maximumExtraNames { fields = .all }
        var writer = RecordWriter(database: database, counts: countTally, createdAt: now)
        if let stored {
            let write = EntryWrite(stamp: stamp, fields: fields, entry: entry)
            let result = FieldMerge.merge(stored.all + [write])
            // (Only a planted bug that stamps without regard for causality breaks this.)
            precondition(result.latest.stamp == stamp && result.content == entry || !plantedBugs.isEmpty,
                         "a local write stands whole where it is made")
            try storeMerged(id: id, result, over: stored, writer: &writer)
            // An edit made where the loser was written, after the winner arrived, has seen both.
            try reconcileConflicts(id: id, result, writes: stored.all + [write], arriving: stamp)
        } else {
            try writer.store(id: id, entry: entry, stamp: stamp, previous: nil)
        }
        return stamp
    }

    /// The stamp of a new local write over `previous`: the next sequence number of this
    /// incarnation, an HLC after the version it replaces whatever the wall clock says (that is
    /// what makes a causally later write win), and the previous causal context plus itself
    /// (and `alsoSeen`: the losing versions a conflict resolution settles).
    func nextStamp(previous: VersionStamp?, deleted: Bool, alsoSeen: VersionVector = VersionVector()) throws -> VersionStamp {
        let sequence = try nextSequence(above: previous?.vector[identity.incarnation] ?? 0)
        var stampTime = hlc.tick(now: clock.nowMilliseconds())
        if let previous, previous.hlc >= stampTime, !plantedBugs.contains(.stampIgnoresCausality) {
            // The write goes above what it replaces; the clock follows only within the drift
            // bound, as for any remote stamp: a version from a clock far ahead (up to the
            // ceiling) must not drag every later local write there.
            hlc.observe(previous.hlc.successor, now: clock.nowMilliseconds())
            stampTime = previous.hlc.successor
        }
        var vector = (previous?.vector ?? VersionVector()).joined(with: alsoSeen)
        vector[identity.incarnation] = sequence
        let stamp = VersionStamp(hlc: stampTime, origin: identity.incarnation, sequence: sequence, vector: vector, deleted: deleted)
        // Strictly after, even over a version stamped at the ceiling: the HLC is equal there, and
        // the vector weighs more (its own entry rose, every other one is the previous version's).
        precondition(previous.map { $0.precedes(stamp) } ?? true || !plantedBugs.isEmpty,
                     "a local write must be stamped after the version it replaces")
        precondition(stamp.hlc <= .maximum && stamp.sequence <= Message.Limits.maximumSequence, "a local stamp within the wire's ceilings")
        return stamp
    }

    /// The last number this incarnation used.
    func currentSequence() throws -> UInt64 {
        UInt64(try database.firstRow("SELECT seq FROM replica_vector WHERE origin = ?", [.text(identity.incarnation)], { $0.int64(0) }) ?? 0)
    }

    /// Takes the next number in this incarnation's sequence (inside the caller's transaction).
    /// An incarnation that has used every number (2^53 − 1 writes; only a forged vector could
    /// get it there) gives way to a fresh one rather than refusing the write.
    ///
    /// `above`: a number the new one must exceed. A version whose vector claims more of this
    /// incarnation than it wrote (forged: only a peer's lie puts it there) would otherwise be
    /// replaced by a write whose vector weighs less than its own — and at the HLC ceiling, where
    /// the weight decides, the edit would lose to what it replaced. Skipping numbers costs
    /// nothing: gaps in an origin's log read as superseded writes.
    func nextSequence(above: UInt64 = 0) throws -> UInt64 {
        var floor = Int64(clamping: above)  // a vector entry is bounded by maximumSequence where it entered
        if max(try currentSequence(), above) >= Message.Limits.maximumSequence {
            try startIncarnation()
            floor = 0  // the claim was about the old incarnation
        }
        guard let seq = try database.firstRow("UPDATE replica_vector SET seq = max(seq, ?2) + 1 WHERE origin = ?1 RETURNING seq",
                                              [.text(identity.incarnation), .integer(floor)], { $0.int64(0) }) else {
            throw ReplicaError.storage("the replica's own origin is missing from replica_vector")
        }
        precondition(seq > floor && UInt64(seq) <= Message.Limits.maximumSequence, "a sequence above the claim and within the ceiling")
        return UInt64(seq)
    }
}
