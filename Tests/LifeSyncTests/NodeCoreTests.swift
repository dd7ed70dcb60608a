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
private final class VirtualNet {
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
            case .log(let line):
                logs.append((now, name, line))
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

private func count(_ replica: Replica) -> Int { (try? replica.liveEntryCount()) ?? -1 }

// MARK: - Tests

@Suite struct NodeCoreTests {
    // MARK: Start and dialling

    @Test func startDialsEveryConfiguredPeerOnceAndThreeNodesConverge() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 11)
        let mac = try net.memoryReplica(.mac, seed: 12)
        let mac2 = try net.memoryReplica(.mac, seed: 13)
        for i in 0..<5 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<7 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        for i in 0..<3 { try mac2.add(json: ReplicaFixtures.entryJSON(text: "mac2 \(i)")) }
        net.add("mac", replica: mac, seed: 2)
        net.add("mac2", replica: mac2, seed: 3)
        net.add("phone", replica: phone, peers: ["mac", "mac2"], seed: 1)
        net.start("mac")
        net.start("mac2")
        #expect(net.dials.isEmpty, "nodes without peers dial nobody")

        net.start("phone")
        #expect(net.dials.map(\.address) == ["mac", "mac2"], "start dials each configured peer exactly once")
        #expect(net.dials.map(\.peer) == [0, 1])
        #expect(net.dials.allSatisfy { $0.time == 0 })

