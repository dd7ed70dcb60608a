import LifeSync

/// Many LifeSync nodes in one thread on virtual time. Each node runs the same `NodeCore`,
/// `SyncSession` and `Replica` (SQLite, in shared memory) as the daemon; the simulator plays the
/// network, the clocks and the faults, all drawn from one seed.
///
/// ```swift
/// let result = Simulator(seed: 42, options: SimulationOptions()).run()
/// result.ok          // every invariant held
/// result.traceHash   // equal for equal seeds
/// ```
///
/// A run has a safety phase (writes and faults) and a liveness phase (everything healed and
/// restarted, no more writes), after which the invariants of DESIGN.md are checked.
public final class Simulator {
    enum Event {
        case tick(node: String)
        case deliver(end: Int, bytes: [UInt8])
        case closeEnd(end: Int)
        case dial(node: String, peer: Int, address: String)
        case operation
        case fault
        case heal
        case restart(node: String)
        case scripted(ScriptedEvent.Action)
        case check
        /// The hostile node's next step (`HostileNode.act`).
        case hostile
        /// A payload held back to be overtaken (a reordering fault) goes out if nothing overtook it.
        case release(connection: Int, direction: Int)
    }

    final class Node {
        let name: String
        let role: Role
        let path: String
        let clock: SimulatedClock
        var replica: Replica?
        var core: NodeCore?
        var scheduledTick: Int64?
        /// Keeps the in-memory database alive while the node is crashed.
        let keeper: Database
        /// The node's recording files: like its disk, they survive a crash.
        let storage = MemoryRecordingStorage()

        init(name: String, role: Role, path: String, clock: SimulatedClock, keeper: Database) {
            self.name = name
            self.role = role
            self.path = path
            self.clock = clock
            self.keeper = keeper
        }

        var isUp: Bool { core != nil }
    }

    /// One TCP connection: two ends with their own IDs, a latency, and in-order delivery.
    final class Connection {
        let dialer: String
        let acceptor: String
        let latency: Int64
        var open = true
        /// When the last byte sent in each direction arrives (delivery stays in order).
        var lastArrival: [Int64] = [0, 0]
        /// Per direction, a payload held back so that the next one overtakes it (reordering).
        var held: [[UInt8]?] = [nil, nil]
        /// Neither end is the hostile node: duplication and reordering faults apply.
        var honest: Bool { dialer != HostileNode.name && acceptor != HostileNode.name }

        init(dialer: String, acceptor: String, latency: Int64) {
            self.dialer = dialer
            self.acceptor = acceptor
            self.latency = latency
        }
    }

    public let seed: UInt64
    public let options: SimulationOptions
    let network: SeededRandom
    let faultRandom: SeededRandom
    let workload: SeededRandom
    let nodeRandom: SeededRandom
    let hostileRandom: SeededRandom
    /// The adversary, when `options.hostile`; it holds no replica and is never judged.
    var hostile: HostileNode?
    var queue = EventQueue<Event>()
    var now: Int64 = 0
    var nodes: [String: Node] = [:]
    let names: [String]
    var connections: [Int: Connection] = [:]
    var nextConnection = 0
    /// Directed pairs whose traffic is dropped (partitions), and pairs with no link at all.
    var blocked = Set<String>()
    var unlinked = Set<String>()
    var ledger = WriteLedger()
    /// Recordings attached during the run: id → (node, SHA-256, file name).
    var attached: [(id: String, node: String, sha256: SHA256.Digest, fileName: String)] = []
    /// Recordings a user deleted (the workload's explicit deletes): the only ones any honest
    /// replica may hold as deleted.
    var userDeletedRecordings = Set<String>()
    var trace = Trace()
    var faultCounts: [String: Int] = [:]
    var violations: [String] = []
    var safetyOver = false
    var converged = false
    static let epoch: Int64 = 1_795_305_600_000

