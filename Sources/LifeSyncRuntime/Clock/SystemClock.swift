import Glibc
import LifeSync

/// The real wall clock, for the daemon and the CLI. The core only ever sees it through
/// `WallClock`, so the simulator can substitute virtual time.
public final class SystemClock: WallClock, @unchecked Sendable {
    public init() {}

    public func nowMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

/// Seconds on a clock that never steps: for measuring durations and scheduling timers.
package enum MonotonicClock {
    package static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    package static func milliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
