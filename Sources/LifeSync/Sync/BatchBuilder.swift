/// Reads the next batch for a peer from the replica: the changes above `sentUpTo` in the origins
/// the role policy lets us send, in ascending sequence per origin, bounded by count and bytes,
/// with the seals that prove each change is its origin's (PROTOCOL.md §5.2.5): this node seals
/// its own origins' changes as it sends them; another origin's changes go with the seal they
/// came with.
struct BatchBuilder {
    var maximumChanges: Int
    var maximumBytes: Int
    /// Recording metadata never goes to a watch; its rows count as covered all the same.
    var includeRecordings = true
    /// Members of all the batch's seals together: a peer refuses more.
    var maximumSealMembers = Message.Limits.maximumSealMembersPerBatch

    struct Next {
        var changes: [EncodedChange]
        var through: VersionVector
        var seals: [Seal]
    }

    /// Returns nil when there is nothing to send. `allowed` filters origins (role policy); `own`
    /// are this node's origins; another origin's writes go up to `limit(origin)` at most, when it
    /// names one (the relay hold). The IDs of damaged rows passed over are added to `damaged`, and those of
    /// other origins' writes that no seal vouches for (received before seals existed) to
    /// `unsealed`.
    func next(from replica: Replica, sentUpTo: VersionVector, own: Set<String>, limit: (String) -> UInt64? = { _ in nil }, allowed: (String) -> Bool,
              damaged: inout [String], unsealed: inout [String]) throws -> Next? {
        try replica.readSnapshot {
            var vector = try replica.replicaVector()
            var capped = Set<String>()
            for entry in vector.entries where !own.contains(entry.origin) && allowed(entry.origin) {
                if let bound = limit(entry.origin), bound < entry.sequence {
                    vector[entry.origin] = bound
                    capped.insert(entry.origin)
                }
            }
            var changes: [EncodedChange] = []
            var through = VersionVector()
            var bytes = 0
            var relayed: [Int64: Seal] = [:]
            var relayedOrder: [Int64] = []
            var members = 0
            for entry in vector.entries where entry.sequence > sentUpTo[entry.origin] && allowed(entry.origin) {
                let room = maximumChanges - changes.count
                guard room > 0, bytes < maximumBytes, members < maximumSealMembers else { break }
                var rows = try replica.encodedChanges(origin: entry.origin, after: sentUpTo[entry.origin], limit: room)
                let read = rows.count
                // Held rows past the cap are not sent yet; those below it exhaust what may go.
                if capped.contains(entry.origin), let last = rows.last, last.stamp.sequence > entry.sequence {
                    rows = rows.filter { $0.stamp.sequence <= entry.sequence }
                }
                let isOwn = own.contains(entry.origin)
                var candidates = SealCandidates(ranges: isOwn || rows.isEmpty ? []
                    : try replica.storedSealRanges(origin: entry.origin, from: rows.first!.stamp.sequence, through: rows.last!.stamp.sequence))
                var taken = 0
                for change in rows {
                    if change.isDamaged { damaged.append(change.id); taken += 1; continue }
                    if change.kind == .recording && !includeRecordings { taken += 1; continue }
                    var newSeal: (Int64, Seal)?
                    if !isOwn {
                        // The seal it came with, preferring one the batch carries already. A row
                        // that is not the write its seal names (a twin stored beside it, a file
                        // edited by hand) would make the peer refuse the whole batch: left out.
                        guard let (id, seal) = try candidates.vouching(for: change, in: replica, preferring: relayed) else {
                            unsealed.append(change.id)
                            taken += 1
                            continue
                        }
                        if relayed[id] == nil { newSeal = (id, seal) }
                    }
                    let size = BatchBuilder.approximateSize(change) + (newSeal.map { 200 + 40 * $0.1.members.count } ?? 0)
                    let sealMembers = isOwn ? 1 : newSeal?.1.members.count ?? 0
                    if !changes.isEmpty, bytes + size > maximumBytes || members + sealMembers > maximumSealMembers { break }
                    if let (id, seal) = newSeal {
                        relayed[id] = seal
                        relayedOrder.append(id)
                    }
                    changes.append(change)
                    bytes += size
                    members += sealMembers
                    taken += 1
                }
                if taken == rows.count && (read < room || rows.count < read) {
                    // The origin's log is exhausted: everything up to the vector is covered.
                    through[entry.origin] = entry.sequence
                } else if taken > 0 {
                    through[entry.origin] = rows[taken - 1].stamp.sequence
                    break
                } else {
                    break
                }
            }
            guard !changes.isEmpty || !through.isEmpty else { return nil }
            return Next(changes: changes, through: through,
                        seals: try ownSeals(changes, own: own, replica: replica) + relayedOrder.map { relayed[$0]! })
        }
    }

    /// The stored seals that may vouch for one origin's rows, each read once.
    struct SealCandidates {
        let ranges: [(id: Int64, range: ClosedRange<UInt64>)]
        private var loaded: [Int64: Seal?] = [:]
        /// One context for every row's digest (a context costs more than a short message's hash).
        private let hasher = SHA256()

        init(ranges: [(id: Int64, range: ClosedRange<UInt64>)]) { self.ranges = ranges }

        mutating func vouching(for change: EncodedChange, in replica: Replica, preferring carried: [Int64: Seal]) throws -> (Int64, Seal)? {
            let sequence = change.stamp.sequence
            let ids = ranges.filter { $0.range.contains(sequence) }.map(\.id)
            guard !ids.isEmpty else { return nil }
            let digest = change.digest(hasher: hasher)
            for id in ids where carried[id]?.vouches(for: sequence, digest: digest) == true { return (id, carried[id]!) }
            for id in ids where carried[id] == nil {
                if loaded[id] == nil { loaded[id] = try replica.storedSeal(id: id) }
                if let seal = loaded[id] ?? nil, seal.vouches(for: sequence, digest: digest) { return (id, seal) }
            }
            return nil
        }
    }

    /// This node's seals over the changes of its own origins in the batch, one per origin.
    private func ownSeals(_ changes: [EncodedChange], own: Set<String>, replica: Replica) throws -> [Seal] {
        let mine = changes.filter { own.contains($0.stamp.origin) }
        guard !mine.isEmpty else { return [] }
        guard let signer = replica.signer else {
            throw ReplicaError.storage("this node has no key to seal its own writes with (Replica.adoptSigningKey)")
        }
        return try Seal.sealing(mine, as: replica.identity.nodeID, signer: signer)
    }

    /// The change's bytes in a BATCH, near enough: its entry plus the fixed fields, vector and
    /// its seal member.
    static func approximateSize(_ change: EncodedChange) -> Int {
        change.payload.count + 104 + 10 * change.stamp.vector.entries.count
    }
}
