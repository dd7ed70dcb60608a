import LifeSync

/// Hosts whose keys no node trusts, on the simulated network of every hostile run
/// (`SimulationOptions.hostile`), beside the trusted-but-buggy `HostileNode`. Like it, it holds no
/// replica, draws from its own `SeededRandom`, and falls silent for the liveness phase.
///
/// Where the hostile node tests what a paired peer can do, the stranger tests the door: a key
/// that was never paired must read nothing and write nothing, however it presents itself. So
/// on every connection it asks for everything (an empty vector in its HELLO and a SYNC_REQUEST)
/// and pushes an entry and a recording of its own (a BATCH, an OFFER), and it
/// - dials with its own key as its own node (`dialOwn`);
/// - dials with its own key claiming a trusted node's node ID, role and incarnation, which it
///   knows: node IDs are no secret (`impersonate`);
/// - dials with a key never seen before, many in a burst, as a host that makes a new key for
///   every attempt would, to flood the pending list (`keyFlood`);
/// - answers, for a while, the address nodes dial the hub at, claiming to be the hub
///   (`squatAddress`): the honest dialler meets an untrusted key and must send no HELLO.
///
/// Whether any of it got through is judged from the network's record of frames
/// (`VirtualNetwork.watch`) and the replicas (`InvariantChecker.checkStrangers`), not from
/// what the stranger itself counts; it counts its attacks and the refusals it met.
final class StrangerNode: VirtualEndpoint {
    static let name = "stranger"

    enum Attack: String, CaseIterable {
        case dialOwn = "stranger_dial_own"
        case impersonate = "stranger_impersonate"
        case keyFlood = "stranger_key_flood"
        case squatAddress = "stranger_squat_address"
    }

    /// How each attack ended, counted in the run's fault counts: the tests require each.
    enum Refusal: String, CaseIterable {
        /// ERROR not_trusted after its HELLO as itself.
        case own = "stranger_refused"
        case impersonation = "stranger_impersonation_refused"
        case freshKey = "stranger_fresh_key_refused"
        /// An honest node dialled the squatted address and closed without a HELLO.
        case squat = "stranger_answered_without_hello"
    }

    /// One connection of the stranger's, dialled or answered.
    final class Link {
        let attack: Attack
        var decoder = FrameDecoder()
        var refused = false

        init(attack: Attack) { self.attack = attack }
    }

    unowned let simulator: Simulator
    let random: SeededRandom
    /// Its own node ID and incarnation, and its own key (`Simulator.key(of:)` of its name).
    let nodeID: String
    let incarnation: String
    var links: [Int: Link] = [:]
    var stopped = false
    /// Every record it wrote (entries and recordings): no replica may ever hold one.
    var createdRecords = Set<String>()
    /// Every incarnation it wrote under: no replica may ever know one as an origin.
    var origins = Set<String>()
    /// One flood a run is enough to fill a pending list; each costs the target a write per key.
    var floodsLeft = 1
    /// The last sequence it wrote under its incarnation.
    var sequence: UInt64 = 0

    init(simulator: Simulator, random: SeededRandom) {
        self.simulator = simulator
        self.random = random
        nodeID = Identifier.make(role: .phone, random: random)
        incarnation = Identifier.uuidV4(random: random)
        origins.insert(incarnation)
    }

    // MARK: - Driven by the simulator

    /// A timed step: a dial of some kind, or a while on the hub's address.
    /// Its timed moves, one row each (`WeightedTable`).
    static let moves = WeightedTable<Attack>([(.squatAddress, 8), (.keyFlood, 8), (.impersonate, 39), (.dialOwn, 45)])

    func act() {
        guard !stopped else { return }
        defer { simulator.network.schedule(at: simulator.now + 1_500 + Int64(random.next(below: 3_500))) { [unowned self] in act() } }
        let up = simulator.names.filter { simulator.network.isUp($0) }
        guard !up.isEmpty else { return }
        let target = up[Int(random.next(below: UInt64(up.count)))]
        switch Self.moves.pick(random) {
        case .squatAddress:
            squat()
        case .keyFlood where floodsLeft > 0:
            floodsLeft -= 1
            simulator.count(Attack.keyFlood.rawValue)
            for _ in 0..<(Replica.pendingLimit + 8) { dial(target, as: .keyFlood) }
        case .keyFlood, .impersonate:  // its floods spent, it impersonates
            dial(target, as: .impersonate)
        default:
            dial(target, as: .dialOwn)
        }
    }

    /// The liveness phase: every connection closed, the address given back, nothing sent.
    func stop() {
        stopped = true
        simulator.network.unsquat(simulator.hub)
        for end in links.keys.sorted() { simulator.network.close(end) }
        links.removeAll()
    }

    func squat() {
        simulator.count(Attack.squatAddress.rawValue)
        let hub = simulator.hub
        simulator.network.squat(hub, by: Self.name)
        simulator.network.schedule(at: simulator.now + 1_000 + Int64(random.next(below: 4_000))) { [unowned self] in
            simulator.network.unsquat(hub)
        }
    }

    /// Dials `target` and, without waiting for anything, says hello and pushes its writes.
    func dial(_ target: String, as attack: Attack) {
        var claim = (nodeID: nodeID, role: Role.phone, incarnation: incarnation)
        var key: SHA256.Digest?
        switch attack {
        case .impersonate:
            let victims = simulator.names.filter { $0 != target }.compactMap { simulator.nodes[$0]?.replica?.identity }
            guard !victims.isEmpty else { return }
            let victim = victims[Int(random.next(below: UInt64(victims.count)))]
            claim = (victim.nodeID, victim.role, random.next(below: 2) == 0 ? victim.incarnation : incarnation)
        case .keyFlood:
            key = SHA256.hash(HostileWriter.u64(random.nextUInt64()))
            claim.nodeID = Identifier.make(role: .phone, random: random)
        case .dialOwn, .squatAddress:
            break
        }
        if attack != .keyFlood { simulator.count(attack.rawValue) }
        guard let end = simulator.network.connect(Self.name, to: target, key: key) else { return }
        links[end] = Link(attack: attack)
        // A flood is about keys: its HELLOs alone (the writes come with every other dial).
        send(hello(claim) + (attack == .keyFlood ? [] : push()), on: end)
    }

