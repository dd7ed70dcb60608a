/// The rule by which a node's driver bounds the bytes of unfinished frames that all its sessions
/// hold together (one session's: `NodeCore.bufferedInput(connection:)`). Under the limit every
/// connection is read; once it is spent, a connection holding an unfinished frame is not read,
/// except the one whose **turn** it is (`finishing`), so the sum grows by one frame at most and
/// completing frames free it.
///
/// Turns go to the frame closest to complete first, among those whose completion fits in
/// `overdraft` bytes past the limit, so the sum never exceeds `limit + overdraft` (a frame read
/// to completion frees what it held). A turn lasts while its frame grows; one that has not grown
/// for `minimumTurn` ms passes to the next frame, and a frame passed over waits until every other
/// has had its turn. So a peer that parks a frame one byte short of complete costs the others
/// one short turn a round, not the whole budget. A frame that did not grow in two turns of its
/// own and for `stalledTimeout` is closed; one that waits without a turn is never closed for it
/// (it did not grow because it was not read). Frames parked until the overdraft is spent hold
/// the others back until they are closed as stalled. The runtime
/// (`NodeServer+Budget`) and the simulated network (`VirtualNetwork+Budget`) both keep one, so the
/// simulator checks the rule the node runs.
///
///     var budget = InputBudget(limit: 64 << 20, stalledTimeout: 10_000)
///     budget.chooseFinishing(now: now)               // once a round; wake by `turnEnds`
///     if !budget.waits(id) { read; budget.note(id, held: held, remaining: remaining, now: now) }
package struct InputBudget: Sendable {
    /// One connection's unfinished frame: bytes held, bytes it still lacks, since when unchanged,
    /// and how many of its turns ended without growth since it last grew.
    struct Held: Sendable {
        var bytes: Int
        var remaining: Int
        var since: Int64
        var idleTurns = 0
    }

    /// The connection whose turn it is, what its frame held when the turn began or last grew,
    /// and when that was.
    struct Turn: Sendable {
        var connection: Int
        var bytes: Int
        var since: Int64
    }

    package let limit: Int
    /// Ms an unfinished frame may stay unchanged while the budget is spent (and it had turns).
    package let stalledTimeout: Int64
    /// Bytes past `limit` that turns may take the sum to: one frame of the largest size.
    package let overdraft: Int
    /// Ms a turn lasts without its frame growing before it passes on.
    package let minimumTurn: Int64
    /// Bytes held by all connections now, and the most ever held.
    package private(set) var total = 0
    package private(set) var largest = 0
    private var held: [Int: Held] = [:]
    private var turn: Turn?
    /// Frames whose turn passed without growth, skipped until every other had its turn.
    private var passed = Set<Int>()

    package init(limit: Int, stalledTimeout: Int64, overdraft: Int = Framing.headerSize + Framing.maximumFrameLength, minimumTurn: Int64 = 50) {
        self.limit = limit
        self.stalledTimeout = stalledTimeout
        self.overdraft = overdraft
        self.minimumTurn = minimumTurn
    }

    package var isSpent: Bool { total >= limit }

    /// The one connection holding a frame that is read while the budget is spent.
    package var finishing: Int? { isSpent ? turn?.connection : nil }

    /// When the current turn ends if its frame does not grow: the driver chooses again then
    /// (nil while no other frame waits for a turn).
    package var turnEnds: Int64? {
        guard isSpent, let turn, held.count > 1 else { return nil }
        return turn.since + minimumTurn
    }

    /// Bytes of an unfinished frame `connection` holds.
    package func holds(_ connection: Int) -> Int { held[connection]?.bytes ?? 0 }

    /// After a read: the session of `connection` holds `bytes` of an unfinished frame that still
    /// lacks `remaining` (nil: its header is not in yet).
    package mutating func note(_ connection: Int, held bytes: Int, remaining: Int?, now: Int64) {
        let before = held[connection]
        total += bytes - (before?.bytes ?? 0)
        largest = max(largest, total)
        guard bytes > 0 else {
            forget(connection)
            return
        }
        let unchanged = before?.bytes == bytes
        held[connection] = Held(bytes: bytes, remaining: remaining ?? .max, since: unchanged ? before!.since : now,
                                idleTurns: unchanged ? before!.idleTurns : 0)
    }

    /// The connection went: its share is free.
    package mutating func release(_ connection: Int) {
        total -= held[connection]?.bytes ?? 0
        forget(connection)
    }

    /// Whether `connection` is not read now: the budget is spent, it holds an unfinished frame,
    /// and it is not its turn.
    package func waits(_ connection: Int) -> Bool {
        isSpent && holds(connection) > 0 && finishing != connection
    }

    /// Once a round: keeps the turn while its frame grows or is young, else passes it to the
    /// frame closest to complete (fewest bytes lacking, then the lowest ID) that fits in the
    /// overdraft and has not been passed over since every such frame last had a turn. No turns
    /// while the budget is not spent.
    package mutating func chooseFinishing(now: Int64) {
        guard isSpent else {
            turn = nil
            passed = []
            return
        }
        if let current = turn, let frame = held[current.connection] {
            if frame.bytes != current.bytes {
                turn = Turn(connection: current.connection, bytes: frame.bytes, since: now)
                return
            }
            if now - current.since < minimumTurn { return }
            held[current.connection]!.idleTurns += 1
            passed.insert(current.connection)
        }
        let room = limit + overdraft - total
        let fitting = held.filter { $0.value.remaining <= room }
        var candidates = fitting.filter { !passed.contains($0.key) }
        if candidates.isEmpty {
            passed = []
            candidates = fitting
        }
        turn = candidates.min { ($0.value.remaining, $0.key) < ($1.value.remaining, $1.key) }.map {
            Turn(connection: $0.key, bytes: $0.value.bytes, since: now)
        }
    }

    /// While the budget is spent, the connections whose frame has not grown for longer than
    /// `stalledTimeout` and whose last two turns passed without growth, in ID order, with the
    /// bytes each holds and for how long (ms).
    package func stalled(now: Int64) -> [(connection: Int, bytes: Int, heldFor: Int64)] {
        guard isSpent else { return [] }
        return held.filter { now - $0.value.since > stalledTimeout && $0.value.idleTurns >= 2 }.sorted { $0.key < $1.key }
            .map { ($0.key, $0.value.bytes, now - $0.value.since) }
    }

    private mutating func forget(_ connection: Int) {
        held[connection] = nil
        passed.remove(connection)
        if turn?.connection == connection { turn = nil }
    }
}
