import LifeSync

/// Every local write the simulation made and the node acknowledged (the call returned): what the
/// invariant checker holds the replicas to.
struct WriteLedger {
    struct Write {
        let node: String
        let id: String
        /// The write as its node made it: stamp, the fields it changed, its entry.
        let write: EntryWrite
        let time: Int64

        var stamp: VersionStamp { write.stamp }
    }

    private(set) var writes: [Write] = []

    mutating func record(node: String, id: String, write: EntryWrite, time: Int64) {
        writes.append(Write(node: node, id: id, write: write, time: time))
    }

    /// Drops the writes `lost` picks: ones a user gave up on purpose (a restore of an older copy
    /// made before they reached any other replica).
    mutating func forget(where lost: (Write) -> Bool) {
        writes.removeAll(where: lost)
    }

    /// Gives the writes `moved` names a new stamp (a history repair moved them, PROTOCOL.md §7.2.3).
    mutating func remap(_ moved: (Write) -> VersionStamp?) {
        for (index, write) in writes.enumerated() {
            guard let stamp = moved(write) else { continue }
            writes[index] = Write(node: write.node, id: write.id, write: EntryWrite(stamp: stamp, fields: write.write.fields, entry: write.write.entry),
                                  time: write.time)
        }
    }

    /// The writes to one record, in the order they were made.
    func writes(to id: String) -> [Write] { writes.filter { $0.id == id } }

    /// Record IDs in first-write order.
    var ids: [String] {
        var seen = Set<String>()
        return writes.compactMap { seen.insert($0.id).inserted ? $0.id : nil }
    }
}