    public init(seed: UInt64, options: SimulationOptions) {
        self.seed = seed
        self.options = options
        let root = SeededRandom(seed: seed)
        network = root.derive("network")
        faultRandom = root.derive("faults")
        workload = root.derive("workload")
        nodeRandom = root.derive("nodes")
        hostileRandom = root.derive("hostile")
        names = options.nodeNames
    }

    /// Runs the scenario to the end and checks the invariants.
    public func run() -> SimulationResult {
        do {
            try setUp()
            loop(until: options.duration)
            beginLiveness()
            loop(until: options.duration + options.settleLimit)
            if !converged {
                violations.append("liveness: full replicas did not converge within \(options.settleLimit / 1000) s after healing (\(convergenceGap() ?? "converged at the very end"))")
            }
            violations += InvariantChecker(simulator: self).check()
        } catch {
            violations.append("setup: \(error)")
        }
        let result = SimulationResult(seed: seed, violations: violations, traceHash: trace.finish(), simulatedMilliseconds: now,
                                      events: trace.events, faults: faultCounts, writes: ledger.writes.count, traceExcerpt: trace.excerpt)
        tearDown()
        return result
    }

    // MARK: - Setup and phases

    func setUp() throws {
        for (name, role) in zip(names, options.roles) {
            let path = "file:lifesync-sim-\(seed)-\(name)-\(ObjectIdentifier(self).hashValue)?mode=memory&cache=shared"
            let skew = options.clockSkew > 0 ? Int64(nodeRandom.next(below: UInt64(2 * options.clockSkew + 1))) - options.clockSkew : 0
            let drift = Int64(nodeRandom.next(below: 201)) - 100
            let clock = SimulatedClock(epoch: Simulator.epoch, offset: skew, driftPPM: drift)
            let keeper = try Database(path: path)
            _ = try Replica.create(path: path, role: role, clock: clock, random: nodeRandom.derive(name))
            let node = Node(name: name, role: role, path: path, clock: clock, keeper: keeper)
            nodes[name] = node
            node.storage.onRemove = { [unowned self] fileName in self.checkRemoval(of: fileName, on: name) }
            trace.record(0, "node \(name) \(role.rawValue) skew \(skew) drift \(drift)")
        }
        for name in names { try startNode(name) }
        if !options.scriptOnly {
            for _ in 0..<options.operations { queue.push(.operation, at: Int64(workload.next(below: UInt64(options.duration)))) }
            if options.faults {
                for _ in 0..<options.faultCount { queue.push(.fault, at: Int64(faultRandom.next(below: UInt64(options.duration)))) }
            }
        }
        for event in options.script { queue.push(.scripted(event.action), at: event.time) }
        if options.hostile {
            hostile = HostileNode(simulator: self, random: hostileRandom)
            queue.push(.hostile, at: 200 + Int64(hostileRandom.next(below: 2_000)))
        }
    }

    /// Heal everything, restart crashed nodes, stop writing, and watch for convergence.
    func beginLiveness() {
        safetyOver = true
        trace.record(now, "liveness phase")
        hostile?.stop()
        blocked.removeAll()
        for node in nodes.values { node.storage.quota = .max }
        for name in names where !(nodes[name]!.isUp) { try? startNode(name) }
        queue.push(.check, at: now + 5_000)
    }

    func tearDown() {
        for node in nodes.values {
            node.core = nil
            node.replica = nil
        }
        nodes.removeAll()
    }

    /// The node everyone dials: the first phone; with no phone, the first node.
    var hub: String { zip(names, options.roles).first { $0.1 == .phone }?.0 ?? names[0] }

    /// The nodes a node dials: everyone dials the hub.
    func peers(of name: String) -> [String] {
        name == hub ? [] : [hub]
    }

