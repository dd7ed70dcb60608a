import Foundation
import LifeSync
import Testing
import TestSupport

// MARK: - A tiny virtual-time event loop for NodeCore

/// Drives several `NodeCore`s on virtual time with in-memory links: `.send` bytes reach the other
/// end after `latency`, `.connect` becomes `connected`/`accepted` (or `connectFailed` when the
/// target is stopped or unreachable) after `connectLatency`, `.close` ends both sides. Nodes are
/// ticked exactly at their `nextDeadline`. Everything on the wire is decoded and kept so tests can
/// count BATCH frames, changes and dials; "two dials at once" is checked on every dial.
final class VirtualNet {
    final class Node {
        let name: String
        var replica: Replica
        let configuration: NodeConfiguration
        let random: SeededRandom
        var core: NodeCore
        var running = false
        var reachable = true

        init(name: String, replica: Replica, configuration: NodeConfiguration, seed: UInt64, now: Int64) {
            self.name = name
            self.replica = replica
            self.configuration = configuration
            random = SeededRandom(seed: seed)
            core = NodeCore(replica: replica, configuration: configuration, random: random, now: now)
        }
    }

    struct Endpoint {
        var other: String
        var otherConnection: Int
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
    private(set) var now: Int64 = 0
    var latency: Int64 = 10
    var connectLatency: Int64 = 5
    private(set) var nodes: [String: Node] = [:]
    private var queue: [(time: Int64, order: Int, run: () -> Void)] = []
    private var order = 0
    private var nextConnection = 1
    /// node → its connection → the other end.
    private var endpoints: [String: [Int: Endpoint]] = [:]
    private var dialing: Set<String> = []
    private(set) var wire: [WireRecord] = []
    private(set) var events: [(time: Int64, node: String, connection: Int, event: SessionEvent)] = []
    private(set) var dials: [Dial] = []
    private(set) var connectFailures: [(time: Int64, node: String, peer: Int)] = []
    private(set) var logs: [(time: Int64, node: String, line: String)] = []
    /// The same, typed.
    private(set) var nodeEvents: [(time: Int64, node: String, event: NodeEvent)] = []
    private(set) var violations: [String] = []
    private(set) var steps = 0

    init() {
        clock = ManualClock(milliseconds: ReplicaFixtures.epoch)
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
        endpoints[name] = [:]
        return node
    }

    /// `start` on a node; with `replica`, on that replica (a fresh core, as a restarted process).
    func start(_ name: String, replica: Replica? = nil) {
        let node = nodes[name]!
        if let replica { replace(name, replica: replica) }
        node.running = true
        node.reachable = true
        execute(name, node.core.start(now: now))
    }

    /// Gives a stopped node another replica (and a fresh core), letting go of the old one.
    func replace(_ name: String, replica: Replica) {
        let node = nodes[name]!
        precondition(!node.running)
        node.replica = replica
        node.core = NodeCore(replica: replica, configuration: node.configuration, random: node.random, now: now)
    }

