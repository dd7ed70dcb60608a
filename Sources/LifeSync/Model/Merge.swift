/// The replication metadata of one version of a record.
public struct VersionStamp: Equatable, Sendable {
    /// The HLC of the write that produced this version.
    public var hlc: HLCTimestamp
    /// The incarnation that made the write, and its place in that incarnation's sequence.
    public var origin: String
    public var sequence: UInt64
    /// The causal context of the write: every write its writer had seen, by origin (its own included).
    public var vector: VersionVector
    public var deleted: Bool

    public init(hlc: HLCTimestamp, origin: String, sequence: UInt64, vector: VersionVector, deleted: Bool) {
        self.hlc = hlc
        self.origin = origin
        self.sequence = sequence
        self.vector = vector
        self.deleted = deleted
    }

    /// The last-writer-wins order: HLC, then origin, then sequence — total, so every replica
    /// picks the same winner.
    func precedes(_ other: VersionStamp) -> Bool {
        if hlc != other.hlc { return hlc < other.hlc }
        if origin != other.origin { return origin < other.origin }
        return sequence < other.sequence
    }

    /// Two stamps of the same write.
    func isSameWrite(as other: VersionStamp) -> Bool { origin == other.origin && sequence == other.sequence }
}

/// What merging a remote version into the local one decides.
public enum MergeDecision: Equatable, Sendable {
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
/// The winner is the greater stamp in LWW order (HLC, origin, sequence). A version's vector is
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
public enum Merge {
    public static func decide(local: VersionStamp, remote: VersionStamp) -> MergeDecision {
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
