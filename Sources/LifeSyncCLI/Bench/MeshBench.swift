import Glibc
import FoundationEssentials
import LifeSync
import LifeSyncRuntime

/// A household of paired devices converging: `nodes` real `lifesync serve` processes on loopback
/// (one phone, the rest macs), every node paired with every other and dialling those after it,
/// so each pair shares one connection. Each node first writes its share of `count` entries
/// offline. Timed from the first process's start until every replica holds every entry, next to
/// two nodes converging on the same entries in the same run (the floor). Then one entry written
/// on the phone (as `lifesync add` writes it, beside the serving process) is timed until every
/// node holds it; each node's changes received beyond the entries it lacked, the most copies of
/// one change any node received (its `/metrics`), and its RSS once idle, are read last. All the
/// nodes share this machine's cores, where each device of a household has its own: the processor
/// time of the busiest node until convergence, against the busiest of the two, is the ratio a
/// household of separate devices would see.
enum MeshBench {
    static func run(nodes: Int, count: Int, directory: String) throws -> BenchReport {
        let binary = try SyncBench.selfExecutable()
        let floor = try converge(nodes: 2, count: count, directory: directory + "/two", binary: binary, idle: false)
        let mesh = try converge(nodes: nodes, count: count, directory: directory + "/mesh", binary: binary, idle: true)
        return BenchReport(title: "mesh of \(nodes) paired nodes (a phone and \(nodes - 1) macs, all paired, one connection a pair) converging on \(count) entries written offline, each node its share", figures: [
            ("two nodes converge", floor.seconds, "s"),
            ("\(nodes) nodes converge", mesh.seconds, "s"),
            ("ratio to two nodes", mesh.seconds / floor.seconds, "x"),
            // Processor time until convergence.
            ("busiest node's CPU, two nodes", floor.busiest, "s"),
            ("busiest node's CPU, \(nodes) nodes", mesh.busiest, "s"),
            ("CPU ratio to two nodes", mesh.busiest / floor.busiest, "x"),
            ("one write reaches every node", mesh.reach * 1000, "ms"),
            ("received / lacked, worst node", mesh.worstReceived, "x"),
            ("changes received more than once", Double(mesh.extra), "changes"),
            ("most copies of one change, any node", Double(mesh.mostCopies), "copies"),
            ("idle RSS, median node", mesh.idle?.median ?? 0, "MiB"),
            ("idle RSS, largest node", mesh.idle?.largest ?? 0, "MiB"),
        ])
    }

    struct Outcome {
        var seconds: Double
        /// The most processor time (user and system) any node had used when all held every entry.
        var busiest: Double
        /// From the phone's commit of one more entry until every node holds it.
        var reach: Double
        /// Of all nodes, the largest count of changes received over the count it lacked.
        var worstReceived: Double
        /// Changes received beyond what each node lacked, summed over the nodes.
        var extra: Int
        /// The most copies of one change any node received (`lifesync_change_copies_max`).
        var mostCopies: UInt64
        /// Nil unless asked for (the floor's is not reported).
        var idle: (median: Double, largest: Double)?
    }

