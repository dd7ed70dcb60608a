/// How fast a transfer moves in one session, for its progress lines: the bytes moved since the
/// session's first progress report over the time since. A resumed prefix moved in an earlier
/// session (or never moved at all: the receiver held it) counts for nothing, and a new session
/// starts a new measurement, so neither inflates nor dilutes the figure.
///
/// ```swift
/// var rate = TransferRate(connection: 3, now: 10_000, done: 44 << 20)   // resumed at 44 MiB
/// rate.mebibytesPerSecond(done: 84 << 20, now: 11_000)                  // 40.0
/// ```
struct TransferRate: Equatable {
    /// The connection the measurement belongs to: progress on another one starts afresh.
    let connection: Int
    let startedAt: Int64
    let startBytes: UInt64
    /// When a progress line was last logged (one every 2 s at most).
    var loggedAt: Int64?

    init(connection: Int, now: Int64, done: UInt64) {
        self.connection = connection
        startedAt = now
        startBytes = done
    }

    /// MiB/s over this session; 0 before any time or bytes have passed (and if `done` went
    /// back, which a restarted transfer on the same connection may do).
    func mebibytesPerSecond(done: UInt64, now: Int64) -> Double {
        guard now > startedAt, done > startBytes else { return 0 }
        return Double(done - startBytes) / Double(now - startedAt) * 1000 / 1_048_576
    }
}
