import Foundation
import Glibc

/// Freezing and thawing a process a test started, for tests that must measure it at rest.
///
/// `kill(pid, SIGSTOP)` returns as soon as the signal is queued, not once the process has
/// stopped: a process running on another CPU goes on for a moment (long enough to write
/// another chunk of a file). Anything a test measures "while it is frozen" must wait for the
/// stopped state first; `stopProcess` does, by polling `/proc/PID/stat` (not `waitpid` with
/// `WUNTRACED`: `Subprocess` reaps its own children, and a second waiter could take
/// the exit status from under it).
package enum ProcessControl {
    /// The one-letter state of `pid` from `/proc/PID/stat` (`R`, `S`, `D`, `T`, `t`, `Z`…), or
    /// nil when there is no such process.
    package static func state(of pid: pid_t) -> Character? { state(statFile: "/proc/\(pid)/stat") }

    /// The state letter in a `/proc/…/stat` file.
    static func state(statFile: String) -> Character? {
        guard let text = try? String(contentsOfFile: statFile, encoding: .utf8) else { return nil }
        // "PID (COMM) STATE …": COMM may itself hold spaces and parentheses, so take the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].first { $0 != " " }
    }

    /// Whether `pid` is in a stopped state (`T`: by a signal; `t`: by a tracer).
    package static func isStopped(_ pid: pid_t) -> Bool {
        guard let state = state(of: pid) else { return false }
        return state == "T" || state == "t"
    }

    /// Sends SIGSTOP and waits until the process has actually stopped, at most `timeout` seconds
    /// (polled every 1 ms, at most 100,000 times). Returns whether it stopped; false also when the
    /// process is gone.
    @discardableResult
    package static func stopProcess(_ pid: pid_t, timeout: Double = 10) -> Bool {
        guard kill(pid, SIGSTOP) == 0 else { return false }
        return waitUntilStopped(pid, timeout: timeout)
    }

    /// Waits until `pid` is stopped, at most `timeout` seconds.
    @discardableResult
    package static func waitUntilStopped(_ pid: pid_t, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        for _ in 0..<100_000 {
            let current = state(of: pid)
            if (current == "T" || current == "t") && everyThreadStopped(pid) { return true }
            if current == nil || current == "Z" || Date() >= deadline { return false }
            usleep(1_000)
        }
        return isStopped(pid)
    }

    /// Whether every thread of `pid` has stopped: a thread inside a system call (a recording's
    /// writer in the middle of a disk write) finishes it before it stops, after the main thread.
    static func everyThreadStopped(_ pid: pid_t) -> Bool {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return threads.allSatisfy { tid in
            let state = state(statFile: "/proc/\(pid)/task/\(tid)/stat")
            return state == nil || state == "T" || state == "t"  // nil: the thread is gone
        }
    }

    /// Sends SIGCONT (a stopped process runs on; a running one is unaffected).
    package static func continueProcess(_ pid: pid_t) {
        kill(pid, SIGCONT)
    }

    /// The file descriptors `pid` has open, by number (from `/proc/PID/fd`).
    package static func openDescriptors(of pid: pid_t) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).compactMap { Int32($0) }.sorted()
    }

    /// Sets the soft RLIMIT_NOFILE of another process of ours (prlimit(2)), returning the soft
    /// limit it had; nil when that fails. (Glibc's `prlimit` is not imported into Swift, so it
    /// is looked up by name.)
    @discardableResult
    package static func setOpenFileLimit(of pid: pid_t, soft: UInt64) -> UInt64? {
        typealias Prlimit = @convention(c) (pid_t, Int32, UnsafePointer<rlimit>?, UnsafeMutablePointer<rlimit>?) -> Int32
        guard let symbol = dlsym(nil, "prlimit") else { return nil }
        let call = unsafeBitCast(symbol, to: Prlimit.self)
        var old = rlimit()
        guard call(pid, Int32(RLIMIT_NOFILE.rawValue), nil, &old) == 0 else { return nil }
        var new = old
        new.rlim_cur = rlim_t(min(soft, UInt64(old.rlim_max)))
        guard call(pid, Int32(RLIMIT_NOFILE.rawValue), &new, nil) == 0 else { return nil }
        return UInt64(old.rlim_cur)
    }
}