        // Nothing else is dialled while those dials are open and after they succeed.
        net.run(for: 60_000)
        #expect(net.dials.count == 2, "no redial of connected peers: \(net.dials.map { ($0.time, $0.address) })")
        #expect(net.connectionCount("phone") == 2)
        #expect(net.violations.isEmpty, "\(net.violations)")
        // The phone relays between the two macs: all three hold the same 15 entries.
        #expect(count(phone) == 15 && count(mac) == 15 && count(mac2) == 15)
        #expect(net.converged(["phone", "mac", "mac2"]))
        #expect(net.nodes["phone"]!.core.peerStatuses.map(\.state) == [.synced, .synced])
    }

    @Test func failedDialsBackOffExponentiallyWithJitterUpToTheCap() throws {
        let net = VirtualNet()
        net.connectLatency = 300  // a refused connect takes a while to report: no second dial in between
        let phone = try net.memoryReplica(.phone, seed: 21)
        let mac = try net.memoryReplica(.mac, seed: 22)
        net.add("mac", replica: mac, seed: 2)  // never started: every dial fails
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("phone")
        net.run(for: 240_000)

        let dials = net.dials(of: "phone")
        let failures = net.connectFailures.filter { $0.node == "phone" }
        #expect(dials.count >= 10, "only \(dials.count) dials in 4 minutes")
        #expect(failures.count >= dials.count - 1)
        #expect(net.violations.isEmpty, "\(net.violations)")
        let base: Int64 = 500, cap: Int64 = 30_000
        var ratios: [Double] = []
        var delays: [Int64] = []
        for k in 0..<min(failures.count, dials.count - 1) {
            let delay = dials[k + 1].time - failures[k].time
            let raw = min(cap, base << Int64(k))
            delays.append(delay)
            ratios.append(Double(delay) / Double(raw))
            #expect(delay >= Int64(Double(raw) * 0.8) - 1 && delay <= Int64(Double(raw) * 1.2) + 1,
                    "retry \(k + 1) came \(delay) ms after the failure; expected \(raw) ms ± 20 %")
        }
        // Roughly doubling until the cap…
        for k in 0..<5 where k + 1 < delays.count {
            let growth = Double(delays[k + 1]) / Double(delays[k])
            #expect(growth > 1.3 && growth < 3.05, "delay \(k + 1)→\(k + 2) grew by \(growth)")
        }
        // …then held at the cap.
        let capped = delays.dropFirst(7)
        #expect(capped.count >= 3)
        #expect(capped.allSatisfy { $0 >= 24_000 && $0 <= 36_000 }, "capped delays: \(Array(capped))")
        #expect(delays.allSatisfy { $0 <= 36_000 })
        // The jitter is real: not every delay is exactly the nominal one.
        #expect(Set(ratios.map { ($0 * 1000).rounded() }).count > 3, "ratios \(ratios)")
        #expect(net.nodes["phone"]!.core.fallbackAt == nil, "nothing pending: no fallback timer")

        // The peer comes back: the next retry connects, and a later drop starts again at the base delay.
        net.start("mac")
        let up = net.now
        #expect(net.run(upTo: 40_000) { net.connectionCount("phone") == 1 })
        #expect(net.now - up <= 36_400)
        net.run(for: 1_000)
        net.cutLinks(of: "mac")
        let cutAt = net.now
        net.run(for: 5_000)
        let after = net.dials(of: "phone", since: cutAt)
        #expect(after.count == 1, "one redial after the drop, got \(after.map(\.time))")
        if let first = after.first {
            #expect(first.time - cutAt >= 400 && first.time - cutAt <= 620, "redial after \(first.time - cutAt) ms; expected ~500 ms (failures reset by the handshake)")
        }
        #expect(net.connectionCount("phone") == 1)
    }

    @Test func neverTwoDialsAtOnceEvenWhenTheFallbackFiresDuringADial() throws {
        let net = VirtualNet()
        net.connectLatency = 5_000  // each dial hangs 5 s before failing
        let phone = try net.memoryReplica(.phone, seed: 31)
        net.add("mac", replica: try net.memoryReplica(.mac, seed: 32), seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) {
            $0.fallbackInterval = 2_000
            $0.reconnectBase = 100
            $0.reconnectMaximum = 400
        }
        net.start("phone")
        try net.write("phone", count: 2)
        net.run(for: 60_000)
        #expect(net.violations.isEmpty, "\(net.violations)")
        let dials = net.dials(of: "phone")
        #expect(dials.count >= 10)
        // Each dial waits for the previous one to report.
        for (dial, next) in zip(dials, dials.dropFirst()) {
            #expect(next.time - dial.time >= 5_000, "dial at \(next.time) while the one at \(dial.time) was open")
        }
    }

    // MARK: Local writes: debounce

    @Test func writesWithinTheDebounceWindowArePushedOnceAfterTheDebounce() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 41)
        let mac = try net.memoryReplica(.mac, seed: 42)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        net.run(for: 2_000)
        #expect(net.connectionCount("phone") == 1)
        #expect(net.batches(from: "phone", to: "mac").isEmpty)

        // Five writes 100 ms apart: one push, 500 ms after the first.
        let t0 = net.now
        for i in 0..<5 {
            try net.write("phone", label: "burst \(i)")
            net.run(for: 100)
        }
        net.run(until: t0 + 3_000)
        let pushes = net.batches(from: "phone", to: "mac", since: t0)
        #expect(pushes.count == 1, "expected one BATCH, got \(pushes.map { ($0.time, $0.batch.changes.count) })")
        #expect(pushes.first?.batch.changes.count == 5)
        if let push = pushes.first {
            #expect(push.time >= t0 + 500 && push.time <= t0 + 520, "pushed at +\(push.time - t0) ms, expected +500 ms")
        }
        #expect(net.sentEventCount("phone", since: t0) == 1)
        #expect(count(mac) == 5)

        // A second burst: again one push.
        let t1 = net.now
        try net.write("phone", count: 3, label: "second")
        net.run(for: 200)
        try net.write("phone", count: 2, label: "second b")
        net.run(for: 2_000)
        let second = net.batches(from: "phone", to: "mac", since: t1)
        #expect(second.map(\.batch.changes.count) == [5], "\(second.map { ($0.time - t1, $0.batch.changes.count) })")
        #expect(second.first.map { $0.time - t1 } == 500)

        // Writes further apart than the debounce are pushed one by one (the window does not slide forever).
        let t2 = net.now
        for _ in 0..<3 {
            try net.write("phone", label: "spaced")
            net.run(for: 1_000)
        }
        net.run(for: 1_000)
        #expect(net.batches(from: "phone", to: "mac", since: t2).map(\.batch.changes.count) == [1, 1, 1])
        #expect(count(mac) == 13)
        #expect(net.batches(from: "mac", to: "phone").allSatisfy { $0.batch.changes.isEmpty }, "nothing echoed back")
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    // MARK: Fallback timer

    @Test func theFallbackTimerRunsOnlyWhileSomethingIsPending() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 51)
        let mac = try net.memoryReplica(.mac, seed: 52)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) { $0.reconnectMaximum = 2_000 }
        let core = { net.nodes["phone"]!.core }
        net.start("phone")
        net.run(for: 5_000)
        #expect(core().fallbackAt == nil, "nothing pending: the timer is off")

        let written = net.now
        try net.write("phone", count: 3)
        net.run(for: 1_000)
        let armed = try #require(core().fallbackAt, "three writes the peer lacks: the timer runs")
        #expect(armed >= written + 300_000 && armed <= written + 301_000)
        #expect(core().pendingCount == 3)
        net.run(for: 10_000)
        #expect(core().fallbackAt == armed, "the timer is not pushed back while it runs")

        // The peer comes up; once it acknowledged everything the timer stops.
        net.start("mac")
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        net.run(for: 1_000)
        #expect(core().pendingCount == 0)
        #expect(core().fallbackAt == nil, "everything acknowledged: the timer stops")
        // And stays off while nothing is pending, well past the old deadline.
        net.run(until: armed + 60_000)
        #expect(core().fallbackAt == nil)
        #expect(!net.logs.contains { $0.node == "phone" && $0.line.contains("fallback") })

        // The peer leaves again and something new is written: the timer is back.
        net.crash("mac")
        net.run(for: 1_000)
        #expect(core().fallbackAt == nil, "the peer left but it has everything")
        let again = net.now
        try net.write("phone")
        net.run(for: 1_000)
        let rearmed = try #require(core().fallbackAt)
        #expect(rearmed >= again + 300_000 && rearmed <= again + 301_000)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func whenTheFallbackFiresWithThePeerDownItDialsAgain() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 61)
        let mac = try net.memoryReplica(.mac, seed: 62)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) {
            // The backoff alone would not retry for 20 minutes or more.
            $0.reconnectBase = 1_500_000
            $0.reconnectMaximum = 3_600_000
        }
        let core = { net.nodes["phone"]!.core }
        net.start("phone")
        net.run(for: 1_000)
        #expect(net.dials(of: "phone").count == 1)
        try net.write("phone", count: 2)
        net.run(for: 1_000)
        let fallback = try #require(core().fallbackAt)

        net.run(until: fallback - 1)
        #expect(net.dials(of: "phone").count == 1, "nothing dials before the fallback")
        net.run(until: fallback + 1_000)
        let retries = net.dials(of: "phone", since: fallback - 1)
        #expect(retries.map(\.time) == [fallback], "the fallback timer dials the absent peer")
        #expect(net.logs.contains { $0.node == "phone" && $0.line.contains("fallback") })
        let next = try #require(core().fallbackAt, "still pending: the timer is re-armed")
        #expect(next >= fallback + 300_000 && next <= fallback + 301_000)

        // The peer is back before the next fallback: that one connects and delivers.
        net.start("mac")
        net.run(until: next - 1)
        #expect(count(mac) == 0, "nothing dials between fallbacks (the backoff is 20+ minutes)")
        #expect(net.run(upTo: 2_000) { count(mac) == 2 })
        #expect(net.dials(of: "phone").map(\.time) == [0, fallback, next])
        net.run(for: 1_000)
        #expect(core().fallbackAt == nil)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func aWatchPeerThatReceivesNoEntriesLeavesNothingPending() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 151)
        let watch = try net.memoryReplica(.watch, seed: 152)
        for i in 0..<5 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<2 { try watch.add(json: ReplicaFixtures.entryJSON(text: "watch \(i)", category: "mood")) }
        net.add("watch", replica: watch, seed: 2)
        net.add("phone", replica: phone, peers: ["watch"], seed: 1) { $0.reconnectMaximum = 2_000 }
        let core = { net.nodes["phone"]!.core }
        net.start("watch")
        net.start("phone")
        #expect(net.run(upTo: 5_000) { count(phone) == 7 })
        net.run(for: 2_000)
        #expect(count(watch) == 2, "a watch receives no entries by default")
        #expect(core().pendingCount == 0)
        #expect(core().fallbackAt == nil)

        // The watch goes away; the phone's entries are still nothing the watch would take.
        net.crash("watch")
        net.run(for: 2_000)
        #expect(core().pendingCount == 0, "the phone counts \(core().pendingCount) change(s) pending for a watch that receives none")
        #expect(core().fallbackAt == nil, "fallback timer armed for a watch that receives no entries")
        try net.write("phone", count: 2)
        net.run(for: 2_000)
        #expect(core().pendingCount == 0)
        #expect(core().fallbackAt == nil)
    }

    // MARK: Writes by other processes

    @Test func writesThroughAnotherConnectionArePickedUpByDataVersionPolling() throws {
        let directory = TemporaryDirectory("lifesync-nodecore")
        let net = VirtualNet()
        let path = directory.file("phone.sqlite")
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 71, clock: net.clock, path: path)
        let mac = try net.memoryReplica(.mac, seed: 72)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        net.run(for: 2_000)
        #expect(net.connectionCount("phone") == 1)

        // Another process (here: another connection) writes; nobody calls localWrite.
        let other = try Replica(path: path, clock: net.clock, random: SeededRandom(seed: 700))
        #expect(other.identity == phone.identity)
        let t0 = net.now
        var ids: [String] = []
        for i in 0..<3 { ids.append(try other.add(json: ReplicaFixtures.entryJSON(text: "from the CLI \(i)")).id) }
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        let delay = net.now - t0
        #expect(delay <= 250 + 500 + 2 * net.latency + 10, "noticed after \(delay) ms (poll 250 + debounce 500)")
        let pushes = net.batches(from: "phone", to: "mac", since: t0)
        #expect(pushes.count == 1)
        #expect(Set(pushes.flatMap { $0.batch.changes.map(\.id) }) == Set(ids))
        for id in ids { #expect(try mac.entry(id: id).data.text?.hasPrefix("from the CLI") == true) }

        // Idle again: no more pushes without writes.
        let t1 = net.now
        net.run(for: 10_000)
        #expect(net.batches(from: "phone", to: "mac", since: t1).isEmpty)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    // MARK: In flight

    @Test func noBatchIsSentTwiceWhileInFlight() throws {
        let net = VirtualNet()
        net.latency = 40
        let phone = try net.memoryReplica(.phone, seed: 81)
        let mac = try net.memoryReplica(.mac, seed: 82)
        for i in 0..<300 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<50 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        let small: (inout NodeConfiguration) -> Void = {
            $0.session.window = 2
            $0.session.batchMaximumChanges = 10
            $0.debounce = 30
        }
        net.add("mac", replica: mac, seed: 2, configure: small)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1, configure: small)
        net.start("mac")
        net.start("phone")
        // Local writes keep coming while batches are in flight: each one triggers a push.
        var written = 0
        for _ in 0..<40 {
            net.run(for: 37)
            try net.write("phone", count: 2, label: "during")
            try net.write("mac", label: "during")
            written += 1
        }
        #expect(net.run(upTo: 60_000) { count(mac) == 470 && count(phone) == 470 })
        net.run(for: 2_000)
        #expect(net.converged(["phone", "mac"]))

        for (from, to, total) in [("phone", "mac", 380), ("mac", "phone", 90)] {
            let keys = net.sentChanges(from: from, to: to)
            let repeated = Dictionary(grouping: keys, by: { $0 }).filter { $0.value.count > 1 }.keys
            #expect(repeated.isEmpty, "\(from)→\(to): \(repeated.count) change(s) sent twice, e.g. \(repeated.prefix(2))")
            #expect(Set(keys).count == total, "\(from)→\(to): \(Set(keys).count) distinct changes, expected \(total)")
        }
        // The window is respected: never more than 2 batches unacknowledged.
        for name in ["phone", "mac"] {
            var open = 0, most = 0
            for event in net.sessionEvents(name) {
                if case .sent = event { open += 1; most = max(most, open) }
                if case .acknowledged = event { open -= 1 }
            }
            #expect(most <= 2, "\(name) had \(most) batches in flight")
        }
        #expect(written == 40)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func theFallbackTimerFiringMidTransferDoesNotResendWhatIsInFlight() throws {
        let net = VirtualNet()
        net.latency = 100
        let phone = try net.memoryReplica(.phone, seed: 91)
        let mac = try net.memoryReplica(.mac, seed: 92)
        for i in 0..<200 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<200 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        let slow: (inout NodeConfiguration) -> Void = {
            $0.session.window = 1
            $0.session.batchMaximumChanges = 10
            $0.fallbackInterval = 1_000  // fires several times during the ~4 s transfer
        }
        net.add("mac", replica: mac, seed: 2, configure: slow)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1, configure: slow)
        net.start("mac")
        net.start("phone")
        #expect(net.run(upTo: 60_000) { count(mac) == 400 && count(phone) == 400 })
        net.run(for: 3_000)
        #expect(net.converged(["phone", "mac"]))
        let fired = net.logs.filter { $0.line.contains("fallback timer") }.count
        #expect(fired >= 2, "the scenario needs the fallback to fire mid-transfer (fired \(fired)×)")
        for (from, to) in [("phone", "mac"), ("mac", "phone")] {
            let keys = net.sentChanges(from: from, to: to)
            #expect(keys.count == 200, "\(from)→\(to): \(keys.count) changes sent for 200 distinct (\(keys.count - Set(keys).count) resent while in flight)")
        }
    }

    // MARK: Reconnection

    @Test func afterReconnectingThePeerIsSentNothingItAlreadyHas() throws {
        let net = VirtualNet()
        net.latency = 30
        let phone = try net.memoryReplica(.phone, seed: 101)
        let mac = try net.memoryReplica(.mac, seed: 102)
        for i in 0..<60 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<20 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        #expect(net.run(upTo: 10_000) { net.converged(["phone", "mac"]) && count(mac) == 80 })
        net.run(for: 1_000)

        // A clean drop, then reconnection: both sides already hold everything.
        net.cutLinks(of: "phone")
        let cut = net.now
        #expect(net.run(upTo: 5_000) { net.connectionCount("phone") == 1 && net.sessionEvents("phone", since: cut).contains(.sentAll) })
        net.run(for: 2_000)
        #expect(net.dials(of: "phone", since: cut).count == 1)
        #expect(net.sentChanges(from: "phone", to: "mac", since: cut).isEmpty, "re-sent what the mac had")
        #expect(net.sentChanges(from: "mac", to: "phone", since: cut).isEmpty, "re-sent what the phone had")

        // Writes while apart: exactly those travel after the reconnection.
        net.cutLinks(of: "phone")
        net.setReachable("mac", false)
        let apart = net.now
        let newPhone = try net.write("phone", count: 4, label: "apart")
        let newMac = try net.write("mac", count: 2, label: "apart")
        net.run(for: 3_000)
        net.setReachable("mac", true)
        #expect(net.run(upTo: 40_000) { count(mac) == 86 && count(phone) == 86 })
        net.run(for: 2_000)
        #expect(Set(net.sentChanges(from: "phone", to: "mac", since: apart).map { String($0.prefix { $0 != "@" }) }) == Set(newPhone))
        #expect(net.sentChanges(from: "phone", to: "mac", since: apart).count == 4)
        #expect(Set(net.sentChanges(from: "mac", to: "phone", since: apart).map { String($0.prefix { $0 != "@" }) }) == Set(newMac))
        #expect(net.sentChanges(from: "mac", to: "phone", since: apart).count == 2)
        #expect(net.converged(["phone", "mac"]))
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func aTransferCutMidwayResumesWithoutResendingWhatArrived() throws {
        let net = VirtualNet()
        net.latency = 50
        let phone = try net.memoryReplica(.phone, seed: 111)
        let mac = try net.memoryReplica(.mac, seed: 112)
        for i in 0..<300 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        let small: (inout NodeConfiguration) -> Void = {
            $0.session.window = 3
            $0.session.batchMaximumChanges = 10
        }
        net.add("mac", replica: mac, seed: 2, configure: small)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1, configure: small)
        net.start("mac")
        net.start("phone")
        #expect(net.run(upTo: 20_000) { count(mac) >= 120 })
        // Cut with batches (and their ACKs) on the wire.
        net.cutLinks(of: "mac")
        let cut = net.now
        let held = try mac.replicaVector()
        let heldCount = count(mac)
        #expect(heldCount < 300)
        #expect(net.run(upTo: 30_000) { count(mac) == 300 })
        net.run(for: 1_000)
        let incarnation = phone.identity.incarnation
        let after = net.batches(from: "phone", to: "mac", since: cut).flatMap(\.batch.changes)
        #expect(after.allSatisfy { $0.stamp.sequence > held[incarnation] }, "re-sent changes the mac had committed")
        #expect(after.count == 300 - heldCount, "sent \(after.count) after the cut; the mac lacked \(300 - heldCount)")
        #expect(net.converged(["phone", "mac"]))
        // Before the cut no change went twice either.
        let before = net.batches(from: "phone", to: "mac").filter { $0.time < cut }.flatMap { $0.batch.changes.map(VirtualNet.key) }
        #expect(Set(before).count == before.count)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func mutualDiallersReconnectAfterACutAndSettleOnOneConnectionAgain() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 161)
        let mac = try net.memoryReplica(.mac, seed: 162)
        net.add("mac", replica: mac, peers: ["phone"], seed: 2) { $0.reconnectMaximum = 2_000 }
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) { $0.reconnectMaximum = 2_000 }
        net.start("mac")
        net.start("phone")
        net.run(for: 10_000)
        #expect(net.connectionCount("phone") == 1)

        // A network cut: both see the link drop; writes happen on both sides meanwhile.
        net.setReachable("mac", false)
        net.setReachable("phone", false)
        net.cutLinks(of: "phone")
        let cut = net.now
        let fromPhone = try net.write("phone", count: 2, label: "cut")
        let fromMac = try net.write("mac", count: 3, label: "cut")
        net.run(for: 5_000)
        #expect(net.dials.filter { $0.time > cut }.count >= 2, "both sides try to reconnect")
        net.setReachable("mac", true)
        net.setReachable("phone", true)
        #expect(net.run(upTo: 10_000) { count(phone) == 5 && count(mac) == 5 })
        for id in fromPhone { #expect((try? mac.entry(id: id)) != nil) }
        for id in fromMac { #expect((try? phone.entry(id: id)) != nil) }
        net.run(for: 5_000)
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1)
        let settled = net.now
        net.run(for: 120_000)
        #expect(net.dials.filter { $0.time >= settled }.isEmpty, "redials after settling: \(net.dials.filter { $0.time >= settled }.map(\.time))")
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1)

        // The node holding the kept connection crashes: the other one dials it again when it returns.
        net.crash("mac")
        let crashed = net.now
        net.run(for: 3_000)
        try net.write("phone", label: "while mac is down")
        net.start("mac")
        #expect(net.run(upTo: 10_000) { count(mac) == 6 })
        net.run(for: 5_000)
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1)
        #expect(net.dials(of: "phone", since: crashed).count >= 1)
        #expect(net.converged(["phone", "mac"]))
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func aSenderRestartedMidTransferIsNotAnsweredWithAStaleVector() throws {
        // The watch dies with a batch on the wire and comes straight back. The phone greets the
        // new connection at once, then the dead connection's last batch lands: the vector in that
        // greeting is stale, and the new session must not make the phone take that batch again.
        let net = VirtualNet()
        net.latency = 50
        let watch = try net.memoryReplica(.watch, seed: 171)
        let phone = try net.memoryReplica(.phone, seed: 172)
        for i in 0..<200 { try watch.add(json: ReplicaFixtures.entryJSON(text: "watch \(i)", category: "mood")) }
        let small: (inout NodeConfiguration) -> Void = {
            $0.session.window = 2
            $0.session.batchMaximumChanges = 20
        }
        net.add("phone", replica: phone, seed: 2, configure: small)
        net.add("watch", replica: watch, peers: ["phone"], seed: 1, configure: small)
        net.start("phone")
        net.start("watch")
        // Run until the watch has just put a batch on the wire, with some already delivered.
        #expect(net.run(upTo: 20_000) {
            count(phone) >= 60 && net.batches(from: "watch", to: "phone").last?.time == net.now
        })
        let crashed = net.now
        let held = count(phone)
        net.crash("watch", keepSentBytes: true)
        net.start("watch")
        #expect(net.run(upTo: 20_000) { count(phone) == 200 })
        net.run(for: 2_000)
        #expect(net.converged(["watch", "phone"]))
        var received = 0, redundant = 0
        for event in net.sessionEvents("phone", since: crashed) {
            if case .applied(_, let changes, let outcome) = event {
                received += changes
                redundant += changes - outcome.applied
            }
        }
        #expect(held < 200)
        #expect(redundant == 0, "after the restart the phone was sent \(redundant) change(s) it already held (received \(received) for \(200 - held) missing)")
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    // MARK: Incarnations

    @Test func aReplicaRecreatedWithANewIncarnationIsANewHistory() throws {
        let net = VirtualNet()
        let phoneOld = try net.memoryReplica(.phone, seed: 121)
        let mac = try net.memoryReplica(.mac, seed: 122)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phoneOld, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        let old = try net.write("phone", count: 3, label: "old life")
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        net.run(for: 1_000)
        let oldIncarnation = phoneOld.identity.incarnation
        let nodeID = phoneOld.identity.nodeID
        #expect(try mac.replicaVector()[oldIncarnation] == 3)

        // The phone is wiped and set up again: same node ID, a new incarnation, numbering from 1.
        net.crash("phone")
        let fresh = try net.memoryReplica(.phone, seed: 999)
        try fresh.database.run("UPDATE meta SET value = ? WHERE key = 'node_id'", [.text(nodeID)])
        try fresh.database.run("UPDATE replica_vector SET node_id = ? WHERE origin = ?", [.text(nodeID), .text(fresh.identity.incarnation)])
        try fresh.reloadIdentity()
        #expect(fresh.identity.nodeID == nodeID)
        #expect(fresh.identity.incarnation != oldIncarnation)
        var new: [String] = []
        for i in 0..<3 { new.append(try fresh.add(json: ReplicaFixtures.entryJSON(text: "new life \(i)")).id) }
        #expect(try fresh.replicaVector()[fresh.identity.incarnation] == 3, "the new history reuses the numbers 1, 2, 3")

        let restarted = net.now
        net.start("phone", replica: fresh)
        #expect(net.run(upTo: 10_000) { count(mac) == 6 && count(fresh) == 6 })
        net.run(for: 1_000)
        let sent = net.batches(from: "phone", to: "mac", since: restarted).flatMap(\.batch.changes)
        #expect(sent.map(\.stamp.sequence).sorted() == [1, 2, 3])
        let outcomes = net.sessionEvents("mac", since: restarted).compactMap { event -> ApplyOutcome? in
            if case .applied(_, let changes, let outcome) = event, changes > 0 { return outcome }
            return nil
        }
        #expect(outcomes.map(\.applied).reduce(0, +) == 3, "the mac applied the three new writes, not 'unchanged'")
        for id in old + new { #expect((try? mac.entry(id: id)) != nil, "mac lacks \(id)") }
        let vector = try mac.replicaVector()
        #expect(vector[oldIncarnation] == 3)
        #expect(vector[fresh.identity.incarnation] == 3)
        #expect(!net.sessionEvents("phone", since: restarted).contains { if case .incarnationRotated = $0 { return true }; return false })
        #expect(net.converged(["phone", "mac"]))
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func aReplicaRestoredFromAnOlderCopyRotatesItsIncarnation() throws {
        let directory = TemporaryDirectory("lifesync-nodecore-rollback")
        let net = VirtualNet()
        let path = directory.file("phone.sqlite"), backup = directory.file("phone-backup.sqlite")
        var phone: Replica? = try ReplicaFixtures.replica(role: .phone, seed: 131, clock: net.clock, path: path)
        let mac = try net.memoryReplica(.mac, seed: 132)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone!, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        let first = try net.write("phone", count: 3, label: "before backup")
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        let incarnation = phone!.identity.incarnation

        // Copy the file (everything checkpointed into it), then write more that the mac receives.
        try phone!.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        let lost = try net.write("phone", count: 2, label: "after backup")
        #expect(net.run(upTo: 5_000) { count(mac) == 5 })
        #expect(try mac.replicaVector()[incarnation] == 5)

        // The phone dies; its file is put back from the copy.
        net.crash("phone")
        net.run(for: 1_000)
        net.replace("phone", replica: try net.memoryReplica(.phone, seed: 1))  // let go of the old connection
        phone = nil
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: backup, toPath: path)
        let restored = try Replica(path: path, clock: net.clock, random: SeededRandom(seed: 1313))
        #expect(restored.identity.incarnation == incarnation)
        #expect(try restored.replicaVector()[incarnation] == 3)
        #expect(count(restored) == 3)

        let restart = net.now
        net.start("phone", replica: restored)
        #expect(net.run(upTo: 5_000) { net.sessionEvents("phone", since: restart).contains { if case .handshake = $0 { return true }; return false } })
        let rotations = net.sessionEvents("phone", since: restart).compactMap { event -> (String, String)? in
            if case .incarnationRotated(let old, let new) = event { return (old, new) }
            return nil
        }
        #expect(rotations.count == 1, "expected one .incarnationRotated, got \(rotations)")
        let newIncarnation = restored.identity.incarnation
        #expect(newIncarnation != incarnation)
        #expect(rotations.first?.0 == incarnation && rotations.first?.1 == newIncarnation)
        #expect(net.logs.contains { $0.node == "phone" && $0.line.contains("restored from an older copy") })
        // Its own old writes come back from the mac.
        #expect(net.run(upTo: 5_000) { count(restored) == 5 })
        for id in first + lost { #expect((try? restored.entry(id: id)) != nil) }

        // New writes go under the new incarnation, numbered from 1, and reach the mac.
        let later = try net.write("phone", count: 2, label: "after restore")
        #expect(net.run(upTo: 5_000) { count(mac) == 7 })
        for id in later {
            let stamp = try #require(try mac.versionStamp(id: id))
            #expect(stamp.origin == newIncarnation)
        }
        #expect(try mac.replicaVector()[newIncarnation] == 2)
        #expect(try mac.replicaVector()[incarnation] == 5, "the old history is untouched")
        for id in first + lost { #expect(try mac.entry(id: id).data.text?.contains("backup") == true) }
        net.run(for: 1_000)
        #expect(net.converged(["phone", "mac"]))
        // A second reconnection does not rotate again.
        let again = net.now
        net.cutLinks(of: "mac")
        #expect(net.run(upTo: 5_000) { net.sessionEvents("phone", since: again).contains { if case .handshake = $0 { return true }; return false } })
        #expect(!net.sessionEvents("phone", since: again).contains { if case .incarnationRotated = $0 { return true }; return false })
        #expect(restored.identity.incarnation == newIncarnation)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    // MARK: Both sides dial

    @Test func twoNodesDiallingEachOtherKeepOneConnection() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 141)
        let mac = try net.memoryReplica(.mac, seed: 142)
        for i in 0..<10 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<10 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        net.add("mac", replica: mac, peers: ["phone"], seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        #expect(net.run(upTo: 10_000) { count(mac) == 20 && count(phone) == 20 })
        net.run(for: 5_000)
        #expect(net.converged(["phone", "mac"]))
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1, "one of the two connections yields")
        // Each change crossed at most once per connection: an acceptor answers only after the
        // dialler's HELLO, so both connections may carry the first window before one of them
        // yields. The merge makes the repeat harmless; afterwards nothing is sent twice.
        let phoneToMac = net.sentChanges(from: "phone", to: "mac").count, macToPhone = net.sentChanges(from: "mac", to: "phone").count
        #expect((10...20).contains(phoneToMac) && (10...20).contains(macToPhone), "\(phoneToMac), \(macToPhone)")
        // Once one connection is up, neither side keeps dialling a peer it is connected to:
        // every redial would be another HELLO exchange closed as a duplicate.
        let settled = net.now
        net.run(for: 300_000)
        let redials = net.dials.filter { $0.time >= settled }
        #expect(redials.count == 0, "\(redials.count) redial(s) of an already connected peer in 5 minutes, at \(redials.map(\.time))")
        let churn = net.logs.filter { $0.time >= settled && $0.line.contains("already connected") }.count
        #expect(churn == 0, "\(churn) duplicate connection(s) closed after settling")
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }
}
