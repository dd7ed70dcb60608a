import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import LifeSyncSimulation
import TestSupport

// MARK: - NodeCores on the shared virtual network

/// Several `NodeCore`s on the simulator's `VirtualNetwork` (the same dials, links, closes and
/// timers), with what tests look at kept aside: every frame on the wire decoded, the dials, the
/// session and node events. Latency and dial time are fixed (`latency`, `connectLatency`) so
/// tests can reason about time; the network's own checks ("two dials at once", a core using an
/// end it does not own, a run that never settles) land in `violations`.
final class VirtualNet {
    final class Node {
        let name: String
        var replica: Replica
        let configuration: NodeConfiguration
        let random: SeededRandom
        var core: NodeCore

        init(name: String, replica: Replica, configuration: NodeConfiguration, seed: UInt64, now: Int64) {
            self.name = name
            self.replica = replica
            self.configuration = configuration
            random = SeededRandom(seed: seed)
            core = NodeCore(replica: replica, configuration: configuration, random: random, now: now)
        }
    }

    struct WireRecord {
        var time: Int64
        var from: String
        var to: String
        var message: Message
    }

    struct Dial {
        var time: Int64
        var node: String
        var peer: Int
        var address: String
    }

    let clock: ManualClock
    let network: VirtualNetwork
    var now: Int64 { network.now }
    /// One-way latency of every connection, ms.
    var latency: Int64 = 10 { didSet { network.configuration.latency = latency...latency } }
    /// How long a dial takes to connect or fail, ms.
    var connectLatency: Int64 = 5 { didSet { network.configuration.dialDelay = connectLatency...connectLatency } }
    private(set) var nodes: [String: Node] = [:]
    private(set) var wire: [WireRecord] = []
    private(set) var events: [(time: Int64, node: String, connection: Int, event: SessionEvent)] = []
    private(set) var dials: [Dial] = []
    private(set) var logs: [(time: Int64, node: String, line: String)] = []
    /// The same, typed.
    private(set) var nodeEvents: [(time: Int64, node: String, event: NodeEvent)] = []
    /// Each `.replicaChanged` a node gave, and when.
    private(set) var replicaChangedNotices: [(time: Int64, node: String)] = []
    private(set) var undecodable: [String] = []

    var connectFailures: [(time: Int64, node: String, peer: Int)] { network.failedDials.map { ($0.time, $0.host, $0.peer) } }
    var violations: [String] { network.violations + undecodable }

    init() {
        let clock = ManualClock(milliseconds: ReplicaFixtures.epoch)
        self.clock = clock
        var configuration = VirtualNetwork.Configuration()
        configuration.latency = 10...10
        configuration.dialDelay = 5...5
        configuration.eventLimit = 3_000_000
        network = VirtualNetwork(configuration: configuration, random: SeededRandom(seed: 1))
        network.onAdvance = { clock.milliseconds = ReplicaFixtures.epoch + $0 }
        network.observer = { [unowned self] time, name, action in record(action, of: name, at: time) }
    }

    // MARK: Building the network

    /// An in-memory replica on the network's clock.
    func memoryReplica(_ role: Role, seed: UInt64) throws -> Replica {
        try ReplicaFixtures.replica(role: role, seed: seed, clock: clock)
    }

    @discardableResult
    func add(_ name: String, replica: Replica, peers: [String] = [], seed: UInt64 = 1,
             configure: (inout NodeConfiguration) -> Void = { _ in }) -> Node {
        var configuration = NodeConfiguration(peers: peers)
        configure(&configuration)
        let node = Node(name: name, replica: replica, configuration: configuration, seed: seed, now: now)
        nodes[name] = node
        return node
    }

    /// `start` on a node; with `replica`, on that replica (a fresh core, as a restarted process).
    /// Every two nodes of the network trust each other (paired as they start).
    func start(_ name: String, replica: Replica? = nil) {
        if let replica { replace(name, replica: replica) }
        for other in nodes.keys.sorted() where other != name {
            pair(nodes[name]!.replica, trusts: other)
            pair(nodes[other]!.replica, trusts: name)
        }
        network.heal(name)
        try! nodes[name]!.replica.adoptSigningKey(Self.signer(name))
        network.start(name, key: Self.key(name), core: nodes[name]!.core)
    }

    /// The key `name` proves, and seals its writes with, whatever replica it runs on.
    static func signer(_ name: String) -> NodeKey { TestKeys.key(for: "virtual node \(name)") }

    /// The fingerprint of `name`'s key.
    static func key(_ name: String) -> SHA256.Digest { signer(name).fingerprint }

    /// `replica` trusts node `name` under its key, as whatever node its replica is now.
    func pair(_ replica: Replica, trusts name: String) {
        let identity = nodes[name]!.replica.identity
        if let holder = try? replica.trustedPeer(fingerprint: Self.key(name)), holder.nodeID != identity.nodeID {
            _ = try? replica.untrust(nodeID: holder.nodeID)
        }
        try! replica.trust(TrustedPeer(nodeID: identity.nodeID, role: identity.role, fingerprint: Self.key(name), trustedAt: replica.now))
    }

