import LifeSync
import LifeSyncRuntime

/// The session timers at their defaults (§7.7). The spec calls the values "what peers can
/// expect" but lets every node configure them, so a deviation is SHOULD-level (WARN, a failure
/// under `--strict`). They take 10–48 s each, so they run only when `--timeout` allows that long
/// a wait, and are skipped otherwise.
extension ConformanceCases {
    /// How far a timer may fire after its due time (a loaded machine, a poll interval).
    static let timerLateness = 3.0
    /// How early: the runner's clock starts when it receives, a little after the target sent.
    static let timerEarliness = 0.5

    static func requireTimeout(_ target: ConformanceTarget, _ seconds: Double) throws {
        guard target.timeout >= seconds else {
            throw ConformanceSkip("a timer case waits up to \(Int(seconds)) s: give --timeout \(Int(seconds)) or more")
        }
    }

    static func within(_ elapsed: Double, due: Double) -> Bool {
        elapsed >= due - timerEarliness && elapsed <= due + timerLateness
    }

    static let timers: [ConformanceCase] = [
        ConformanceCase("7.7", "timers.keepalive", "in an open session, once it has sent nothing for 15 s, the target sends PING", level: .should) { target in
            try requireTimeout(target, 15 + timerLateness)
            let (connection, _) = try target.open(vector: try target.refreshVector())
            defer { connection.close() }
            var lastReceived = MonotonicClock.seconds()
            for _ in 0..<10_000 {
                let arrival = connection.next(within: 15 + timerLateness)
                let elapsed = MonotonicClock.seconds() - lastReceived
                switch arrival {
                case .message(.ping):
                    return within(elapsed, due: 15) ? .pass("PING after \(elapsed.fixed(1)) s")
                        : .fail("PING \(elapsed.fixed(1)) s after the target last sent; due at 15 s (§7.7)")
                case .message(.caughtUp), .message(.batch):
                    lastReceived = MonotonicClock.seconds()
                case .silent:
                    return .fail("no PING within \(elapsed.fixed(0)) s of silence (§7.7: 15 s)")
                case let other:
                    throw ConformanceFailure("waiting for a keepalive PING, got \(ConformanceTarget.describe(other))", connection)
                }
            }
            throw ConformanceFailure("waiting for a keepalive PING: too many other frames", connection)
        },
        ConformanceCase("7.7", "timers.handshake-timeout", "a connection that sends no HELLO gets ERROR bad_handshake 10 s after it was made", level: .should) { target in
            try requireTimeout(target, 10 + timerLateness)
            let started = MonotonicClock.seconds()
            let connection = try target.connect()
            defer { connection.close() }
            let arrival = connection.next(within: 10 + timerLateness)
            let elapsed = MonotonicClock.seconds() - started
            switch arrival {
            case .message(.error(let code, _)) where code == ErrorCode.badHandshake.rawValue:
                return within(elapsed, due: 10) ? .pass("after \(elapsed.fixed(1)) s")
                    : .fail("ERROR bad_handshake \(elapsed.fixed(1)) s after the connection; due at 10 s (§7.7)")
            case .silent:
                return .fail("no ERROR bad_handshake within \(elapsed.fixed(0)) s (§7.7: 10 s)")
            case let other:
                throw ConformanceFailure("waiting for the handshake timeout, got \(ConformanceTarget.describe(other))", connection)
            }
        },
        ConformanceCase("7.7", "timers.idle", "in an open session, once it has received nothing for 45 s, the target sends ERROR idle_timeout", level: .should) { target in
            try requireTimeout(target, 45 + timerLateness)
            let vector = try target.refreshVector()
            // The runner's HELLO is the last byte it sends: its PINGs go unanswered, since any
            // byte received would restart the target's idle timer.
            let started = MonotonicClock.seconds()
            let (connection, _) = try target.open(vector: vector)
            defer { connection.close() }
            for _ in 0..<10_000 {
                let left = max(0.1, 45 + timerLateness - (MonotonicClock.seconds() - started))
                let arrival = connection.next(within: left)
                let elapsed = MonotonicClock.seconds() - started
                switch arrival {
                case .message(.error(let code, _)) where code == ErrorCode.idleTimeout.rawValue:
                    return within(elapsed, due: 45) ? .pass("after \(elapsed.fixed(1)) s")
                        : .fail("ERROR idle_timeout \(elapsed.fixed(1)) s after the runner last sent; due after 45 s (§7.7)")
                case .message(.ping), .message(.caughtUp), .message(.batch):
                    continue
                case .silent:
                    return .fail("no ERROR idle_timeout within \(elapsed.fixed(0)) s of the runner's silence (§7.7: 45 s)")
                case let other:
                    throw ConformanceFailure("waiting for the idle timeout, got \(ConformanceTarget.describe(other))", connection)
                }
            }
            throw ConformanceFailure("waiting for the idle timeout: too many other frames", connection)
        },
    ]
}
