import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

/// Connects to a `lifesync serve` process over loopback again and again, each cycle a TCP
/// connect, the TLS 1.3 handshake with both certificates, our HELLO, the node's HELLO and a
/// close, and times each cycle (`HandshakeClient`). The targets (issue 11): under 10 ms a cycle,
/// and a node that stays flat over 1,000 of them: its resident memory (read from
/// /proc/PID/status of the serving process, VmRSS) and the cycle time must not creep up.
///
/// The verdict is printed, never enforced: speed targets live in benchmarks, not in tests.
enum HandshakeBench {
    /// Flatness, as the verdict judges it: the node's RSS may grow this much from the end of
    /// the first window to the end of the run (SQLite's page cache and the allocator settle in
    /// the first cycles), and the last window's median cycle may be this much slower than the
    /// first's.
    static let rssGrowthTolerance = 2.0  // MiB
    static let driftTolerance = 1.25
    static let medianTarget = 10.0  // ms

    static func run(cycles: Int, directory: String) throws -> BenchReport {
        let binary = try SyncBench.selfExecutable()
        let nodePath = directory + "/node.sqlite", clientPath = directory + "/client.sqlite"
        for path in [nodePath, clientPath] {
            ImportBench.removeDatabase(path)
            unlink(NodeKey.path(forReplica: path))
        }
        let node = try Replica.create(path: nodePath, role: .phone, clock: SystemClock(), random: SystemRandom())
        let client = try Replica.create(path: clientPath, role: .mac, clock: SystemClock(), random: SystemRandom())
        try LocalPairing.pair([node, client])
        let key = try NodeKey.load(from: NodeKey.path(forReplica: clientPath))
        let port = try SyncBench.freeLoopbackPort()
        let server = try SyncBench.spawn(binary, ["serve", "--db", nodePath, "--listen", "127.0.0.1:\(port)"], log: directory + "/node.log")
        defer { server.terminate() }
        try SyncBench.waitUntilListening(log: directory + "/node.log")
        let dialler = try HandshakeClient(key: key, identity: client.identity, port: port)

        // The first and last `window` cycles are compared (half the run when it is short).
        let window = min(100, max(1, cycles / 2))
        var times: [Double] = []
        var rssAfterWindow = 0.0
        for n in 1...cycles {
            let start = MonotonicClock.seconds()
            let hello: Hello
            do { hello = try dialler.cycle() } catch {
                throw CLIError.refused("bench handshake: cycle \(n) failed: \(error) (see \(directory)/node.log)")
            }
            times.append((MonotonicClock.seconds() - start) * 1000)
            guard hello.nodeID == node.identity.nodeID else { throw CLIError.refused("bench handshake: the node said it is \(hello.nodeID)") }
            if n == window { rssAfterWindow = ProcessMemory.resident(server.pid) }
        }
        let rssAtEnd = ProcessMemory.resident(server.pid)
        let sorted = times.sorted()
        let median = BenchReport.median(times)
        let first = BenchReport.median(Array(times.prefix(window))), last = BenchReport.median(Array(times.suffix(window)))
        let growth = rssAtEnd - rssAfterWindow, drift = last / first
        var misses: [String] = []
        if median >= medianTarget { misses.append("median \(median.fixed(2)) ms is not under \(medianTarget.fixed(0)) ms") }
        if growth > rssGrowthTolerance { misses.append("the node's RSS grew \(growth.fixed(2)) MiB (more than \(rssGrowthTolerance.fixed(0)))") }
        if drift > driftTolerance { misses.append("the last \(window) cycles took \(drift.fixed(2))× the first (more than \(driftTolerance.fixed(2))×)") }
        let verdict = misses.isEmpty
            ? "meets the targets: median \(median.fixed(2)) ms < \(medianTarget.fixed(0)) ms, node RSS +\(growth.fixed(2)) MiB "
                + "(≤ \(rssGrowthTolerance.fixed(0))), last/first \(window) cycles \(drift.fixed(2))× (≤ \(driftTolerance.fixed(2))×)"
            : "misses the targets: " + misses.joined(separator: "; ")
        return BenchReport(title: "handshake: \(cycles) cycles of TCP connect, TLS 1.3 (mutual certificates), HELLO both ways, close, against a `lifesync serve` process on loopback", figures: [
            ("cycles completed", Double(times.count), "cycles"),
            ("median cycle", median, "ms"),
            ("p90 cycle", sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.9).rounded(.up)) - 1)], "ms"),
            ("max cycle", sorted.last!, "ms"),
            ("median of the first \(window) cycles", first, "ms"),
            ("median of the last \(window) cycles", last, "ms"),
            ("node RSS after \(window) cycles", rssAfterWindow, "MiB"),
            ("node RSS after \(cycles) cycles", rssAtEnd, "MiB"),
        ], verdict: verdict)
    }
}
