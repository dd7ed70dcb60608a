import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

/// Replicates entries written offline on a watch to a fresh phone over loopback TCP, with both
/// nodes as real `lifesync serve` processes, and in the same run inserts the same rows with raw
/// SQLite. Half-way the watch is killed (SIGKILL) and restarted: whatever the phone receives
/// beyond the entries themselves was sent twice.
enum SyncBench {
    static func run(count: Int, directory: String) throws -> BenchReport {
        let binary = try selfExecutable()
        let entries = BenchWorkload.entries(count: count)
        let rawPath = directory + "/raw.sqlite", watchPath = directory + "/watch.sqlite", phonePath = directory + "/phone.sqlite"
        for path in [rawPath, watchPath, phonePath] { ImportBench.removeDatabase(path) }
        // The baseline runs twice before the replication and once after, and its median counts:
        // the machine's speed drifts, and the ratio should compare rates of the same moment.
        let rows = RawSQLiteBaseline.rows(entries)
        var rawRuns = [try RawSQLiteBaseline.timedRun(rows, path: rawPath), try RawSQLiteBaseline.timedRun(rows, path: rawPath)]

        let watch = try Replica.create(path: watchPath, role: .watch, clock: SystemClock(), random: SystemRandom())
        try watch.importEntries(entries)
        let origin = watch.identity.incarnation
        let phone = try Replica.create(path: phonePath, role: .phone, clock: SystemClock(), random: SystemRandom())
        for path in [watchPath, phonePath] { unlink(NodeKey.path(forReplica: path)) }
        try LocalPairing.pair([watch, phone])
        let port = try freeLoopbackPort()
        let phoneProcess = try spawn(binary, ["serve", "--db", phonePath, "--listen", "127.0.0.1:\(port)"], log: directory + "/phone.log")
        defer { phoneProcess.terminate() }
        try waitUntilListening(log: directory + "/phone.log")
        var watchProcess = try spawn(binary, ["serve", "--db", watchPath, "--peer", "127.0.0.1:\(port)", "--reconnect-max-ms", "200"], log: directory + "/watch.log")
        defer { watchProcess.terminate() }

        let start = MonotonicClock.seconds()
        func received() -> UInt64 { (try? phone.replicaVector()[origin]) ?? 0 }
        // Polled every 5 ms: the end of a 2-second run is seen within a quarter per cent of it.
        guard waitUntil(timeout: 600, every: 0.005, { received() >= UInt64(count / 2) }) else { throw CLIError.refused("bench sync: the phone stalled") }
        watchProcess.kill()
        watchProcess = try spawn(binary, ["serve", "--db", watchPath, "--peer", "127.0.0.1:\(port)", "--reconnect-max-ms", "200"], log: directory + "/watch2.log")
        guard waitUntil(timeout: 600, every: 0.005, { received() >= UInt64(count) }) else { throw CLIError.refused("bench sync: the phone stalled") }
        let syncSeconds = MonotonicClock.seconds() - start
        let stored = try phone.liveEntryCount()
        guard stored == count else { throw CLIError.refused("bench sync: the phone holds \(stored) of \(count) entries") }
        // Every change the phone took in, over both sessions with the watch: its peer counters,
        // which the phone saves a moment after the batches themselves (read before it stops).
        func receivedChanges() -> Int { ((try? phone.peers()) ?? []).reduce(0) { $0 + $1.entriesReceived } }
        _ = waitUntil(timeout: 30, every: 0.05, { receivedChanges() >= count })
        let rss = ProcessMemory.peak(phoneProcess.pid)
        // Idle: two of the nodes' 2-second memory turns with nothing to read (NodeServer.giveMemoryBack).
        usleep(5_000_000)
        let idle = (phone: ProcessMemory.resident(phoneProcess.pid), watch: ProcessMemory.resident(watchProcess.pid))
        // Both nodes stopped first, so nothing of theirs runs alongside the last baseline.
        for process in [watchProcess, phoneProcess] { process.terminate() }
        rawRuns.append(try RawSQLiteBaseline.timedRun(rows, path: rawPath))
        let rawSeconds = BenchReport.median(rawRuns)
        let counted = receivedChanges()
        guard counted >= count else { throw CLIError.refused("bench sync: the phone counted \(counted) changes received for \(count) stored") }

        let rawRate = Double(count) / rawSeconds, syncRate = Double(count) / syncSeconds
        return BenchReport(title: "sync \(count) entries watch → fresh phone over loopback TCP (watch killed and restarted half-way)", figures: [
            ("raw SQLite inserts (entries/s)", rawRate, "entries/s"),
            ("replication (entries/s)", syncRate, "entries/s"),
            ("ratio replication / raw", syncRate / rawRate, "x"),
            ("phone peak RSS", rss, "MiB"),
            ("phone RSS idle after it", idle.phone, "MiB"),
            ("watch RSS idle after it", idle.watch, "MiB"),
            ("entries received twice", Double(max(0, counted - count)), "entries"),
        ])
    }

    static func selfExecutable() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw CLIError.refused("cannot find the lifesync binary") }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts `binary arguments…` with stdout and stderr in `log` (made anew).
    static func spawn(_ binary: String, _ arguments: [String], log: String) throws -> Subprocess {
        guard FileManager.default.createFile(atPath: log, contents: nil) else { throw CLIError.refused("cannot create \(log)") }
        return try Subprocess(binary, arguments, standardOutput: log)
    }

    /// Waits for a `serve` process to print that it listens (it does once its socket is bound):
    /// a watch started sooner is refused and waits out a reconnect delay, which a bench would
    /// count as sync time.
    /// Up to a minute: the 22nd node of 40 took more than 10 s to start beside the 21 before it
    /// shaking hands and syncing on two cores.
    static func waitUntilListening(log: String) throws {
        let listening = waitUntil(timeout: 60, every: 0.002) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(" serving ")
        }
        guard listening else { throw CLIError.refused("bench: the node did not start listening within 60 s (see \(log))") }
    }

    /// `count` ports free on 127.0.0.1 below the kernel's ephemeral range
    /// (`ip_local_port_range`), for nodes started one after another. A port the kernel hands out
    /// (`freeLoopbackPort`) can be taken, before its node listens, as the local end of an
    /// earlier node's outgoing connection: two 40-node runs in 14 stopped with "Address already
    /// in use". The search starts at a place set by the process ID, so two benches at once
    /// seldom meet.
    static func freeLoopbackPorts(_ count: Int) throws -> [UInt16] {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) } ?? []
        let low = 10_000, high = min(range.first ?? 32_768, 65_536)
        guard high - low >= 4 * count else { return try (0..<count).map { _ in try freeLoopbackPort() } }
        var ports: [UInt16] = []
        var candidate = low + Int(getpid()) % (high - low)
        for _ in 0..<(high - low) where ports.count < count {
            candidate = candidate + 1 >= high ? low : candidate + 1
            if canBind(UInt16(candidate)) { ports.append(UInt16(candidate)) }
        }
        guard ports.count == count else { throw CLIError.refused("cannot find \(count) free ports on 127.0.0.1 below \(high)") }
        return ports
    }

    /// Whether a listening socket could bind `port` on 127.0.0.1 now.
    static func canBind(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A port the kernel just had free on 127.0.0.1.
    static func freeLoopbackPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw CLIError.refused("cannot find a free port on 127.0.0.1") }
        return UInt16(bigEndian: address.sin_port)
    }
}
