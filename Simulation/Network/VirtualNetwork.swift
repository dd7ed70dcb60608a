import LifeSync

/// The one network every multi-node run uses: the simulator and the `NodeCore` tests alike.
///
/// Hosts are `NodeCore`s, or raw endpoints such as the hostile node, on virtual time. The network
/// carries out their `NodeAction`s as TCP would: a dial takes time and fails when the target is
/// down or cut off; bytes arrive in order after latency and serialisation; a close arrives after
/// the bytes sent before it. It wakes each core at its deadline. Partitions, resets and wire
/// faults are the network's; what runs on it (writes, crashes, checks) the driver schedules as
/// jobs on the same queue, so one seed orders everything.
///
/// ```swift
/// let network = VirtualNetwork(random: SeededRandom(seed: 7))
/// network.start("phone", key: phoneKey, core: phoneCore)
/// network.start("mac", key: macKey, core: macCore)   // its configuration dials "phone"
/// network.run(until: 10_000)
/// ```
package final class VirtualNetwork {
    package struct Configuration: Sendable {
        /// One-way latency of a connection, drawn when it opens, ms.
        package var latency: ClosedRange<Int64> = 1...80
        /// How long a dial takes to succeed or fail, ms.
        package var dialDelay: ClosedRange<Int64> = 1...20
        /// Bytes per ms a connection carries.
        package var bandwidth: Int64 = 2_000
        /// Bytes sent into a partition are held (TCP retransmitting) at least this long, ms.
        package var partitionHold: Int64 = 120_000
        /// Wire faults: 3 % of larger CHUNK frames get a flipped bit, 2 % of payloads are late as
        /// if retransmitted, and on links between cores `duplicationPerMille` payloads in a
        /// thousand arrive twice and as many are overtaken by the next.
        package var faults = false
        package var duplicationPerMille = 0
        /// One `run` processing more events than this stops and reports that it did not settle.
        package var eventLimit = 5_000_000
        /// Bytes of unfinished frames all of a core's sessions may hold together, held to as the
        /// runtime holds to `NodeServer.Limits.maximumBufferedInput` (`VirtualNetwork+Budget`);
        /// nil: no total bound. And how long a parked frame may stay while the budget is spent, ms.
        package var maximumBufferedInput: Int?
        package var stalledFrameTimeout: Int64 = 10_000

        package init() {}
    }

    enum Event {
        case tick(host: String)
        case dial(host: String, life: Int, peer: Int, address: String)
        case deliver(end: Int, bytes: [UInt8])
        case closeEnd(end: Int)
        /// A payload held back to be overtaken goes out if nothing overtook it.
        case release(connection: Int, direction: Int)
        case job(() -> Void)
    }

    final class Host {
        var core: NodeCore?
        /// The fingerprint of the key this host proves in every handshake (no crypto here: the
        /// network hands it to the other end, as TLS would).
        var key = SHA256.Digest(bytes: [UInt8](repeating: 0, count: 32))
        var endpoint: VirtualEndpoint?
        var scheduledTick: Int64?
        /// Bumped at every crash: a dial the dead process started completes for nobody.
        var life = 0
        /// Peers this host is dialling now (a second dial to one of them is a violation).
        var dialing = Set<Int>()
        /// The core's input budget, and bytes held back from it per end (`VirtualNetwork+Budget`).
        var inputBudget: InputBudget?
        var heldBack: [Int: [[UInt8]]] = [:]
        var budgetRoundDue = false
    }

    package var configuration: Configuration
    let random: SeededRandom
    var queue = EventQueue<Event>()
    package internal(set) var now: Int64 = 0
    var hosts: [String: Host] = [:]
    var connections: [Int: Connection] = [:]
    var nextConnection = 0
    /// Directions whose traffic is held (partitions) and pairs with no link at all.
    var blocked = Set<Direction>()
    var unlinked = Set<Pair>()
    /// Faults injected so far, by kind (the driver counts its own here too).
    package internal(set) var faultCounts: [String: Int] = [:]
    /// Dials that failed: when, who, which of its peers.
    package internal(set) var failedDials: [(time: Int64, host: String, peer: Int)] = []
    /// What no core may do: dial a peer twice at once, send on a connection it does not own;
    /// and a run that never settles.
    package internal(set) var violations: [String] = []
    /// Addresses a raw endpoint answers instead of their host (`squat`): address → endpoint.
    var squatters: [String: String] = [:]
    /// Hosts whose every frame, both ways, is recorded (`watch`), and the record.
    var watched = Set<String>()
    var watchDecoders: [Int: FrameDecoder] = [:]
    var watchBroken = Set<Int>()
    package internal(set) var watchedFrames: [WatchedFrame] = []

    /// Sees every action of every core before the network carries it out.
    package var observer: ((_ time: Int64, _ host: String, _ action: NodeAction) -> Void)?
    /// Receives a line (and the bytes delivered, if any) for each thing the network did.
    package var tracer: ((_ time: Int64, _ line: String, _ bytes: [UInt8]?) -> Void)?
    /// Told each time virtual time moves (drivers set their clocks here).
    package var onAdvance: ((Int64) -> Void)?

    package init(configuration: Configuration = Configuration(), random: SeededRandom) {
        self.configuration = configuration
        self.random = random
    }

    // MARK: - Hosts

    /// Brings `name` up with `core` (a fresh process) proving `key`, and carries out its start.
    package func start(_ name: String, key: SHA256.Digest, core: NodeCore) {
        let host = self.host(name)
        precondition(host.core == nil && host.endpoint == nil, "\(name) is already up")
        host.core = core
        host.key = key
        host.scheduledTick = nil
        startBudget(of: host)
        perform(core.start(now: now), on: name)
    }

    /// A raw participant (the hostile node): it opens connections with `connect` and is told of
    /// what arrives. Links with it get no middlebox faults.
    package func attach(_ name: String, endpoint: VirtualEndpoint, key: SHA256.Digest) {
        let host = self.host(name)
        precondition(host.core == nil, "\(name) is a core")
        host.endpoint = endpoint
        host.key = key
    }

    /// The process dies: its core is gone, its dials come to nothing, its connections drop. The
    /// peers notice after the latency; what it had sent is lost with it, or, with
    /// `keepSentBytes`, still arrives first (the kernel's orderly close).
    package func crash(_ name: String, keepSentBytes: Bool = false) {
        guard let host = hosts[name], host.core != nil else { return }
        host.core = nil
        host.scheduledTick = nil
        host.life += 1
        host.dialing.removeAll()
        for id in connections.keys.sorted() {
            guard let connection = connections[id], connection.open, let side = connection.side(of: name) else { continue }
            connection.closed[side] = true
            if keepSentBytes {
                shut(connection, id: id, from: side)
            } else {
                connection.open = false
                queue.push(.closeEnd(end: 2 * id + (1 - side)), at: now + connection.latency)
            }
        }
        assert(openConnections(of: name).isEmpty)
    }

    package func core(of name: String) -> NodeCore? { hosts[name]?.core }
    package func isUp(_ name: String) -> Bool { hosts[name]?.core != nil }

    func host(_ name: String) -> Host {
        if let host = hosts[name] { return host }
        let host = Host()
        hosts[name] = host
        return host
    }

    // MARK: - Running

    /// Runs `job` at virtual time `time` (not before now), in order with everything else due then.
    package func schedule(at time: Int64, _ job: @escaping () -> Void) {
        queue.push(.job(job), at: max(time, now))
    }

    /// Processes what is due by `end`, then moves the clock to `end`.
    package func run(until end: Int64) { run(until: end) { false } }

    /// The same, stopping as soon as `stop` holds (checked before and after every event); the
    /// result is whether it holds.
    @discardableResult
    package func run(until end: Int64, stopWhen stop: () throws -> Bool) rethrows -> Bool {
        if try stop() { return true }
        var processed = 0
        while let time = queue.nextTime, time <= end {
            processed += 1
            guard processed <= configuration.eventLimit else {
                violations.append("t=\(now): the network did not settle (over \(configuration.eventLimit) events in one run)")
                break
            }
            let (at, event) = queue.pop()!
            assert(at >= now, "the queue went back in time")
            advance(to: at)
            handle(event)
            if try stop() { return true }
        }
        advance(to: max(now, end))
        return try stop()
    }

    private func advance(to time: Int64) {
        guard time != now else { return }
        now = time
        onAdvance?(time)
    }

    private func handle(_ event: Event) {
        switch event {
        case .tick(let name):
            guard let host = hosts[name], let core = host.core else { return }
            host.scheduledTick = nil
            perform(core.tick(now: now), on: name)
        case .dial(let name, let life, let peer, let address):
            completeDial(from: name, life: life, peer: peer, to: address)
        case .deliver(let end, let bytes):
            deliver(bytes, to: end)
        case .closeEnd(let end):
            closeEnd(end)
        case .release(let id, let direction):
            release(connection: id, direction: direction)
        case .job(let job):
            job()
        }
    }

    /// Carries out a core's actions and wakes it again at its next deadline.
    package func perform(_ actions: [NodeAction], on name: String) {
        guard let host = hosts[name] else { return }
        for action in actions {
            observer?(now, name, action)
            switch action {
            case .connect(let peer, let address):
                if host.dialing.contains(peer) {
                    violations.append("t=\(now): \(name) dialled peer \(peer) (\(address)) while a dial was in progress")
                }
                host.dialing.insert(peer)
                let delay = configuration.dialDelay.lowerBound + Int64(random.next(below: UInt64(configuration.dialDelay.count)))
                queue.push(.dial(host: name, life: host.life, peer: peer, address: address), at: now + delay)
            case .send(let end, let bytes):
                guard owns(name, end) else { continue }
                send(bytes, from: end)
            case .close(let end):
                guard owns(name, end) else { continue }
                close(end)
            case .event, .sessionEvent, .replicaChanged:
                break
            }
        }
        if let core = host.core, let deadline = core.nextDeadline {
            let at = max(deadline, now + 1)
            if host.scheduledTick.map({ at < $0 }) ?? true {
                host.scheduledTick = at
                queue.push(.tick(host: name), at: at)
            }
        }
    }

    /// A core may only use its own ends; ends of closed connections are ignored quietly (a core
    /// may send before it hears of the close).
    private func owns(_ name: String, _ end: Int) -> Bool {
        guard let connection = connections[end / 2] else {
            violations.append("t=\(now): \(name) used connection end \(end), which never existed")
            return false
        }
        guard connection.name(of: end) == name else {
            violations.append("t=\(now): \(name) used connection end \(end), which is \(connection.name(of: end))'s")
            return false
        }
        return true
    }

    func note(_ line: @autoclosure () -> String, bytes: [UInt8]? = nil) {
        tracer?(now, line(), bytes)
    }

    /// Counts a fault (the network's own, or one the driver injects) for the run's report.
    package func count(_ kind: String) { faultCounts[kind, default: 0] += 1 }
}

/// A participant that is not a `NodeCore` (the hostile node, a stranger): told of bytes and
/// closes on the connections it opened with `VirtualNetwork.connect`, and of the dials it
/// answers at an address it squats (`VirtualNetwork.squat`).
package protocol VirtualEndpoint: AnyObject {
    func received(end: Int, bytes: [UInt8])
    func closed(end: Int)
    /// `dialler` dialled an address this endpoint squats; `end` is this endpoint's side.
    func accepted(end: Int, from dialler: String)
}

extension VirtualEndpoint {
    /// An endpoint that squats no address is never dialled.
    package func accepted(end: Int, from dialler: String) {}
}
