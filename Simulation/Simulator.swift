import LifeSync

/// Many LifeSync nodes in one thread on virtual time. Each node runs the same `NodeCore`,
/// `SyncSession` and `Replica` (SQLite, in shared memory) as the daemon, on a `VirtualNetwork`;
/// the simulator adds the workload, the clocks, the faults and the invariant checks, all drawn
/// from one seed.
///
/// ```swift
/// let result = Simulator(seed: 42, options: SimulationOptions()).run()
/// result.ok          // every invariant held
/// result.traceHash   // equal for equal seeds
/// ```
///
/// A run has a safety phase (writes and faults) and a liveness phase (everything healed and
/// restarted, no more writes), after which the invariants of DESIGN.md are checked.
package final class Simulator {
    final class Node {
        let name: String
        let role: Role
        let path: String
        let clock: SimulatedClock
        var replica: Replica?
        /// Keeps the in-memory database alive while the node is crashed.
        let keeper: Database
        /// The node's recording files: like its disk, they survive a crash.
        let storage = MemoryRecordingStorage()
        /// A check of its waiting chunks is scheduled (`scheduleChecks`).
        var checksScheduled = false
        /// The device's write marks: they survive a crash and a restore of the replica.
        let marks = MemoryWriteMarks()
        /// The last copy of its replica taken aside (`takeBackup`), in shared memory.
        var backup: Database?
        var backupTime: Int64 = 0
        /// The write marks as they were when the copy was taken (a whole-device restore).
        var backupMarks: [String: WriteMark] = [:]
        /// Its recording files then: a whole-device restore puts them back too.
        var backupFiles: [String: [UInt8]] = [:]
        /// When the device was last restored (nil: never).
        var restoredAt: Int64?

        init(name: String, role: Role, path: String, clock: SimulatedClock, keeper: Database) {
            self.name = name
            self.role = role
            self.path = path
            self.clock = clock
            self.keeper = keeper
        }
    }

    package let seed: UInt64
    package let options: SimulationOptions
    let faultRandom: SeededRandom
    let workload: SeededRandom
    let nodeRandom: SeededRandom
    let hostileRandom: SeededRandom
    /// The adversary, when `options.hostile`; it holds no replica and is never judged.
    var hostile: HostileNode?
    /// The untrusted hosts, with `options.hostile`: judged by what reached them (nothing).
    var stranger: StrangerNode?
    let strangerRandom: SeededRandom
    /// When chunks are checked, with `options.checksLater`.
    let checkRandom: SeededRandom
    /// When replicas are copied aside and put back, with `options.restores`.
    let restoreRandom: SeededRandom
    /// When each node's running process last noted each untrusted key (`noteUntrusted`).
    var untrustedNotes: [String: Int64] = [:]
    /// The hosts, their links and the event queue; the simulator adds workload, faults and checks.
    let network: VirtualNetwork
    var now: Int64 { network.now }
    var nodes: [String: Node] = [:]
    let names: [String]
    var ledger = WriteLedger()
    /// Recordings attached during the run: id → (node, SHA-256, file name).
    var attached: [(id: String, node: String, sha256: SHA256.Digest, fileName: String, time: Int64)] = []
    /// Recordings a user deleted (the workload's explicit deletes): the only ones any honest
    /// replica may hold as deleted.
    var userDeletedRecordings = Set<String>()
    /// Recordings whose only bytes went with a device restored whole (see `bytesDeletedByUser`).
    var recordingsLostByRestore = Set<String>()
    var trace = Trace()
    var violations: [String] = []
    var safetyOver = false
    var converged = false
    static let epoch: Int64 = 1_795_305_600_000
    /// The recordings' chunk size in the simulation (recordings are 1–60 KB).
    static let chunkSize: UInt32 = 4_096

    package init(seed: UInt64, options: SimulationOptions) {
        self.seed = seed
        self.options = options
        let root = SeededRandom(seed: seed)
        var configuration = VirtualNetwork.Configuration()
        configuration.latency = options.latency
        configuration.bandwidth = max(1, options.bandwidth)
        configuration.partitionHold = options.duration
        configuration.faults = options.faults
        configuration.duplicationPerMille = options.faults && options.duplicationAndReordering ? options.duplicationAndReorderingPerMille : 0
        configuration.maximumBufferedInput = options.maximumBufferedInput
        configuration.stalledFrameTimeout = options.stalledFrameTimeout
        network = VirtualNetwork(configuration: configuration, random: root.derive("network"))
        faultRandom = root.derive("faults")
        workload = root.derive("workload")
        nodeRandom = root.derive("nodes")
        hostileRandom = root.derive("hostile")
        strangerRandom = root.derive("stranger")
        checkRandom = root.derive("checks")
        restoreRandom = root.derive("restores")
        names = options.nodeNames
        trace.echo = options.traceEcho
        network.tracer = { [unowned self] time, line, bytes in trace.record(time, line, bytes: bytes) }
        network.observer = { [unowned self] time, name, action in
            guard case .event(let event) = action else { return }
            trace.record(time, "\(name): \(event.logLine)")
            if case .historyRepaired(_, let repair) = event { followRepair(repair, on: name) }
            if case .untrustedPeer(_, let fingerprint, _) = event { noteUntrusted(fingerprint, by: name) }
        }
        network.onAdvance = { [unowned self] time in
            for node in nodes.values { node.clock.virtualTime = time }
        }
    }

    /// Runs the scenario to the end and checks the invariants.
    package func run() -> SimulationResult {
        do {
            try setUp()
            loop(until: options.duration)
            beginLiveness()
            loop(until: options.duration + options.settleLimit)
            if !converged {
                violations.append("liveness: full replicas did not converge within \(options.settleLimit / 1000) s after healing (\(convergenceGap() ?? "converged at the very end"))")
            }
            violations += network.violations
            violations += InvariantChecker(simulator: self).check()
        } catch {
            violations.append("setup: \(error)")
        }
        let result = SimulationResult(seed: seed, violations: violations, traceHash: trace.finish(), simulatedMilliseconds: now,
                                      events: trace.events, faults: network.faultCounts, writes: ledger.writes.count, traceExcerpt: trace.excerpt)
        tearDown()
        return result
    }

    // MARK: - Setup and phases

    func setUp() throws {
        if options.hostile {
            hostile = HostileNode(simulator: self, random: hostileRandom)
            stranger = StrangerNode(simulator: self, random: strangerRandom)
        }
        var identities: [(name: String, identity: ReplicaIdentity)] = []
        for (name, role) in zip(names, options.roles) {
            let path = "file:lifesync-sim-\(seed)-\(name)-\(ObjectIdentifier(self).hashValue)?mode=memory&cache=shared"
            let skew = options.clockSkew > 0 ? Int64(nodeRandom.next(below: UInt64(2 * options.clockSkew + 1))) - options.clockSkew : 0
            let drift = Int64(nodeRandom.next(below: 201)) - 100
            let clock = SimulatedClock(epoch: Simulator.epoch, offset: skew, driftPPM: drift)
            let keeper = try Database(path: path)
            identities.append((name, try Replica.create(path: path, role: role, clock: clock, random: nodeRandom.derive(name)).identity))
            let node = Node(name: name, role: role, path: path, clock: clock, keeper: keeper)
            node.storage.defersChecks = options.checksLater
            node.storage.onDeferredCheck = { [unowned self] in scheduleChecks(on: name) }
            nodes[name] = node
            node.storage.onRemove = { [unowned self] fileName in self.checkRemoval(of: fileName, on: name) }
            trace.record(0, "node \(name) \(role.rawValue) skew \(skew) drift \(drift)")
        }
        try pair(identities)
        for name in names { try startNode(name) }
        if !options.scriptOnly {
            for _ in 0..<options.operations {
                duringSafety(at: Int64(workload.next(below: UInt64(options.duration)))) { $0.performOperation() }
            }
            if options.faults {
                for _ in 0..<options.faultCount {
                    duringSafety(at: Int64(faultRandom.next(below: UInt64(options.duration)))) { $0.injectFault() }
                }
            }
        }
        for event in options.script { duringSafety(at: event.time) { $0.performScripted(event.action) } }
        if let hostile {
            network.attach(HostileNode.name, endpoint: hostile, key: Self.key(of: HostileNode.name, seed: seed))
            network.schedule(at: 200 + Int64(hostileRandom.next(below: 2_000))) { hostile.act() }
        }
        if let stranger {
            // Its key is nobody's: `pair` never trusts it.
            network.attach(StrangerNode.name, endpoint: stranger, key: Self.key(of: StrangerNode.name, seed: seed))
            network.watch(StrangerNode.name)
            network.schedule(at: 300 + Int64(strangerRandom.next(below: 2_000))) { stranger.act() }
        }
    }

    /// The fingerprint `name` proves in its handshakes (stands in for its key's SHA-256).
    static func key(of name: String, seed: UInt64) -> SHA256.Digest { SimulatedSigner(name: name, seed: seed).fingerprint }

    /// Every node trusts every other, and the hostile node as the node it says it is: a trusted
    /// peer can still be buggy, and it is the sessions' checks that must hold against it.
    func pair(_ identities: [(name: String, identity: ReplicaIdentity)]) throws {
        var peers = identities.map { TrustedPeer(nodeID: $0.identity.nodeID, role: $0.identity.role, fingerprint: Self.key(of: $0.name, seed: seed),
                                                 trustedAt: Timestamp(millisecondsSince1970: Simulator.epoch)) }
        if let hostile {
            peers.append(TrustedPeer(nodeID: hostile.nodeID, role: .phone, fingerprint: Self.key(of: HostileNode.name, seed: seed),
                                     trustedAt: Timestamp(millisecondsSince1970: Simulator.epoch)))
        }
        for (name, identity) in identities {
            let replica = try Replica(path: nodes[name]!.path, clock: nodes[name]!.clock, random: nodeRandom.derive("pair-\(name)"))
            for peer in peers where peer.nodeID != identity.nodeID { try replica.trust(peer) }
        }
    }

    /// Heal everything, restart crashed nodes, stop writing, and watch for convergence.
    func beginLiveness() {
        safetyOver = true
        trace.record(now, "liveness phase")
        hostile?.stop()
        stranger?.stop()
        network.configuration.faults = false
        network.heal()
        for node in nodes.values { node.storage.quota = .max }
        for name in names where !network.isUp(name) { try? startNode(name) }
        network.schedule(at: now + 5_000) { [unowned self] in check() }
    }

    /// Schedules a step of the safety phase: writes and faults stop when liveness begins.
    func duringSafety(at time: Int64, _ step: @escaping (Simulator) -> Void) {
        network.schedule(at: time) { [unowned self] in if !safetyOver { step(self) } }
    }

    /// Every 5 s of the liveness phase: have the full replicas converged?
    func check() {
        if checkConvergence() {
            converged = true
            trace.record(now, "converged")
        } else {
            network.schedule(at: now + 5_000) { [unowned self] in check() }
        }
    }

    func tearDown() {
        for name in names { network.crash(name) }
        for node in nodes.values { node.replica = nil }
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
        replica.signatureVerifier = SimulatedVerifier()
        try replica.adoptSigningKey(SimulatedSigner(name: name, seed: seed))
        replica.writeMarks = node.marks
        if let evidence = try replica.startFreshIfRestoredNow() { trace.record(now, "\(name): restored (\(evidence)): new incarnation \(replica.identity.incarnation)") }
        _ = try? replica.reconcileStoredCopies(in: node.storage)
        var configuration = NodeConfiguration(peers: peers(of: name).filter { network.isLinked(name, $0) })
        configuration.session.plantedBugs = options.plantedBugs
        // Small chunks, so even small recordings cross in many pieces, more than a window holds.
        configuration.session.transfer.chunkSize = Simulator.chunkSize
        // Writes reach the core directly (localWrite); polling the file would only cost ticks.
        configuration.changePollInterval = 3_600_000
        let core = NodeCore(replica: replica, configuration: configuration, random: nodeRandom.derive("core-\(name)-\(now)"), now: now,
                            storage: node.storage)
        node.replica = replica
        forgetUntrustedNotes(of: name)
        trace.record(now, "start \(name)")
        network.start(name, key: Self.key(of: name, seed: seed), core: core)
    }

    // MARK: - The event loop

    /// Runs the network until `end`; in the liveness phase, only until the replicas converged.
    func loop(until end: Int64) {
        network.run(until: end) { converged && safetyOver }
    }

    /// Carries out a node's actions (a workload step's `localWrite`, say) on the network.
    func perform(_ actions: [NodeAction], on name: String) {
        network.perform(actions, on: name)
    }
}
