/// The replication metadata of one version of a record.
public struct VersionStamp: Equatable, Sendable {
    /// The HLC of the write that produced this version.
    public var hlc: HLCTimestamp
    /// The incarnation that made the write, and its place in that incarnation's sequence.
    public var origin: String
    public var sequence: UInt64
    /// Every write this version has seen, by origin.
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
    /// The local content stays; its vector becomes `vector` (the join).
    case keepLocal(vector: VersionVector, conflict: Bool)
    /// The remote content replaces the local one, with `vector` (the join).
    case takeRemote(vector: VersionVector, conflict: Bool)
}

/// The merge rule (DESIGN.md, Clocks and merge), as a pure function.
///
/// The winner is the greater stamp in LWW order; the vectors are joined. `conflict` is true when
/// neither version had seen the other (their vectors are concurrent): the loser is then kept in
/// the conflicts table. When one vector dominates, the dominating version is always the greater
/// stamp, because a write is stamped after the version it replaces (`Replica.stamp`), whatever the
/// clocks say — so "causality beats timestamps" holds without a second rule.
///
/// DESIGN.md sketched "dominance wins, else LWW" over a single stored version. With a joined
/// vector that rule is not commutative (a causally later write with a slow clock can lose in one
/// delivery order and win in another). Stamping every write above the version it replaces makes
/// LWW order agree with causality, so plain max-by-stamp plus vector join is a semilattice:
/// commutative, associative and idempotent.
public enum Merge {
    public static func decide(local: VersionStamp, remote: VersionStamp) -> MergeDecision {
        if local.isSameWrite(as: remote) { return .identical }
        let joined = local.vector.joined(with: remote.vector)
        let conflict = local.vector.isConcurrent(with: remote.vector)
        return local.precedes(remote)
            ? .takeRemote(vector: joined, conflict: conflict)
            : .keepLocal(vector: joined, conflict: conflict)
    }
}
