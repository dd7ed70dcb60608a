/// A hybrid logical clock reading: physical milliseconds in the high 48 bits, a logical counter
/// in the low 16. One integer, so comparing two stamps is comparing two numbers, and SQLite
/// stores it as an INTEGER.
package struct HLCTimestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: Int64

    package init(rawValue: Int64) { self.rawValue = rawValue }

    package init(milliseconds: Int64, counter: Int) {
        rawValue = (milliseconds << 16) | Int64(counter & 0xFFFF)
    }

    package var milliseconds: Int64 { rawValue >> 16 }
    package var counter: Int { Int(rawValue & 0xFFFF) }

    /// The next stamp after this one; a full counter carries into the milliseconds, which keeps
    /// the order total without ever going back. At the ceiling it stays there (see `maximum`).
    package var successor: HLCTimestamp { self < .maximum ? HLCTimestamp(rawValue: rawValue + 1) : .maximum }

    package static let zero = HLCTimestamp(rawValue: 0)

    /// The ceiling of every HLC (PROTOCOL.md §2.1): milliseconds below 2^46 (the year 4199), so no
    /// wall clock reaches it and a stamp from a peer can never make arithmetic overflow. A peer's
    /// stamp above it is refused. A local write over a version stamped at the ceiling (only a
    /// faulty peer can put one there) is stamped at the ceiling too: the order falls to
    /// (origin, sequence), every replica still agrees, and the losing side is kept as a conflict.
    package static let maximum = HLCTimestamp(milliseconds: (1 << 46) - 1, counter: 0xFFFF)

    package static func < (a: HLCTimestamp, b: HLCTimestamp) -> Bool { a.rawValue < b.rawValue }

    /// `2026-11-22T08:30:00.000Z#3`: the physical part as UTC, then the counter.
    package var description: String {
        guard Timestamp.representable.contains(milliseconds) else { return "raw:\(rawValue)" }
        return Timestamp(millisecondsSince1970: milliseconds).iso8601 + "#" + String(counter)
    }
}

/// The node's hybrid logical clock: never goes backwards, even when the wall clock does, and
/// moves past the stamps it sees from peers — but only up to `maximumDrift` ahead of its own wall
/// clock, so one peer with a clock in the year 2100 cannot drag every node's clock there.
///
/// Causality within a record does not depend on this clock: a write is always stamped after the
/// version it replaces (see `Replica`), so bounding the drift loses no ordering.
package struct HybridLogicalClock: Sendable {
    package private(set) var last: HLCTimestamp
    /// How far ahead of the local wall clock a remote stamp may pull this clock (ms).
    package var maximumDrift: Int64

    /// One minute, a common bound for devices that synchronise time over the network.
    package static let defaultMaximumDrift: Int64 = 60_000

    package init(last: HLCTimestamp = .zero, maximumDrift: Int64 = HybridLogicalClock.defaultMaximumDrift) {
        self.last = last
        self.maximumDrift = maximumDrift
    }

    /// A stamp for a local event at wall time `now`.
    package mutating func tick(now: Int64) -> HLCTimestamp {
        let physical = HLCTimestamp(milliseconds: min(max(now, 0), HLCTimestamp.maximum.milliseconds), counter: 0)
        last = max(physical, last.successor)
        return last
    }

    /// Moves past a stamp from a trusted source (this replica's own file), with no drift bound.
    package mutating func catchUp(to stamp: HLCTimestamp) {
        if stamp > last { last = min(stamp, .maximum) }
    }

    /// Takes in a stamp seen from a peer. Returns false when the stamp was beyond the drift bound
    /// and the clock advanced only to the bound.
    @discardableResult
    package mutating func observe(_ remote: HLCTimestamp, now: Int64) -> Bool {
        let boundMilliseconds = min(max(now, 0), Int64(1) << 46) + maximumDrift
        let bound = min(HLCTimestamp(milliseconds: boundMilliseconds, counter: 0xFFFF), .maximum)
        let accepted = min(remote, bound)
        if accepted > last { last = accepted }
        return remote <= bound
    }
}
