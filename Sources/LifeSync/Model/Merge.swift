/// The replication metadata of one version of a record.
public struct VersionStamp: Equatable, Sendable {
    /// The HLC of the write that produced this version.
    package var hlc: HLCTimestamp
    /// The incarnation that made the write, and its place in that incarnation's sequence.
    public var origin: String
    public var sequence: UInt64
    /// The causal context of the write: every write its writer had seen, by origin (its own included).
    package var vector: VersionVector
    public var deleted: Bool

    package init(hlc: HLCTimestamp, origin: String, sequence: UInt64, vector: VersionVector, deleted: Bool) {
        self.hlc = hlc
        self.origin = origin
        self.sequence = sequence
        self.vector = vector
        self.deleted = deleted
    }

    /// The last-writer-wins order: HLC, then the weight of the vector, then origin, then
    /// sequence — total, so every replica picks the same winner.
    ///
    /// The weight decides only between equal HLCs, and it is there for one case: HLCs saturate
    /// at `HLCTimestamp.maximum`, so an edit of a version stamped at the ceiling is stamped at
    /// the ceiling too. Its vector holds the replaced version's plus its own new sequence, so it
    /// weighs more, and the causally later write still wins everywhere (with origin first, a
    /// ceiling version from a greater origin beat every later edit of it at every other replica).
    func precedes(_ other: VersionStamp) -> Bool {
        if hlc != other.hlc { return hlc < other.hlc }
        let (weight, otherWeight) = (vector.weight, other.vector.weight)
        if weight != otherWeight { return weight < otherWeight }
        if origin != other.origin { return origin < other.origin }
        return sequence < other.sequence
    }

    /// Two stamps of the same write.
    func isSameWrite(as other: VersionStamp) -> Bool { origin == other.origin && sequence == other.sequence }
}

/// What merging a remote version into the local one decides.
package enum MergeDecision: Equatable, Sendable {
    /// The remote version is the same write as the local one: nothing to do.
    case identical
    /// The local version stays. `conflict`: the remote write had not seen it (they are concurrent),
    /// so the remote one is kept as a losing version.
    case keepLocal(conflict: Bool)
    /// The remote version replaces the local one. `conflict`: the remote write had not seen the
    /// local one, so the local one is kept as a losing version ("keep the local copy as backup").
    case takeRemote(conflict: Bool)
}

/// The merge rule (DESIGN.md, Clocks and merge), as a pure function.
///
/// The winner is the greater stamp in LWW order (HLC, vector weight, origin, sequence). A version's vector is
/// the causal context of its write — every write its writer had seen — so the loser is a
/// conflict exactly when the winner's writer had not seen it; otherwise it was superseded.
/// When one version causally follows the other it is always the greater stamp, because a write is
/// stamped after the version it replaces (`Replica.writeLocal`), whatever the wall clocks say: so
/// "causality beats timestamps" holds without a second rule, and max-by-stamp is a semilattice
/// (commutative, associative, idempotent).
///
/// DESIGN.md sketched "dominance wins, else LWW" over a single stored version with joined
/// vectors. That rule is not commutative (a causally later write with a slow clock can lose in one
/// delivery order and win in another), and a joined vector forgets which writes the winning
/// content had really seen, so conflicts go unrecorded on the losing side or are recorded for
/// writes that were superseded.
package enum Merge {
    package static func decide(local: VersionStamp, remote: VersionStamp) -> MergeDecision {
        if local.isSameWrite(as: remote) { return .identical }
        return local.precedes(remote)
            ? .takeRemote(conflict: !remote.hasSeen(local))
            : .keepLocal(conflict: !local.hasSeen(remote))
    }
}

extension VersionStamp {
    /// Whether this version's writer had seen the write `other`.
    func hasSeen(_ other: VersionStamp) -> Bool { vector[other.origin] >= other.sequence }
}

extension VersionVector {
    /// The sum of the vector's sequences, without overflow (4,096 origins of up to 2^53 − 1 each
    /// pass 2^64): a write that follows another weighs more than it.
    var weight: UInt128 { entries.reduce(0) { $0 + UInt128($1.sequence) } }
}
