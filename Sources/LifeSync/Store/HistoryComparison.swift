/// Where this replica's history of one of its own origins forked from what a peer holds of it
/// (PROTOCOL.md §7.2.3), decided from the peer's probes alone: a pure function, so its rules
/// are tested apart from any replica.
///
/// A device restored whole (its replica and its write mark put back together) writes again at
/// sequence numbers its old history already spent. Its peers hold the old writes; the restored
/// node holds other ones under the same numbers. The peer's HISTORY names write digests it holds
/// of the origin; where ours differ (or we never had the write while our log says we would
/// know it), the histories forked.
///
/// ```swift
/// let fork = HistoryComparison(count: 12, top: 15, logStart: 1, probes: verdicts)
///     .forkPoint(firstHeldAbove: { try replica.firstSendableHeld(origin, above: $0) })
/// // nil: the histories agree; 9: our writes above 9 are not the ones the peer holds
/// ```
struct HistoryComparison {
    enum Verdict: Equatable {
        /// We know the write at that number and it is the peer's.
        case match
        /// We know another write at that number.
        case mismatch
        /// We neither sent nor hold a write at that number.
        case unknown
    }

    /// Our vector entry for the origin.
    var count: UInt64
    /// The peer's vector entry for it.
    var top: UInt64
    /// The first number whose write our log names (`own_writes_from`): below it, a write we no
    /// longer hold may well be one we made before the log existed.
    var logStart: UInt64
    /// The peer's probes, ascending, each with what we make of it.
    var probes: [(sequence: UInt64, verdict: Verdict)]

    /// The number up to which both histories agree, when ours forked above it; nil when nothing
    /// says they differ. `firstHeldAbove(n)` is the lowest number above `n` of a write we hold
    /// and would send this peer (damaged rows and what the peer does not take left out).
    ///
    /// The rules: a probe is bad when we made or hold another write at its number, or none
    /// although our log would know it. The histories agree up to the greatest matching probe
    /// below the lowest bad one (a write names its vector, HLC and content: the same write at a
    /// number means the same history below it). They forked when a probe is bad, or when we hold
    /// a write above that point which the peer's vector covers and it has no digest of: the peer
    /// will never ask for it.
    func forkPoint(firstHeldAbove: (UInt64) throws -> UInt64?) rethrows -> UInt64? {
        if lowestBad != nil { return agreement }
        if let held = try firstHeldAbove(max(agreement, logStart == 0 ? 0 : logStart - 1)), held <= min(count, top) { return agreement }
        return nil
    }

    /// The greatest matching probe at or below our count and below the lowest bad one (0 if
    /// none): the number up to which the peer's digests show it holds our history.
    var agreement: UInt64 {
        probes.last { $0.sequence <= count && $0.verdict == .match && $0.sequence < (lowestBad ?? .max) }?.sequence ?? 0
    }

    /// The lowest probe at or below our count that we know another write at, or none at
    /// although our log would know it.
    private var lowestBad: UInt64? {
        probes.first { $0.sequence <= count && ($0.verdict == .mismatch || ($0.verdict == .unknown && $0.sequence >= logStart)) }?.sequence
    }
}