    /// Gives a stopped node another replica (and a fresh core), letting go of the old one.
    func replace(_ name: String, replica: Replica) {
        let node = nodes[name]!
        precondition(!network.isUp(name))
        node.replica = replica
        node.core = NodeCore(replica: replica, configuration: node.configuration, random: node.random, now: now)
    }

    /// The process dies (`VirtualNetwork.crash`); `start` brings it back with a fresh core.
    func crash(_ name: String, keepSentBytes: Bool = false) {
        let node = nodes[name]!
        network.crash(name, keepSentBytes: keepSentBytes)
        node.core = NodeCore(replica: node.replica, configuration: node.configuration, random: node.random, now: now)
    }

    /// Resets every link of `name` (both ends see `closed`); the node keeps running.
    func cutLinks(of name: String) {
        network.resetConnections { $0 == name || $1 == name }
    }

    /// While unreachable, dials to and from the node fail (its open links are left alone).
    func setReachable(_ name: String, _ reachable: Bool) {
        if reachable {
            network.heal(name)
        } else {
            network.isolate(name, from: nodes.keys.sorted())
        }
    }

    func connectionCount(_ name: String) -> Int { network.openConnections(of: name).count }

    // MARK: Writes

    /// Adds `count` entries on `name` through its own replica and tells its core.
    @discardableResult
    func write(_ name: String, count: Int = 1, label: String = "note") throws -> [String] {
        let node = nodes[name]!
        var ids: [String] = []
        for i in 0..<count {
            ids.append(try node.replica.add(json: ReplicaFixtures.entryJSON(text: "\(label) \(name) \(i) @\(now)")).id)
        }
        if network.isUp(name) { execute(name, node.core.localWrite(now: now)) }
        return ids
    }

    // MARK: Running

    /// Runs until virtual time `end`.
    func run(until end: Int64) { network.run(until: end) }

    func run(for duration: Int64) { run(until: now + duration) }

    /// Runs until `condition` holds (checked after every event) or `limit` ms pass. True if it held.
    @discardableResult
    func run(upTo limit: Int64, until condition: () throws -> Bool) rethrows -> Bool {
        try network.run(until: now + limit, stopWhen: condition)
    }

    /// Carries out a node's actions on the network.
    func execute(_ name: String, _ actions: [NodeAction]) { network.perform(actions, on: name) }

    private func record(_ action: NodeAction, of name: String, at time: Int64) {
        switch action {
        case .connect(let peer, let address):
            dials.append(Dial(time: time, node: name, peer: peer, address: address))
        case .send(let connection, let bytes):
            guard let to = network.remote(of: connection) else { return }
            var decoder = FrameDecoder()
            guard let frames = try? decoder.feed(bytes) else {
                undecodable.append("\(name) sent bytes that do not frame")
                return
            }
            for frame in frames {
                if let message = try? Message.decode(type: frame.type, payload: frame.payload) {
                    wire.append(WireRecord(time: time, from: name, to: to, message: message))
                } else {
                    undecodable.append("\(name) sent an undecodable frame")
                }
            }
        case .close:
            break
        case .event(let event):
            logs.append((time, name, "\(event)"))
            nodeEvents.append((time, name, event))
        case .sessionEvent(let connection, let event):
            events.append((time, name, connection, event))
        case .replicaChanged:
            replicaChangedNotices.append((time, name))
        }
    }

    // MARK: What happened

    /// BATCH frames `from` → `to`, optionally only those sent at or after `since`.
    func batches(from: String, to: String, since: Int64 = .min) -> [(time: Int64, batch: Batch)] {
        wire.compactMap { record in
            guard record.from == from, record.to == to, record.time >= since, case .batch(let batch) = record.message else { return nil }
            return (record.time, batch)
        }
    }

    /// Changes carried in BATCH frames `from` → `to`, as (entry id, origin, sequence) keys.
    func sentChanges(from: String, to: String, since: Int64 = .min) -> [String] {
        batches(from: from, to: to, since: since).flatMap { $0.batch.changes.map(Self.key) }
    }

    static func key(_ change: Change) -> String { "\(change.id)@\(change.stamp.origin):\(change.stamp.sequence)" }

    func sessionEvents(_ name: String, since: Int64 = .min) -> [SessionEvent] {
        events.filter { $0.node == name && $0.time >= since }.map(\.event)
    }

    func sentEventCount(_ name: String, since: Int64 = .min) -> Int {
        sessionEvents(name, since: since).filter { if case .sent = $0 { return true }; return false }.count
    }

    func dials(of name: String, since: Int64 = .min) -> [Dial] {
        dials.filter { $0.node == name && $0.time >= since }
    }

    func converged(_ names: [String]) -> Bool {
        let hashes = names.compactMap { try? nodes[$0]!.replica.canonicalHash() }
        return hashes.count == names.count && Set(hashes).count == 1
    }
}

func count(_ replica: Replica) -> Int { (try? replica.liveEntryCount()) ?? -1 }
