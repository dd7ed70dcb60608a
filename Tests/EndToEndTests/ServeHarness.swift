import Foundation
import Glibc
import LifeSyncRuntime
import Testing
import TestSupport

// MARK: - Real `lifesync serve` processes

struct ServeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A port on 127.0.0.1 that was free a moment ago: bind a throwaway socket to port 0, read the
/// port the kernel chose, close it. (`serve` cannot print a port 0 choice before it starts, and
/// peers need the address up front.) A clash with another program is handled by the caller.
func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServeError("socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    guard bound == 0 else { throw ServeError("bind: \(String(cString: strerror(errno)))") }
    let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    guard named == 0 else { throw ServeError("getsockname: \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}

/// A socket listening on 127.0.0.1 (some free port) for as long as the value lives.
final class HeldPort {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServeError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { close(fd); throw ServeError("cannot hold a port: \(String(cString: strerror(errno)))") }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }
}

/// Polls `condition` every `interval` seconds for at most `timeout` seconds.
@discardableResult
func eventually(timeout: Double, interval: Double = 0.05, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    var rounds = 0
    while Date() < deadline && rounds < 100_000 {
        rounds += 1
        if try condition() { return true }
        usleep(UInt32(interval * 1_000_000))
    }
    return try condition()
}

/// One node: a replica file and the `lifesync serve` process that runs it (restartable).
final class ServeNode {
    let name: String
    let role: String
    let db: String
    let nodeID: String
    private let directory: TemporaryDirectory
    private(set) var port: UInt16 = 0
    private(set) var process: Subprocess?
    private(set) var runs = 0
    private(set) var peers: [String] = []
    private(set) var listens = true

    var address: String { "127.0.0.1:\(port)" }

    init(_ name: String, role: String, in directory: TemporaryDirectory) throws {
        self.name = name
        self.role = role
        self.directory = directory
        db = directory.file("\(name).sqlite")
        let created = try LifeSyncBinary.run(["init", "--role", role, "--db", db])
        guard created.status == 0 else { throw ServeError("init \(name): \(created.stderr)") }
        nodeID = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private var outFile: String { directory.file("\(name)-\(runs).out") }
    private var errFile: String { directory.file("\(name)-\(runs).err") }

    /// What the current (or last) run printed.
    var stdout: String { (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? "" }
    /// Everything every run printed, for failure messages.
    var allOutput: String {
        (1...max(1, runs)).map { run in
            ((try? String(contentsOfFile: directory.file("\(name)-\(run).out"), encoding: .utf8)) ?? "")
                + ((try? String(contentsOfFile: directory.file("\(name)-\(run).err"), encoding: .utf8)) ?? "")
        }.joined(separator: "\n--- restart ---\n")
    }

    var isRunning: Bool { process?.isRunning ?? false }

    /// Starts `serve`, listening on a fresh free port (or the previous one with `samePort`), and
    /// waits until it prints that it serves. A port someone else grabbed meanwhile is retried.
    func start(peers: [String] = [], listen: Bool = true, samePort: Bool = false, extra: [String] = [], environment added: [String: String] = [:]) throws {
        precondition(!isRunning, "\(name) is already running")
        self.peers = peers
        listens = listen
        for attempt in 1...6 {
            if listen && (!samePort || port == 0) { port = try freeLoopbackPort() }
            runs += 1
            _ = FileManager.default.createFile(atPath: outFile, contents: nil)
            _ = FileManager.default.createFile(atPath: errFile, contents: nil)
            var arguments = ["serve", "--db", db, "--reconnect-max-ms", "1000", "--debounce-ms", "100"]
            if listen { arguments += ["--listen", address] }
            for peer in peers { arguments += ["--peer", peer] }
            var environment = LifeSyncBinary.environment
            environment.merge(added) { _, new in new }
            let process = try Subprocess(LifeSyncBinary.path, arguments + extra, environment: environment,
                                         standardOutput: outFile, standardError: errFile)
            self.process = process
            let up = eventually(timeout: 10, interval: 0.02) { stdout.contains(" serving ") || !process.isRunning }
            if up && process.isRunning { return }
            if !process.isRunning && stderr.contains("cannot listen") && attempt < 6 {
                usleep(200_000)
                continue
            }
            kill9()
            throw ServeError("\(name) did not start serving: \(process.poll()?.description ?? "still running"), stderr: \(stderr)")
        }
        throw ServeError("\(name): no free port after 6 attempts")
    }

    /// `kill -9`: no chance to clean up.
    func kill9() {
        process?.kill()
    }

    /// SIGTERM and wait at most `timeout` seconds; returns how long the exit took (nil: it did
    /// not, and it was killed).
    @discardableResult
    func terminate(timeout: Double = 2) -> Double? {
        guard let process, process.isRunning else { return nil }
        let start = Date()
        process.signal(SIGTERM)
        guard process.wait(timeout: timeout) != nil else {
            kill9()
            return nil
        }
        return Date().timeIntervalSince(start)
    }

    /// How the last run ended (nil while it runs).
    var termination: Subprocess.Termination? { process?.poll() }

    /// Whatever state it is in: gone afterwards.
    func stop() { kill9() }

    /// `status --json --hash`, parsed: the tests compare state hashes.
    func status() throws -> [String: Any] {
        let result = try LifeSyncBinary.run(["status", "--json", "--hash", "--db", db], timeout: 20)
        guard result.status == 0, let object = try parseJSON(result.stdout) as? [String: Any] else {
            throw ServeError("status \(name): \(result.status) \(result.stderr)")
        }
        return object
    }

    /// A number from the sqlite3 shell (cheap enough to poll).
    func scalar(_ sql: String) -> Int? {
        guard let result = try? SQLiteShell.run(db, sql, timeout: 10), result.status == 0 else { return nil }
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    var entryCount: Int? { scalar("SELECT count(*) FROM entries") }
}

extension ServeNode {
    /// `lifesync ARGUMENTS --db` this node's replica, which must succeed: what it printed
    /// (standard output trimmed).
    @discardableResult
    func cli(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> (stdout: String, stderr: String) {
        let result = try LifeSyncBinary.run(arguments + ["--db", db])
        try #require(result.status == 0, "\(arguments) on \(name): \(result.stderr)", sourceLocation: sourceLocation)
        return (result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), result.stderr)
    }

    /// `lifesync wait` until this node's replica holds every ID of `ids` (20 s at most).
    func waitFor(_ ids: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try LifeSyncBinary.run(["wait", "--db", db, "--timeout", "20"] + ids.flatMap { ["--for", $0] }, timeout: 30)
        try #require(result.status == 0, "\(name) never got \(ids): \(result.stderr)\n\(allOutput)", sourceLocation: sourceLocation)
    }
}

/// Every node of a test, so a `defer` can kill them all whatever happened.
final class ServeGroup {
    let directory = TemporaryDirectory("lifesync-serve")
    private(set) var nodes: [ServeNode] = []

    /// A new node, paired with every node of the group made before it, as a user pairs them:
    /// `lifesync id` on one, `lifesync trust` on the other, both ways.
    func node(_ name: String, role: String, paired: Bool = true) throws -> ServeNode {
        let node = try ServeNode(name, role: role, in: directory)
        for other in nodes where paired {
            try Self.pair(node, trustedBy: other)
            try Self.pair(other, trustedBy: node)
        }
        nodes.append(node)
        return node
    }

    static func pair(_ node: ServeNode, trustedBy other: ServeNode) throws {
        let id = try LifeSyncBinary.run(["id", "--db", node.db])
        guard id.status == 0 else { throw ServeError("id \(node.name): \(id.stderr)") }
        let trust = try LifeSyncBinary.run(["trust", id.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "--db", other.db])
        guard trust.status == 0 else { throw ServeError("trust \(node.name) on \(other.name): \(trust.stderr)") }
    }

    func stopAll() { for node in nodes { node.stop() } }

    deinit { stopAll() }
}
