import FoundationEssentials
import Glibc

/// A child process started with `posix_spawn` and reaped with `waitpid`, with every wait
/// bounded in time.
///
/// Why not Foundation's `Process`: on Linux it learns of a child's exit from a SIGCHLD source
/// on its own thread, and under load (many children at once, two busy cores) that news can be
/// lost; `isRunning` then stays true for ever and `waitUntilExit()` never returns. A CI run hung
/// for 90 minutes that way on a `sqlite3` shell that had long printed its answer. Here the
/// caller asks the kernel directly (`waitpid(pid, WNOHANG)`), so a wait ends when the child
/// has ended or when the deadline passes, whatever any other thread does.
///
/// Output goes to files, never to pipes: a pipe would block a chatty child whose reader is
/// busy, and a stray copy of a pipe's write end in another child keeps the reader waiting.
///
///     let child = try Subprocess("/usr/bin/sqlite3", ["-batch", db, "SELECT 1"], standardOutput: out)
///     guard let ended = child.wait(timeout: 10) else { child.kill(); throw … }
///     print(ended.exitStatus)
package final class Subprocess: @unchecked Sendable {
    /// How a child ended.
    package enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        /// Reaped by somebody else (`ECHILD`): gone, status unknown.
        case unknown

        /// The exit code; 128 + the signal for a child killed by one (as a shell reports it);
        /// -1 when unknown.
        package var exitStatus: Int32 {
            switch self {
            case .exited(let code): return code
            case .signalled(let signal): return 128 + signal
            case .unknown: return -1
            }
        }

        package var description: String {
            switch self {
            case .exited(let code): return "exit \(code)"
            case .signalled(let signal): return "signal \(signal)"
            case .unknown: return "ended (status unknown)"
            }
        }
    }

    package struct SpawnError: Error, CustomStringConvertible {
        package var executable: String
        package var code: Int32
        package init(executable: String, code: Int32) {
            self.executable = executable
            self.code = code
        }
        package var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
    }

    package let pid: pid_t
    package let executable: String
    private let lock = Lock()
    private var ended: Termination?

    /// Starts `executable` with `arguments`. Standard input, output and error are the files at
    /// these paths (output files are created, and appended to); `standardError` nil shares
    /// the output file. `environment` nil inherits ours; `directory` nil keeps ours.
    package init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
                standardInput: String = "/dev/null", standardOutput: String = "/dev/null", standardError: String? = nil) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let output = O_WRONLY | O_CREAT | O_APPEND
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, output, 0o644)
        if let standardError {
            posix_spawn_file_actions_addopen(&actions, 2, standardError, output, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // No other descriptor of ours (sockets, listeners, other children's files) leaks in.
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        if let directory {
            guard let changeDirectory = Self.addChangeDirectory else { throw SpawnError(executable: executable, code: ENOSYS) }
            _ = changeDirectory(&actions, directory)
        }

        // The child starts with no signal blocked and default handlers, whatever this process set.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let pairs = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = pairs.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }

        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard code == 0 else { throw SpawnError(executable: executable, code: code) }
        precondition(pid > 0, "posix_spawn succeeded without a pid")
        self.pid = pid
    }

    /// A child still running at the end is killed and reaped, so no test leaves one behind.
    deinit {
        if poll() == nil {
            Glibc.kill(pid, SIGKILL)
            _ = wait(timeout: 10)
        }
    }

    /// How the child ended, or nil while it runs. Never blocks.
    package func poll() -> Termination? {
        lock.withLock { reap() }
    }

    private func reap() -> Termination? {
        if let ended { return ended }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid {
            let signal = status & 0x7f
            ended = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
        } else if reaped < 0 && errno == ECHILD {
            ended = .unknown
        }
        return ended
    }

    package var isRunning: Bool { poll() == nil }

    /// Waits at most `timeout` seconds for the child to end (polled every millisecond or so);
    /// nil if it still runs then.
    @discardableResult
    package func wait(timeout: Double) -> Termination? {
        // The monotonic clock: a wall-clock step must neither cut a wait short nor stretch it.
        let deadline = MonotonicClock.seconds() + timeout
        var pause: UInt32 = 200
        for _ in 0..<1_000_000 {
            if let ended = poll() { return ended }
            if MonotonicClock.seconds() >= deadline { return nil }
            usleep(pause)
            pause = min(pause * 2, 5_000)
        }
        return poll()
    }

    /// Sends `signal` (nothing happens to a child already reaped).
    package func signal(_ signal: Int32) {
        guard poll() == nil else { return }
        Glibc.kill(pid, signal)
    }

    /// SIGKILL, then waits for the kernel to report it gone (at most `timeout` seconds).
    @discardableResult
    package func kill(timeout: Double = 10) -> Termination? {
        signal(SIGKILL)
        return wait(timeout: timeout)
    }

    /// SIGTERM, and SIGKILL if it is still running after `grace` seconds.
    @discardableResult
    package func terminate(grace: Double = 5) -> Termination? {
        signal(SIGTERM)
        if let ended = wait(timeout: grace) { return ended }
        return kill()
    }

    // glibc's `_np` spawn actions are not imported into Swift; they are looked up by name.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let addCloseFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: CloseFrom.self) }
    private static let addChangeDirectory: ChangeDirectory? = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map { unsafeBitCast($0, to: ChangeDirectory.self) }
}
