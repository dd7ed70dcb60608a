/// The rule by which a node's driver bounds the bytes of unfinished frames that all its sessions
/// hold together (one session's: `NodeCore.bufferedInput(connection:)`). Under the limit every
/// connection is read; once it is spent, a connection holding an unfinished frame is not read,
/// except the one whose frame is closest to complete (`finishing`), so the sum grows by one frame
/// at most and completing frames free it; and a frame that has not grown for `stalledTimeout`
/// meanwhile is closed. The runtime (`NodeServer+Budget`) and the simulated network
/// (`VirtualNetwork+Budget`) both keep one, so the simulator checks the rule the node runs.
///
///     var budget = InputBudget(limit: 64 << 20, stalledTimeout: 10_000)
///     budget.chooseFinishing()                       // once a round
///     if !budget.waits(id) { read; budget.note(id, held: held, remaining: remaining, now: now) }
public struct InputBudget: Sendable {
    /// One connection's unfinished frame: bytes held, bytes it still lacks, since when unchanged.
    struct Held: Sendable {
        var bytes: Int
        var remaining: Int
        var since: Int64
    }

    public let limit: Int
    /// Ms an unfinished frame may stay unchanged while the budget is spent.
    public let stalledTimeout: Int64
    /// Bytes held by all connections now, and the most ever held.
    public private(set) var total = 0
    public private(set) var largest = 0
    /// The one connection holding a frame that is read while the budget is spent.
    public private(set) var finishing: Int?
    private var held: [Int: Held] = [:]

    public init(limit: Int, stalledTimeout: Int64) {
        self.limit = limit
        self.stalledTimeout = stalledTimeout
    }

    public var isSpent: Bool { total >= limit }

    /// Bytes of an unfinished frame `connection` holds.
    public func holds(_ connection: Int) -> Int { held[connection]?.bytes ?? 0 }

    /// After a read: the session of `connection` holds `bytes` of an unfinished frame that still
    /// lacks `remaining` (nil: its header is not in yet).
    public mutating func note(_ connection: Int, held bytes: Int, remaining: Int?, now: Int64) {
        let before = held[connection]
        total += bytes - (before?.bytes ?? 0)
        largest = max(largest, total)
        held[connection] = bytes > 0 ? Held(bytes: bytes, remaining: remaining ?? .max, since: before?.bytes == bytes ? before!.since : now) : nil
    }

    /// The connection went: its share is free.
    public mutating func release(_ connection: Int) {
        total -= held.removeValue(forKey: connection)?.bytes ?? 0
    }

    /// Whether `connection` is not read now: the budget is spent, it holds an unfinished frame,
    /// and it is not the one let finish.
    public func waits(_ connection: Int) -> Bool {
        isSpent && holds(connection) > 0 && finishing != connection
    }

    /// Picks, once a round, the connection whose frame is closest to complete (fewest bytes
    /// lacking, then the lowest ID); none while the budget is not spent.
    public mutating func chooseFinishing() {
        finishing = isSpent ? held.min { ($0.value.remaining, $0.key) < ($1.value.remaining, $1.key) }?.key : nil
    }

    /// While the budget is spent, the connections whose frame has not grown for longer than
    /// `stalledTimeout`, in ID order, with the bytes each holds and for how long (ms).
    public func stalled(now: Int64) -> [(connection: Int, bytes: Int, heldFor: Int64)] {
        guard isSpent else { return [] }
        return held.filter { now - $0.value.since > stalledTimeout }.sorted { $0.key < $1.key }
            .map { ($0.key, $0.value.bytes, now - $0.value.since) }
    }
}