    /// `idle`: also wait for the nodes to idle and read their RSS.
    static func converge(nodes count: Int, count entryCount: Int, directory: String, binary: String, idle: Bool) throws -> Outcome {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let entries = BenchWorkload.entries(count: entryCount, role: .mac)
        var replicas: [Replica] = [], keys: [String] = []
        for index in 0..<count {
            let path = directory + "/node\(index).sqlite"
            let replica = try Replica.create(path: path, role: index == 0 ? .phone : .mac, clock: SystemClock(), random: SystemRandom())
            try replica.importEntries(Array(entries[(index * entryCount / count)..<((index + 1) * entryCount / count)]))
            unlink(NodeKey.path(forReplica: path))
            replicas.append(replica)
            keys.append(try replica.createAPIKey(name: "bench"))
        }
        // Each node's sync port, then its HTTP port (for `/metrics`).
        let allPorts = try SyncBench.freeLoopbackPorts(2 * count)
        let ports = Array(allPorts[..<count]), httpPorts = Array(allPorts[count...])
        // Paired as pairing strings would pair them: each knows where to dial those after it.
        try LocalPairing.pair(replicas) { i, j in j > i ? ["127.0.0.1:\(ports[j])"] : [] }
        var processes: [Subprocess] = []
        defer { for process in processes { _ = process.terminate() } }
        let start = MonotonicClock.seconds()
        // The last first: each node's peers listen before it dials them.
        for index in (0..<count).reversed() {
            let log = directory + "/node\(index).log"
            let peers = ports[(index + 1)...].flatMap { ["--peer", "127.0.0.1:\($0)"] }
            processes.append(try SyncBench.spawn(binary, ["serve", "--db", replicas[index].path, "--listen", "127.0.0.1:\(ports[index])",
                                                           "--no-discovery", "--reconnect-max-ms", "200", "--http", "\(httpPorts[index])"] + peers,
                                                  log: log))
            try SyncBench.waitUntilListening(log: log)
        }
        func holdAll(_ total: Int) -> Bool { replicas.allSatisfy { ((try? $0.liveEntryCount()) ?? 0) >= total } }
        guard waitUntil(timeout: 600, every: 0.01, { holdAll(entryCount) }) else {
            throw CLIError.refused("bench mesh: \(count) nodes did not converge within 600 s (logs in \(directory))")
        }
        let seconds = MonotonicClock.seconds() - start
        let busiest = processes.map { ProcessMemory.cpuSeconds($0.pid) }.max() ?? 0

        let written = MonotonicClock.seconds()
        try replicas[0].add(BenchWorkload.entries(count: 1, role: .phone, seed: 7)[0])
        guard waitUntil(timeout: 60, every: 0.005, { holdAll(entryCount + 1) }) else {
            throw CLIError.refused("bench mesh: one write did not reach all \(count) nodes within 60 s (logs in \(directory))")
        }
        let reach = MonotonicClock.seconds() - written

        // The mesh is quiet once no node has counted a change received for 3 s (duplicates a peer
        // offered before it learnt what the node holds still arrive after convergence): every
        // duplicate is counted, and the idle RSS is read from nodes with nothing left to do.
        func receivedBy(_ replica: Replica) -> Int { ((try? replica.peers()) ?? []).reduce(0) { $0 + $1.entriesReceived } }
        var counted = replicas.map(receivedBy), quietSince = MonotonicClock.seconds()
        _ = waitUntil(timeout: 60, every: 0.5) {
            let now = replicas.map(receivedBy)
            if now != counted { (counted, quietSince) = (now, MonotonicClock.seconds()) }
            return MonotonicClock.seconds() - quietSince >= 3
        }
        // Each node lacked every entry but its own share (and the phone's one write, but the phone).
        var worst = 0.0, extra = 0
        for (index, replica) in replicas.enumerated() {
            let own = (index + 1) * entryCount / count - index * entryCount / count
            let lacked = entryCount - own + (index == 0 ? 0 : 1)
            func received() -> Int { receivedBy(replica) }
            // The counters are saved a moment after the batches.
            guard waitUntil(timeout: 10, every: 0.05, { received() >= lacked }) else {
                throw CLIError.refused("bench mesh: node \(index) counted \(received()) changes received for the \(lacked) it lacked and holds")
            }
            let got = received()
            worst = max(worst, Double(got) / Double(max(lacked, 1)))
            extra += max(0, got - lacked)
        }
        let mostCopies = try (0..<count).map { try copiesMax(port: httpPorts[$0], key: keys[$0]) }.max() ?? 0
        guard idle else {
            return Outcome(seconds: seconds, busiest: busiest, reach: reach, worstReceived: worst, extra: extra, mostCopies: mostCopies, idle: nil)
        }
        // Idle: two of the nodes' 2-second memory turns with nothing to sync.
        usleep(5_000_000)
        let rss = processes.map { ProcessMemory.resident($0.pid) }
        return Outcome(seconds: seconds, busiest: busiest, reach: reach, worstReceived: worst, extra: extra, mostCopies: mostCopies,
                       idle: (BenchReport.median(rss), rss.max() ?? 0))
    }

    /// A node's `lifesync_change_copies_max`, read from its `/metrics`.
    static func copiesMax(port: UInt16, key: String) throws -> UInt64 {
        let (status, body) = try BenchHTTPClient(port: port).request("GET", "/metrics", headers: [("Authorization", "Bearer \(key)")])
        let text = String(decoding: body, as: UTF8.self)
        guard status == 200, let line = text.split(separator: "\n").first(where: { $0.hasPrefix("lifesync_change_copies_max ") }),
              let value = Double(line.split(separator: " ").last ?? ""), value >= 1, value < 1e9 else {
            throw CLIError.refused("bench mesh: no lifesync_change_copies_max in the /metrics of the node on HTTP port \(port) (status \(status))")
        }
        return UInt64(value)
    }
}
