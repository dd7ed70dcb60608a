/// Reads the next batch for a peer from the replica: the changes above `sentUpTo` in the origins
/// the role policy lets us send, in ascending sequence per origin, bounded by count and bytes.
struct BatchBuilder {
    var maximumChanges: Int
    var maximumBytes: Int
    /// Recording metadata never goes to a watch; its rows count as covered all the same.
    var includeRecordings = true

    /// Returns nil when there is nothing to send. `allowed` filters origins (role policy). The IDs
    /// of damaged rows passed over are added to `damaged`.
    func next(from replica: Replica, sentUpTo: VersionVector, allowed: (String) -> Bool,
              damaged: inout [String]) throws -> (changes: [EncodedChange], through: VersionVector)? {
        try replica.readSnapshot {
            let vector = try replica.replicaVector()
            var changes: [EncodedChange] = []
            var through = VersionVector()
            var bytes = 0
            for entry in vector.entries where entry.sequence > sentUpTo[entry.origin] && allowed(entry.origin) {
                let room = maximumChanges - changes.count
                guard room > 0, bytes < maximumBytes else { break }
                let rows = try replica.encodedChanges(origin: entry.origin, after: sentUpTo[entry.origin], limit: room)
                var taken = 0
                for change in rows {
                    if change.isDamaged { damaged.append(change.id); taken += 1; continue }
                    if change.kind == .recording && !includeRecordings { taken += 1; continue }
                    let size = BatchBuilder.approximateSize(change)
                    if !changes.isEmpty, bytes + size > maximumBytes { break }
                    changes.append(change)
                    bytes += size
                    taken += 1
                }
                if taken == rows.count && rows.count < room {
                    // The origin's log is exhausted: everything up to the vector is covered.
                    through[entry.origin] = entry.sequence
                } else if taken > 0 {
                    through[entry.origin] = rows[taken - 1].stamp.sequence
                    break
                } else {
                    break
                }
            }
            return changes.isEmpty && through.isEmpty ? nil : (changes, through)
        }
    }

    /// The change's bytes in a BATCH, near enough: its entry plus the fixed fields and vector.
    static func approximateSize(_ change: EncodedChange) -> Int {
        change.payload.count + 64 + 10 * change.stamp.vector.entries.count
    }
}
