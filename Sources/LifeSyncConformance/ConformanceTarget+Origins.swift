import LifeSync

/// The origins the runner writes under. They are fixed per runner node (bound to its node ID,
/// §2.3.1), not drawn per run, so repeated runs against one node reuse the same three origins instead
/// of filling its table of origins (4,096 at most, §3.1). Each run continues their sequences
/// above what the target's HELLO says it holds of them: sequences below that would be absorbed
/// unapplied (§8), and a gap reads as superseded writes, which is legal.
extension ConformanceTarget {
    /// The origin most cases write under.
    package var origin: String { Self.origin(of: runner.nodeID, slot: 0) }

    /// Two origins, ascending by bytes, for concurrent versions (§8).
    package var pair: [String] { [Self.origin(of: runner.nodeID, slot: 1), Self.origin(of: runner.nodeID, slot: 2)].sorted() }

    /// An incarnation bound to the runner's node (§2.3.1) whose nonce is the slot.
    static func origin(of nodeID: String, slot: Int) -> String {
        Identifier.incarnation(boundTo: nodeID, random: SlotNonce(slot: slot))
    }

    /// The highest sequence of `origin` used so far: issued in this run, or held by the target.
    package func position(of origin: String) -> UInt64 { max(issued[origin] ?? 0, knownVector[origin]) }

    /// The next `count` sequences of `origin`.
    package func sequences(_ origin: String, count: Int) -> ClosedRange<UInt64> {
        precondition(count >= 1, "at least one sequence")
        let first = position(of: origin) + 1
        issued[origin] = first + UInt64(count) - 1
        return first...(first + UInt64(count) - 1)
    }

    /// One sequence for both origins of `pair`, the same for each, so two versions of an entry
    /// written under them have vectors of equal weight (the origin then breaks the tie, §8).
    package func pairSequence() -> UInt64 {
        let next = pair.map(position(of:)).max()! + 1
        for origin in pair { issued[origin] = next }
        return next
    }
}

/// The "random" draw that makes a runner origin's nonce its slot, so the three never coincide.
private final class SlotNonce: RandomSource {
    let slot: Int
    init(slot: Int) { self.slot = slot }
    func nextUInt64() -> UInt64 { UInt64(slot) }
}