    /// An honest node dialled the squatted address: answer as the hub would, and push.
    func accepted(end: Int, from dialler: String) {
        guard !stopped else { return simulator.network.close(end) }
        links[end] = Link(attack: .squatAddress)
        let hub = simulator.nodes[simulator.hub]?.replica?.identity
        send(hello((hub?.nodeID ?? nodeID, hub?.role ?? .phone, incarnation)) + push(), on: end)
    }

    func received(end: Int, bytes: [UInt8]) {
        guard let link = links[end] else { return }
        guard let frames = try? link.decoder.feed(bytes[...]) else { return }
        for frame in frames where frame.type == MessageType.error.rawValue {
            guard case .error(let code, _)? = try? Message.decode(type: frame.type, payload: frame.payload),
                  code == ErrorCode.notTrusted.rawValue, !link.refused else { continue }
            link.refused = true
            if link.attack != .squatAddress { simulator.count(refusal(of: link.attack).rawValue) }
        }
    }

    func closed(end: Int) {
        guard let link = links.removeValue(forKey: end) else { return }
        // Answering a dial, it is the dialler's HELLO that must never come (the checker sees
        // every frame; here only the refusal is counted).
        if link.attack == .squatAddress { simulator.count(Refusal.squat.rawValue) }
    }

    func refusal(of attack: Attack) -> Refusal {
        switch attack {
        case .dialOwn: return .own
        case .impersonate: return .impersonation
        case .keyFlood: return .freshKey
        case .squatAddress: return .squat
        }
    }

    // MARK: - What it sends

    func send(_ bytes: [UInt8], on end: Int) {
        simulator.network.send(bytes, from: end)
    }

    /// A HELLO with an empty vector: "send me everything".
    func hello(_ claim: (nodeID: String, role: Role, incarnation: String)) -> [UInt8] {
        Message.hello(Hello(nodeID: claim.nodeID, role: claim.role, incarnation: claim.incarnation,
                            capabilities: [.seals, .receivesEntries, .recordings, .receivesRecordings],
                            clock: HLCTimestamp(milliseconds: Simulator.epoch + simulator.now, counter: 0), vector: VersionVector())).encoded()
    }

    /// The frames that follow its HELLO at once (in one payload, as TCP would coalesce them):
    /// asks for everything, writes an entry and a recording's metadata under its own origin,
    /// and offers the recording's bytes.
    func push() -> [UInt8] {
        var frames = Message.syncRequest(vector: VersionVector()).encoded()
        let time = Timestamp(millisecondsSince1970: Simulator.epoch + simulator.now)
        let hlc = HLCTimestamp(milliseconds: Simulator.epoch + simulator.now, counter: 0)
        sequence += 2
        let sequence = self.sequence - 1
        let entryID = Identifier.make(role: .phone, random: random)
        let entry = LogEntry(id: entryID, timestamp: time, recordedAt: time, source: "stranger", deviceId: nodeID, category: "note",
                             data: LogData(text: "written by a stranger"))
        let bytes = HostileWriter.u64(random.nextUInt64())
        let recordingID = Identifier.make(role: .phone, random: random)
        // Signed with its own key, as a real node would: only trust keeps it out.
        let unsigned = Recording(id: recordingID, fileName: recordingID + ".m4a", size: UInt64(bytes.count), sha256: SHA256.hash(bytes),
                                 mediaType: "audio/mp4", entryID: nil, originNode: nodeID, createdAt: time)
        let recording = (try? unsigned.signed(by: SimulatedSigner(name: Self.name, seed: simulator.seed))) ?? unsigned
        createdRecords.formUnion([entryID, recordingID])
        let changes = [
            Change(id: entryID, stamp: VersionStamp(hlc: hlc, origin: incarnation, sequence: sequence,
                                                    vector: VersionVector([(incarnation, sequence)]), deleted: false), entry: entry),
            Change(id: recordingID, stamp: VersionStamp(hlc: hlc, origin: incarnation, sequence: sequence + 1,
                                                        vector: VersionVector([(incarnation, sequence + 1)]), deleted: false), recording: recording),
        ]
        let batch = Batch(id: 1, origins: [OriginInfo(origin: incarnation, nodeID: nodeID, role: .phone)], changes: changes,
                          through: VersionVector([(incarnation, sequence + 1)]))
        frames += Message.batch(batch).encoded()
        frames += Message.offer(Offer(recordingID: recordingID, fileName: recording.fileName, mediaType: recording.mediaType,
                                      size: recording.size, chunkSize: 16_384, sha256: recording.sha256)).encoded()
        frames += Message.chunk(Chunk(recordingID: recordingID, offset: 0, sha256: recording.sha256, data: bytes)).encoded()
        return frames
    }
}

extension SimulationOptions {
    /// What every hostile run's strangers count in the fault counts: each attack, each kind of
    /// refusal, and `stranger_pending_at_limit` (a replica's pending list reached its bound). A
    /// stranger that is never refused, or never tries, shows as a name missing here.
    package static var strangerCounts: [String] {
        StrangerNode.Attack.allCases.map(\.rawValue) + StrangerNode.Refusal.allCases.map(\.rawValue) + ["stranger_pending_at_limit"]
    }
}
