import LifeSync

/// Write marks kept by the simulated device, beside its replica: a restore of the replica does
/// not bring back an older mark (as `FileWriteMarks` live outside the replica's files).
final class MemoryWriteMarks: WriteMarkStore {
    /// Every mark, as a restore of the whole device puts them back.
    var marks: [String: WriteMark] = [:]
    func mark(nodeID: String) -> WriteMark? { marks[nodeID] }
    func record(_ mark: WriteMark, nodeID: String) { marks[nodeID] = mark }
}

/// Backups and restores: a node's replica is copied aside at a random moment (by `lifesync
/// backup`, which marks the copy, or by hand) and later put back, the node down meanwhile. Drawn
/// from a stream of their own, so the other faults of a seed stay where they were.
extension Simulator {
    func backupOrRestore() {
        guard options.restores else { return }
        let step = Self.restoreSteps.pick(restoreRandom)
        let victim = names[Int(restoreRandom.next(below: UInt64(names.count)))]
        switch step {
        case .backup: takeBackup(of: victim, marked: restoreRandom.next(below: 2) == 0)
        case .restore where nodes[victim]?.backup != nil: restore(victim)
        case .restoreWhole where nodes[victim]?.backup != nil: restore(victim, whole: true)
        case .restore, .restoreWhole, .nothing: break
        }
    }

    /// At each fault, one row (`WeightedTable`): a copy taken aside, one put back (the replica
    /// alone, or the whole device: its write marks too), or nothing.
    enum RestoreStep: Sendable { case backup, restore, restoreWhole, nothing }

    static let restoreSteps = WeightedTable<RestoreStep>([(.backup, 20), (.restore, 15), (.restoreWhole, 15), (.nothing, 50)])

    func takeBackup(of name: String, marked: Bool) {
        guard let node = nodes[name] else { return }
        do {
            let path = "file:lifesync-sim-\(seed)-\(name)-backup-\(ObjectIdentifier(self).hashValue)?mode=memory&cache=shared"
            let copy = try node.backup ?? Database(path: path)
            try node.keeper.copy(into: copy)
            if marked { try Replica.markAsBackupCopy(copy, of: name, at: Timestamp(millisecondsSince1970: now)) }
            node.backup = copy
            node.backupTime = now
            node.backupMarks = node.marks.marks
            node.backupFiles = node.storage.files
            count(marked ? "backup" : "copy_aside")
            trace.record(now, "\(marked ? "backup" : "copy aside") \(name)")
        } catch {
            violations.append("setup: a backup of \(name) failed: \(error)")
        }
    }

    /// The node goes down, its replica is put back from the copy, and it restarts 1–60 s later.
    /// Writes that only this replica held (its own made after the copy, or others' it alone had
    /// received) are gone with it: the user restored an older state on purpose, so the ledger
    /// lets them go (nothing else may). `whole`: the device was restored whole, its write marks
    /// with the replica (a phone put back from its backup), so nothing local tells it was
    /// restored: only its peers' histories can (PROTOCOL.md §7.2.3).
    func restore(_ name: String, whole: Bool = false) {
        guard let node = nodes[name], let backup = node.backup else { return }
        // Recordings attached between the copy and its restore are left out of the model for now:
        // their bytes outlive the replica's record of them on that device.
        guard !attached.contains(where: { $0.node == name && $0.time > node.backupTime }) else { return }
        crash(name)
        do {
            try backup.copy(into: node.keeper)
        } catch {
            violations.append("setup: restoring \(name) failed: \(error)")
            return
        }
        node.restoredAt = now
        if whole {
            node.marks.marks = node.backupMarks
            node.storage.putBack(files: node.backupFiles)
            for recording in attached where !nodes.values.contains(where: { $0.storage.files[recording.fileName].map { SHA256.hash($0) == recording.sha256 } ?? false }) {
                recordingsLostByRestore.insert(recording.id)
            }
        }
        count(whole ? "restore_whole" : "restore")
        trace.record(now, "restore \(whole ? "whole " : "")\(name)")
        forgetWritesLostByRestore()
        network.schedule(at: now + 1_000 + Int64(restoreRandom.next(below: 60_000))) { [unowned self] in restart(name) }
    }

    private func forgetWritesLostByRestore() {
        let replicas = names.compactMap { name -> Replica? in
            guard let node = nodes[name] else { return nil }
            return node.replica ?? (try? Replica(path: node.path, clock: node.clock, random: nodeRandom))
        }
        // A write is named by its stamp and HLC: a device restored whole writes under numbers it
        // wrote before, and losing the new write there must not forget the old one its peers hold
        // (seed 3037 with two phones).
        func name(_ write: WriteLedger.Write) -> String { "\(write.id)|\(write.stamp.origin)#\(write.stamp.sequence)|\(write.stamp.hlc.rawValue)" }
        let lost = Set(ledger.writes.filter { write in
            !replicas.contains { absorbed(write, by: $0) }
        }.map(name))
        ledger.forget { lost.contains(name($0)) }
    }
}

extension Simulator {
    /// A node repaired a forked history (a whole-device restore): the ledger follows its writes
    /// where they moved. Those it still held moved as the repair says — its writes under
    /// incarnations started since that had seen the forked ones among them; those of the forked
    /// origin it made since its last restore and no longer held (superseded there) moved by the
    /// same rule, so the writes that replaced them still read as having seen them. (Restore
    /// seed 1399 and, with hostile peers, 179: a write made offline after a whole restore, then
    /// edited and deleted under the incarnation the next handshake started, before the one
    /// after found the fork. The later writes once stayed where they were, naming the forked
    /// writes by numbers the old history had.)
    func followRepair(_ repair: HistoryRepair, on name: String) {
        let since = nodes[name]?.restoredAt ?? .max
        ledger.remap { write in
            guard write.node == name else { return nil }
            if let moved = repair.reissued.first(where: {
                $0.id == write.id && $0.old.origin == write.stamp.origin && $0.old.sequence == write.stamp.sequence && $0.old.hlc == write.stamp.hlc
            }) {
                return moved.new
            }
            guard write.stamp.origin == repair.origin, write.stamp.sequence > repair.fork, write.time >= since else { return nil }
            let vector = Replica.translated(write.stamp.vector, repair.origin, above: repair.fork, to: repair.movedTo, base: repair.base)
            return VersionStamp(hlc: write.stamp.hlc, origin: repair.movedTo, sequence: repair.base + (write.stamp.sequence - repair.fork),
                                vector: vector, deleted: write.stamp.deleted)
        }
    }
}
