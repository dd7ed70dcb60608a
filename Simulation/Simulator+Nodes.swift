import LifeSync

/// Crashing and restarting nodes, and the workload's writes.
extension Simulator {
    /// The node stops at once: in-memory state (sessions, timers, anything not committed) is
    /// gone; its SQLite file (here: shared memory kept by a second connection) survives.
    func crash(_ name: String) {
        guard let node = nodes[name], network.isUp(name) else { return }
        count("crash")
        trace.record(now, "crash \(name)")
        network.crash(name)
        node.storage.dropPendingChecks()
        node.replica = nil
    }

    /// With `checksLater`: `name`'s chunks waiting for their check are checked 1–4 ms from now,
    /// a random number of them, and the node ticked, as a verdict wakes the runtime's loop.
    func scheduleChecks(on name: String) {
        guard let node = nodes[name], !node.checksScheduled else { return }
        node.checksScheduled = true
        network.schedule(at: now + 1 + Int64(checkRandom.next(below: 4))) { [unowned self] in
            node.checksScheduled = false
            let pending = node.storage.pendingChecks
            guard pending > 0, let core = network.core(of: name) else { return }
            count("chunk_checks_later")
            node.storage.judgePendingChunks(1 + Int(checkRandom.next(below: UInt64(pending))))
            network.perform(core.tick(now: now), on: name)
            if node.storage.pendingChecks > 0 { scheduleChecks(on: name) }
        }
    }

    func count(_ kind: String) { network.count(kind) }

    /// The workload's steps, one row each (`WeightedTable`).
    enum Operation: Sendable { case add, update, delete, attach, deleteRecording }

    static let operations = WeightedTable<Operation>([(.add, 50), (.update, 30), (.delete, 10), (.attach, 7), (.deleteRecording, 3)])

    /// One random local write on a random node that is up (a watch attaches rather than deletes
    /// a recording).
    func performOperation() {
        let up = names.filter { network.isUp($0) }
        guard !up.isEmpty else { return }
        let name = up[Int(workload.next(below: UInt64(up.count)))]
        switch Self.operations.pick(workload) {
        case .add: write(on: name, kind: .add)
        case .update: write(on: name, kind: .update)
        case .delete: write(on: name, kind: .delete)
        case .deleteRecording where nodes[name]!.role != .watch: deleteRecording(on: name)
        case .attach, .deleteRecording: attach(on: name)
        }
    }