    func startNode(_ name: String) throws {
        let node = nodes[name]!
        let replica = try Replica(path: node.path, clock: node.clock, random: nodeRandom.derive("\(name)-\(now)"))
        replica.plantedBugs = options.plantedBugs
        var configuration = NodeConfiguration(peers: peers(of: name).filter { !unlinked.contains(Simulator.pair(name, $0)) })
        configuration.session.plantedBugs = options.plantedBugs
        // Small chunks, so even small recordings cross in many pieces.
        configuration.session.transfer.chunkSize = 16_384
        // Writes reach the core directly (localWrite); polling the file would only cost ticks.
        configuration.changePollInterval = 3_600_000
        let core = NodeCore(replica: replica, configuration: configuration, random: nodeRandom.derive("core-\(name)-\(now)"), now: now,
                            storage: node.storage)
        node.replica = replica
        node.core = core
        node.scheduledTick = nil
        trace.record(now, "start \(name)")
        perform(core.start(now: now), on: name)
    }

    // MARK: - The event loop

    func loop(until end: Int64) {
        var steps = 0
        while let time = queue.nextTime, time <= end, steps < 5_000_000 {
            steps += 1
            let (at, event) = queue.pop()!
            now = at
            for node in nodes.values { node.clock.virtualTime = now }
            handle(event)
            if converged && safetyOver { return }
        }
        now = max(now, end)
    }

    func handle(_ event: Event) {
        switch event {
        case .tick(let name):
            guard let node = nodes[name], let core = node.core else { return }
            node.scheduledTick = nil
            perform(core.tick(now: now), on: name)
        case .deliver(let end, let bytes):
            guard let connection = connections[end / 2], connection.open else { return }
            let name = end % 2 == 0 ? connection.dialer : connection.acceptor
            if name == HostileNode.name {
                trace.record(now, "deliver \(end) \(bytes.count)", bytes: bytes)
                hostile?.received(end: end, bytes: bytes)
                return
            }
            guard let core = nodes[name]?.core else { return }
            trace.record(now, "deliver \(end) \(bytes.count)", bytes: bytes)
            perform(core.received(connection: end, bytes: bytes, now: now), on: name)
        case .closeEnd(let end):
            guard let connection = connections[end / 2] else { return }
            let name = end % 2 == 0 ? connection.dialer : connection.acceptor
            trace.record(now, "closed \(end) at \(name)")
            if name == HostileNode.name { hostile?.closed(end: end) }
            if let core = nodes[name]?.core { perform(core.closed(connection: end, now: now), on: name) }
        case .dial(let name, let peer, let address):
            completeDial(from: name, peer: peer, to: address)
        case .operation:
            if !safetyOver { performOperation() }
        case .fault:
            if !safetyOver { injectFault() }
        case .heal:
            if !safetyOver {
                blocked.removeAll()
                for node in nodes.values { node.storage.quota = .max }
                trace.record(now, "heal")
            }
        case .restart(let name):
            if let node = nodes[name], !node.isUp { try? startNode(name) }
        case .scripted(let action):
            if !safetyOver { performScripted(action) }
        case .hostile:
            hostile?.act()
        case .release(let id, let direction):
            release(connection: id, direction: direction)
        case .check:
            if checkConvergence() {
                converged = true
                trace.record(now, "converged")
            } else {
                queue.push(.check, at: now + 5_000)
            }
        }
    }

    /// Carries out a node's actions and schedules its next tick.
    func perform(_ actions: [NodeAction], on name: String) {
        guard let node = nodes[name] else { return }
        for action in actions {
            switch action {
            case .connect(let peer, let address):
                queue.push(.dial(node: name, peer: peer, address: address), at: now + 1 + Int64(network.next(below: 20)))
            case .send(let end, let bytes):
                send(bytes, from: end)
            case .close(let end):
                closeConnection(of: end)
            case .event(let event):
                trace.record(now, "\(name): \(event)")
            case .sessionEvent:
                break
            }
        }
        if let core = node.core, let deadline = core.nextDeadline {
            let at = max(deadline, now + 1)
            if node.scheduledTick.map({ at < $0 }) ?? true {
                node.scheduledTick = at
                queue.push(.tick(node: name), at: at)
            }
        }
    }

    static func pair(_ a: String, _ b: String) -> String { a < b ? "\(a)|\(b)" : "\(b)|\(a)" }
    static func direction(_ from: String, _ to: String) -> String { "\(from)>\(to)" }
}