    /// The process dies: its links drop (the peers notice after `latency`), nothing is delivered
    /// to it, dials to it fail. `start` brings it back with a fresh core. With `keepSentBytes`,
    /// what it had already sent still arrives before the peers see the close (as over TCP).
    func crash(_ name: String, keepSentBytes: Bool = false) {
        let node = nodes[name]!
        node.running = false
        node.reachable = false
        if keepSentBytes {
            for (connection, endpoint) in (endpoints[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                endpoints[name]![connection] = nil
                schedule(at: now + latency) { [unowned self] in
                    guard endpoints[endpoint.other]?[endpoint.otherConnection] != nil else { return }
                    endpoints[endpoint.other]![endpoint.otherConnection] = nil
                    let other = nodes[endpoint.other]!
                    if other.running { execute(endpoint.other, other.core.closed(connection: endpoint.otherConnection, now: now)) }
                }
            }
        } else {
            cutLinks(of: name, notifySelf: false)
        }
        node.core = NodeCore(replica: node.replica, configuration: node.configuration, random: node.random, now: now)
    }

    /// Cuts every link of `name` abruptly (both ends see `closed`); the node keeps running.
    func cutLinks(of name: String, notifySelf: Bool = true) {
        for (connection, endpoint) in (endpoints[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
            endpoints[name]![connection] = nil
            endpoints[endpoint.other]![endpoint.otherConnection] = nil
            if notifySelf {
                schedule(at: now) { [unowned self] in
                    if nodes[name]!.running { execute(name, nodes[name]!.core.closed(connection: connection, now: now)) }
                }
            }
            schedule(at: now + latency) { [unowned self] in
                let other = nodes[endpoint.other]!
                if other.running { execute(endpoint.other, other.core.closed(connection: endpoint.otherConnection, now: now)) }
            }
        }
    }

    func setReachable(_ name: String, _ reachable: Bool) { nodes[name]!.reachable = reachable }

    func connectionCount(_ name: String) -> Int { endpoints[name]?.count ?? 0 }

    // MARK: Writes

    /// Adds `count` entries on `name` through its own replica and tells its core.
    @discardableResult
    func write(_ name: String, count: Int = 1, label: String = "note") throws -> [String] {
        let node = nodes[name]!
        var ids: [String] = []
        for i in 0..<count {
            ids.append(try node.replica.add(json: ReplicaFixtures.entryJSON(text: "\(label) \(name) \(i) @\(now)")).id)
        }
        if node.running { execute(name, node.core.localWrite(now: now)) }
        return ids
    }

    // MARK: Running

    /// Runs until virtual time `end`.
    func run(until end: Int64) {
        while step(until: end) {}
        advance(to: max(now, end))
    }

    func run(for duration: Int64) { run(until: now + duration) }

    /// Runs until `condition` holds (checked after every step) or `limit` ms pass. True if it held.
    @discardableResult
    func run(upTo limit: Int64, until condition: () throws -> Bool) rethrows -> Bool {
        let end = now + limit
        if try condition() { return true }
        while step(until: end) {
            if try condition() { return true }
        }
        advance(to: max(now, end))
        return try condition()
    }

    /// One event or one round of ticks at or before `end`. False when nothing is due by then.
    private func step(until end: Int64) -> Bool {
        steps += 1
        guard steps < 3_000_000 else {
            if violations.last != "the virtual network did not settle" { violations.append("the virtual network did not settle") }
            return false
        }
        let nextEvent = queue.min { ($0.time, $0.order) < ($1.time, $1.order) }
        let running = nodes.values.filter(\.running).sorted { $0.name < $1.name }
        let nextTick = running.compactMap { $0.core.nextDeadline }.min()
        let t = min(nextEvent?.time ?? .max, nextTick ?? .max)
        guard t <= end else { return false }
        advance(to: max(now, t))
        if let event = nextEvent, event.time <= now {
            queue.removeAll { $0.order == event.order }
            event.run()
            return true
        }
        for node in running where node.running {
            if let deadline = node.core.nextDeadline, deadline <= now {
                execute(node.name, node.core.tick(now: now))
            }
        }
        return true
    }

    private func advance(to time: Int64) {
        now = time
        clock.milliseconds = ReplicaFixtures.epoch + time
    }

    private func schedule(at time: Int64, _ run: @escaping () -> Void) {
        order += 1
        queue.append((time, order, run))
    }

    /// Carries out a node's actions the way a driver would.
    func execute(_ name: String, _ actions: [NodeAction]) {
        for action in actions {
            switch action {
            case .connect(let peer, let address):
                let key = "\(name)#\(peer)"
                if dialing.contains(key) { violations.append("t=\(now): \(name) dialled peer \(peer) (\(address)) while a dial was in progress") }
                dialing.insert(key)
                dials.append(Dial(time: now, node: name, peer: peer, address: address))
                schedule(at: now + connectLatency) { [unowned self] in
                    dialing.remove(key)
                    guard let node = nodes[name], node.running else { return }
                    if let target = nodes[address], target.running, target.reachable, node.reachable {
                        let mine = nextConnection, theirs = nextConnection + 1
                        nextConnection += 2
                        endpoints[name]![mine] = Endpoint(other: address, otherConnection: theirs)
                        endpoints[address]![theirs] = Endpoint(other: name, otherConnection: mine)
                        execute(name, node.core.connected(connection: mine, peer: peer, now: now))
                        execute(address, target.core.accepted(connection: theirs, remote: name, now: now))
                    } else {
                        connectFailures.append((now, name, peer))
                        execute(name, node.core.connectFailed(peer: peer, reason: "connection refused", now: now))
                    }
                }
            case .send(let connection, let bytes):
                guard let endpoint = endpoints[name]?[connection] else { continue }
                var decoder = FrameDecoder()
                if let frames = try? decoder.feed(bytes) {
                    for frame in frames {
                        if let message = try? Message.decode(type: frame.type, payload: frame.payload) {
                            wire.append(WireRecord(time: now, from: name, to: endpoint.other, message: message))
                        } else {
                            violations.append("\(name) sent an undecodable frame")
                        }
                    }
                }
                schedule(at: now + latency) { [unowned self] in
                    guard let target = nodes[endpoint.other], target.running,
                          endpoints[endpoint.other]?[endpoint.otherConnection] != nil else { return }
                    execute(endpoint.other, target.core.received(connection: endpoint.otherConnection, bytes: bytes, now: now))
                }
            case .close(let connection):
                guard let endpoint = endpoints[name]?[connection] else { continue }
                endpoints[name]![connection] = nil
                schedule(at: now) { [unowned self] in
                    if nodes[name]!.running { execute(name, nodes[name]!.core.closed(connection: connection, now: now)) }
                }
                // The peer sees the close after what was sent before it.
                schedule(at: now + latency) { [unowned self] in
                    guard endpoints[endpoint.other]?[endpoint.otherConnection] != nil else { return }
                    endpoints[endpoint.other]![endpoint.otherConnection] = nil
                    let other = nodes[endpoint.other]!
                    if other.running { execute(endpoint.other, other.core.closed(connection: endpoint.otherConnection, now: now)) }
                }
            case .event(let event):
                logs.append((now, name, "\(event)"))
                nodeEvents.append((now, name, event))
            case .sessionEvent(let connection, let event):
                events.append((now, name, connection, event))
            }
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
