import LifeSync

extension Simulator {
    /// Converged: every full replica is up and holds the same state, and each node's own writes
    /// have reached every full replica — each is there, or absorbed by what is there (superseded,
    /// or beaten by a concurrent winner: receiving it would change nothing).
    ///
    /// A replica's vector is not the proof: it advances only as far as delivered data justifies
    /// (`DeltaSync.admit`), and a write that lost to a concurrent one at a relay never travels on,
    /// so nothing delivered can prove it to the replicas behind that relay.
    func checkConvergence() -> Bool {
        let full = names.filter { nodes[$0]!.role.isFullReplica }
        guard full.allSatisfy({ nodes[$0]!.isUp }), !full.isEmpty else { return false }
        guard let hashes = try? full.map({ try nodes[$0]!.replica!.canonicalHash() }), Set(hashes).count == 1 else { return false }
        let replicas = full.map { nodes[$0]!.replica! }
        guard let vectors = try? replicas.map({ try $0.replicaVector() }) else { return false }
        for name in names {
            guard let replica = nodes[name]?.replica ?? (try? Replica(path: nodes[name]!.path, clock: nodes[name]!.clock, random: nodeRandom)) else { return false }
            guard let own = try? replica.ownOrigins(), let vector = try? replica.replicaVector() else { return false }
            for origin in own where vector[origin] > 0 {
                for (other, otherVector) in zip(replicas, vectors) where otherVector[origin] < vector[origin] {
                    guard absorbed(origin: origin, above: otherVector[origin], by: other) else { return false }
                }
            }
        }
        return recordingsSettled()
    }

    /// Whether every ledger write of `origin` above `sequence` would change nothing at `replica`.
    func absorbed(origin: String, above sequence: UInt64, by replica: Replica) -> Bool {
        ledger.writes.allSatisfy { write in
            guard write.stamp.origin == origin, write.stamp.sequence > sequence else { return true }
            guard let held = try? replica.versionStamp(id: write.id) else { return false }
            switch Merge.decide(local: held, remote: write.stamp) {
            case .identical, .keepLocal: return true
            case .takeRemote: return false
            }
        }
    }

    /// Every live recording's bytes are on every full replica, and no watch still holds one that
    /// no phone confirmed — unless a user deleted it: a watch receives no metadata, so it never
    /// learns of the delete and keeps its copy (by design: a peer's FAILURE `deleted` removes
    /// nothing).
    func recordingsSettled() -> Bool {
        for name in names {
            guard let node = nodes[name], let replica = node.replica, let statuses = try? replica.recordingStatuses() else { return false }
            for status in statuses where !status.deleted {
                if node.role.isFullReplica && status.file != .present { return false }
                if node.role == .watch && status.file == .present && !status.confirmedBy.contains(where: { $0.role == .phone })
                    && !userDeletedRecordings.contains(status.recording.id) { return false }
            }
        }
        return true
    }
}

/// The invariants of DESIGN.md, checked against the write ledger once the run has settled.
struct InvariantChecker {
    let simulator: Simulator

    func check() -> [String] {
        let full = simulator.names.filter { simulator.nodes[$0]!.role.isFullReplica }
        guard let reference = full.first.flatMap({ simulator.nodes[$0]?.replica }) else { return [] }
        var violations: [String] = []
        // Every loser any node kept.
        var kept = Set<String>()
        for name in simulator.names {
            guard let replica = simulator.nodes[name]?.replica else { continue }
            for conflict in (try? replica.conflicts()) ?? [] { kept.insert("\(conflict.entryID)|\(conflict.loser.origin)|\(conflict.loser.sequence)") }
        }
        // A record the hostile node created is its own: its later writes may claim (a forged
        // version vector) to have seen honest edits of it, which then go without a conflict copy
        // as superseded ones do — and honest edits inherit those claims. Invariants 2 and 3 cannot
        // tell those claims from true ones; such records are held to convergence only.
        let hostileRecords = simulator.hostile?.createdRecords ?? []
        for id in simulator.ledger.ids where !hostileRecords.contains(id) {
            let writes = simulator.ledger.writes(to: id)
            guard let final = try? reference.versionStamp(id: id) else {
                violations.append("no acknowledged write lost: \(id) (written on \(writes[0].node)) is missing from the full replicas")
                continue
            }
            // Accounted for: the final version, one it had seen, a kept loser, or one seen by a write
            // that is itself accounted for (a local edit superseded by a later edit that lost).
            var accounted = Set<String>()
            for write in writes {
                let w = write.stamp
                if (w.origin == final.origin && w.sequence == final.sequence) || final.vector[w.origin] >= w.sequence
                    || kept.contains("\(id)|\(w.origin)|\(w.sequence)") { accounted.insert(w.sequenceKey) }
            }
            var grew = true
            while grew {
                grew = false
                for write in writes where !accounted.contains(write.stamp.sequenceKey) {
                    if writes.contains(where: { accounted.contains($0.stamp.sequenceKey) && $0.stamp.vector[write.stamp.origin] >= write.stamp.sequence }) {
                        accounted.insert(write.stamp.sequenceKey)
                        grew = true
                    }
                }
            }
            for write in writes {
                let w = write.stamp
                let isFinal = w.origin == final.origin && w.sequence == final.sequence
                // Invariant 3: a causally later write always wins.
                if !isFinal && w.vector[final.origin] >= final.sequence {
                    let kind = w.deleted && !final.deleted ? "no resurrection" : "causality"
                    violations.append("\(kind): \(id): the write \(w.origin.prefix(8))#\(w.sequence) on \(write.node) had seen the final version \(final.origin.prefix(8))#\(final.sequence) but lost to it")
                }
                // Invariant 2: present, superseded by a causally later write, or kept as a loser.
                if !accounted.contains(write.stamp.sequenceKey) {
                    violations.append("no acknowledged write lost: \(id): the write \(w.origin.prefix(8))#\(w.sequence) on \(write.node) at \(write.time) ms is neither the final version (\(final.origin.prefix(8))#\(final.sequence)\(final.deleted ? " delete" : ""), vector \(final.vector.entries.map { "\($0.origin.prefix(8))=\($0.sequence)" })), nor seen by it, nor kept in a conflicts table")
                }
            }
        }
        violations += checkRecordings(full: full)
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
                if SHA256.hash(bytes).hex != known.recording.sha256 {
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
                guard let bytes = node.storage.files[recording.fileName], SHA256.hash(bytes).hex == recording.sha256 else {
                    violations.append("recordings: \(recording.id) (attached on \(recording.node)) is not byte-identical on \(name)"); continue
                }
            }
        }
        return violations
    }
}

extension VersionStamp {
    var sequenceKey: String { "\(origin)#\(sequence)" }
}
