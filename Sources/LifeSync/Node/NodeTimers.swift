/// The node's own timers, on the driver's monotonic clock (`now`, ms): the debounced push after a
/// local write, the poll for other processes' writes, the fallback timer that runs only while
/// something is pending, and whether what is pending must be judged again. `NodeCore.tick` says
/// what each one does when it fires; this holds when they fire, and `earliest` is the one place
/// their next deadline is found (the dialers' and sessions' own are added in `nextDeadline`).
///
/// ```swift
/// timers.schedulePush(now: now, debounce: configuration.debounce)   // a local write
/// if timers.takePush(now: now) { actions += pushAll(now: now) }     // in tick, once due
/// ```
struct NodeTimers {
    /// When a debounced push is due.
    private(set) var pushAt: Int64?
    /// When the fallback timer fires (only while something is pending).
    private(set) var fallbackAt: Int64?
    /// When `tick` next reads the file's data_version, to notice other processes' writes.
    private(set) var nextPoll: Int64
    /// Something happened that may change what is pending (a write, an acknowledgement, a
    /// closed connection): the next `tick` judges it again and arms or stops the fallback timer.
    private(set) var pendingCheckDue = true

    /// Polls first at `now`; nothing else is armed.
    init(now: Int64) {
        nextPoll = now
    }

    /// The first deadline of the four: the poll's is always set.
    var earliest: Int64 {
        min(nextPoll, pushAt ?? .max, fallbackAt ?? .max)
    }

    /// A local write: the push goes `debounce` after the first write of a burst, not the last.
    mutating func schedulePush(now: Int64, debounce: Int64) {
        if pushAt == nil { pushAt = now + debounce }
    }

    /// Whether the push is due at `now`; if it is, it is disarmed (taken).
    mutating func takePush(now: Int64) -> Bool {
        guard let due = pushAt, now >= due else { return false }
        pushAt = nil
        return true
    }

    /// Whether the poll is due at `now`; if it is, the next one is `interval` later.
    mutating func takePoll(now: Int64, interval: Int64) -> Bool {
        guard now >= nextPoll else { return false }
        nextPoll = now + interval
        return true
    }

    /// What is pending may have changed: judge it at the next `tick`.
    mutating func pendingChanged() {
        pendingCheckDue = true
    }

    /// Whether a judgement of what is pending is due; if it is, it is taken.
    mutating func takePendingCheck() -> Bool {
        guard pendingCheckDue else { return false }
        pendingCheckDue = false
        return true
    }

    /// Whether the fallback timer fires at `now`; if it does, it is disarmed until `judged` arms it.
    mutating func takeFallback(now: Int64) -> Bool {
        guard let due = fallbackAt, now >= due else { return false }
        fallbackAt = nil
        return true
    }

    /// What is pending was judged: while something is, the fallback timer runs, `interval` after
    /// it was armed (it is not pushed back while it runs); once nothing is, it stops.
    mutating func judged(pending: Bool, now: Int64, interval: Int64) {
        if pending {
            if fallbackAt == nil { fallbackAt = now + interval }
        } else {
            fallbackAt = nil
        }
    }

    /// The node stops: no push and no fallback are due any more (a fallback armed before would
    /// dial every peer while the node drains, and a deadline left in the past would spin the
    /// driver's loop). Nothing re-arms them: a stopping node judges nothing pending.
    mutating func stop() {
        pushAt = nil
        fallbackAt = nil
    }
}