    /// A new recording of 1–60 KB on `name` (what `lifesync attach` does, in memory).
    func attach(on name: String) {
        guard let node = nodes[name], let replica = node.replica, let core = network.core(of: name) else { return }
        let size = 1 + Int(workload.next(below: 60_000))
        var bytes = [UInt8](repeating: 0, count: size)
        for i in stride(from: 0, to: size, by: 8) {
            let value = workload.nextUInt64()
            for j in 0..<min(8, size - i) { bytes[i + j] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(j))) }
        }
        let id = Identifier.make(role: node.role, random: workload)
        let sha = SHA256.hash(bytes)
        let recording = Recording(id: id, fileName: id + ".m4a", size: UInt64(size), sha256: sha, mediaType: "audio/mp4", entryID: nil,
                                  originNode: replica.identity.nodeID, createdAt: replica.now)
        node.storage.put(recording.storageName, bytes)
        // Half the time the digests are kept, as `attach` keeps them on disk: sent without a hash.
        if checkRandom.next(below: 2) == 0 { node.storage.keepChunkDigests(recording.storageName, chunkSize: Simulator.chunkSize) }
        do {
            try replica.addRecording(recording, signedBy: SimulatedSigner(name: name, seed: seed))
            attached.append((id, name, sha, recording.storageName, now))
            trace.record(now, "attach \(name) \(id) \(size)")
            perform(core.localWrite(now: now), on: name)
        } catch {
            violations.append("workload: attaching on \(name) failed: \(error)")
        }
    }

    /// An explicit user delete of a recording a full replica holds.
    func deleteRecording(on name: String) {
        guard let node = nodes[name], let replica = node.replica, let core = network.core(of: name),
              let live = try? replica.recordingStatuses().filter({ !$0.deleted && $0.file == .present }), !live.isEmpty else { return }
        let target = live[Int(workload.next(below: UInt64(live.count)))].recording
        do {
            userDeletedRecordings.insert(target.id)
            try replica.deleteRecording(id: target.id, from: node.storage)
            trace.record(now, "delete recording \(name) \(target.id)")
            perform(core.localWrite(now: now), on: name)
        } catch {
            violations.append("workload: deleting a recording on \(name) failed: \(error)")
        }
    }

    /// Invariant 5: a file leaves a node only by an explicit delete (the recording is deleted in
    /// that replica, and some user did delete it) or, on a watch, after a phone confirmed it
    /// with the right checksum — and an honest phone really holds those bytes (a peer merely
    /// calling itself a phone proves nothing).
    func checkRemoval(of fileName: String, on name: String) {
        guard let node = nodes[name], let replica = node.replica else { return }
        let id = String(fileName.prefix { $0 != "." })
        guard let known = try? replica.recording(id: id) else {
            violations.append("recordings: \(name) removed \(fileName), which it has no metadata for")
            return
        }
        if known.deleted {
            if !userDeletedRecordings.contains(id) {
                violations.append("recordings: \(name) removed \(fileName) as deleted, but no user deleted \(id) (at \(now) ms)")
            }
            return
        }
        let confirmed = ((try? replica.confirmations(id: id)) ?? []).contains { $0.role == .phone && $0.sha256 == known.recording.sha256 }
        if node.role != .watch || !confirmed {
            violations.append("recordings: \(name) removed \(fileName) before a phone confirmed it (at \(now) ms)")
            return
        }
        let heldByPhone = names.contains { other in
            guard let phone = nodes[other], phone.role == .phone, let bytes = phone.storage.files[fileName] else { return false }
            return SHA256.hash(bytes) == known.recording.sha256
        }
        if !heldByPhone && !userDeletedRecordings.contains(id) {
            violations.append("recordings: \(name) removed \(fileName) on a confirmation, but no honest phone holds its bytes (at \(now) ms)")
        }
    }

    enum WriteKind { case add, update, delete }

    /// An edit of one or two fields, so concurrent edits meet on the same field and on different
    /// ones (the per-field merge): the text, the tags, the category, or the text with the tags.
    /// Every fourth text edit also sets an extra member of `data`, and every fourth tag edit sets
    /// or removes another (PROTOCOL.md §5.2.2): fields by name, merged like the rest.
    func fieldEdit(number: Int, on name: String) -> JSONValue {
        let text: (String, JSONValue) = ("text", .string("u\(number) on \(name)"))
        let tags: (String, JSONValue) = ("tags", .array([.string("t\(number)")]))
        let weather: (String, JSONValue) = ("weather", .object([("sky", .string("s\(number)")), ("degrees", .number(Double(number % 40)))]))
        let image: (String, JSONValue) = ("image_url", number % 8 == 1 ? .null : .string("https://example.org/\(number).jpg"))
        switch workload.next(below: 4) {
        case 0: return .object([("data", .object(number % 4 == 0 ? [text, weather] : [text]))])
        case 1: return .object([("data", .object(number % 4 == 1 ? [tags, image] : [tags]))])
        case 2: return .object([("category", .string(["mood", "note", "work", "health"][Int(workload.next(below: 4))]))])
        default: return .object([("data", .object([text, tags]))])
        }
    }

    func write(on name: String, kind: WriteKind) {
        guard let node = nodes[name], let replica = node.replica, let core = network.core(of: name) else { return }
        do {
            var id: String
            switch kind {
            case .add:
                let entry = try replica.add(json: .object([
                    ("category", .string(["mood", "note", "work"][Int(workload.next(below: 3))])),
                    ("data", .object([("text", .string("w\(ledger.writes.count) on \(name)"))]
                        + (ledger.writes.count % 5 == 0 ? [("image_url", .string("https://example.org/w\(ledger.writes.count).jpg"))] : []))),
                ]))
                id = entry.id
            case .update, .delete:
                let live = try replica.entries(matching: EntryQuery(limit: 1_000_000)).map(\.id).sorted()
                guard !live.isEmpty else { return write(on: name, kind: .add) }
                id = live[Int(workload.next(below: UInt64(live.count)))]
                if kind == .update {
                    try replica.update(id: id, patch: fieldEdit(number: ledger.writes.count, on: name))
                } else {
                    try replica.delete(id: id)
                }
            }
            guard let made = try replica.entryWrites(id: id).last else { return }
            ledger.record(node: name, id: id, write: made, time: now)
            let stamp = made.stamp
            trace.record(now, "write \(kind) \(name) \(id) \(stamp.origin)#\(stamp.sequence)")
            perform(core.localWrite(now: now), on: name)
        } catch {
            violations.append("workload: a write on \(name) failed: \(error)")
        }
    }
}
