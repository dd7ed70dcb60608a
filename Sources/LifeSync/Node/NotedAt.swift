/// When each key was last noted, for saying something about it (a log line, a write) at most
/// once an `interval`, while remembering at most `capacity` keys: once full, a new key is noted
/// only if keys older than the interval can be let go to make room, so a flood of made-up keys
/// costs bounded memory and bounded writes. Times are the driver's monotonic clock (ms).
///
/// ```swift
/// var refused = NotedAt<String>(interval: 60_000, capacity: 256)
/// if refused.note(host, now: now) { actions.append(.event(.discoveryRefused(from: host, reason: reason))) }
/// ```
struct NotedAt<Key: Hashable> {
    let interval: Int64
    let capacity: Int
    private var notedAt: [Key: Int64] = [:]

    init(interval: Int64, capacity: Int) {
        self.interval = interval
        self.capacity = capacity
    }

    /// Whether `key` is to be noted at `now`: not if it was within the interval, nor while the
    /// memory is full of keys that were. If it is, it is remembered as noted now.
    mutating func note(_ key: Key, now: Int64) -> Bool {
        if let last = notedAt[key], now - last < interval { return false }
        if notedAt[key] == nil && notedAt.count >= capacity {
            notedAt = notedAt.filter { now - $0.value < interval }
            guard notedAt.count < capacity else { return false }
        }
        notedAt[key] = now
        return true
    }

    /// Whether no more than `capacity` keys are remembered (`NodeCore.invariantsHold`).
    var withinBounds: Bool { notedAt.count <= capacity }
}
