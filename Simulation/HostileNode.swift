import LifeSync

/// A scripted adversary on the simulated network (`SimulationOptions.hostile`). It is not a
/// `NodeCore` and holds no replica: it dials honest nodes and, during the safety phase, sends
/// them a seeded mix (its own `SeededRandom`, derived from the run's seed) of lies, forgeries and
/// damaged bytes, then closes every connection and falls silent for the liveness phase, so that
/// convergence can be judged. The checker judges the honest nodes only.
///
/// Threat model: a peer the nodes trust (paired) that is buggy or compromised; the strangers,
/// whose keys nobody trusts, are `StrangerNode`'s. Being trusted as itself, the hostile node may
/// - claim any identity in a HELLO (refused unless it is the one its key is trusted as): its own, another node's node ID, another node's incarnation,
///   or both (learned from the HELLOs it receives), and any role; it is a "phone" by default;
/// - lie in every vector (HELLO, SYNC_REQUEST, CAUGHT_UP, a batch's `through`, a write's `vv`),
///   name other nodes' origins as anyone's in a BATCH origin table, acknowledge batches it was
///   never sent, and put any number in any field, at and past every ceiling;
/// - write under its OWN origin whatever it likes about records it created itself: duplicate
///   (origin, seq) pairs with other content, HLCs at the ceiling, forged version vectors;
/// - refuse, confirm or fake recording transfers (FAILURE `deleted`, CONFIRM without the bytes,
///   ACCEPT at impossible offsets, OFFERs of unknown recordings or with wrong hashes, chunks out
///   of order), flood PINGs, and damage at the byte level any frame it made or received.
///
/// It never writes under an honest node's origin, nor (even under its own origin) to a record an
/// honest node created: that is impersonation or authority, which only signatures and a trusted
/// mesh can settle (the trusted-mesh issue). So it damages only frames that cannot carry another
/// node's writes: what it received unless it is a BATCH, and its own BATCHes only when their
/// origin table names its own origin alone. It sends its writes to one honest node, the hub:
/// two different writes under one (origin, seq) shown to two replicas is equivocation, which no
/// replica can detect. Claiming another node's identity, it speaks for that node about
/// recordings (CONFIRM, or an OFFER of true metadata) only as `hostile_vouch_as_other`.
final class HostileNode: VirtualEndpoint {
    static let name = "hostile"

    /// Every kind of attack, counted in the run's fault counts under its raw value, so a test can
    /// prove each one really happened.
    enum Attack: String, CaseIterable {
        case helloOwn = "hostile_hello_own"
        case helloClaimsNode = "hostile_hello_claims_node"
        case helloClaimsIncarnation = "hostile_hello_claims_incarnation"
        case helloClaimsBoth = "hostile_hello_claims_both"
        case lyingVector = "hostile_lying_vector"
        /// A HELLO claiming more of the target's own current incarnation than it wrote (the
        /// target takes a new incarnation, by design).
        case claimsOwnHistory = "hostile_claims_own_history"
        case vectorPastCeiling = "hostile_vector_past_ceiling"
        case ownWrites = "hostile_own_writes"
        case forgedThrough = "hostile_forged_through"
        case forgedVV = "hostile_forged_vv"
        case squatOrigin = "hostile_squat_origin"
        case duplicateSequence = "hostile_duplicate_seq"
        /// A live twin of one of its own deletes: the (origin, seq) of a tombstone.
        case twinOfTombstone = "hostile_twin_of_tombstone"
        case hlcAtMaximum = "hostile_hlc_at_maximum"
        case hlcPastMaximum = "hostile_hlc_past_maximum"
        case sequencePastCeiling = "hostile_seq_past_ceiling"
        case tooManyOrigins = "hostile_too_many_origins"
        case ackNeverSent = "hostile_ack_never_sent"
        case failureDeleted = "hostile_failure_deleted"
        case confirmWithoutBytes = "hostile_confirm_without_bytes"
        /// Claiming another node's identity, a CONFIRM, or an OFFER with a recording's true
        /// metadata: that node's word that it holds the bytes.
        case vouchAsOther = "hostile_vouch_as_other"
        case acceptBadOffset = "hostile_accept_bad_offset"
        case offerUnknown = "hostile_offer_unknown"
        case offerWrongHash = "hostile_offer_wrong_hash"
        case chunkOutOfOrder = "hostile_chunk_out_of_order"
        case pingFlood = "hostile_ping_flood"
        /// WANTs (PROTOCOL.md §5.9.9) past the session's allowance, for known and unknown recordings.
        case wantFlood = "hostile_want_flood"
        case mutatedFrame = "hostile_mutated_frame"
        case outOfState = "hostile_out_of_state"
        /// A write under an honest node's origin, at its next sequence or near it, sealed with its
        /// own key (as itself, or claiming to be the owner): every honest node must refuse it.
        case forgeHonestWrite = "hostile_forge_honest_write"
    }

    /// One connection the hostile node dialled.
    final class Link {
        let end: Int
        let target: String
        /// The identity this link claims.
        let nodeID: String
        let role: Role
        let incarnation: String
        var decoder = FrameDecoder()
        /// The honest node's HELLO, once received.
        var peer: Hello?
        /// How far our own origin is known to be at the peer.
        var ownSent: UInt64 = 0
        var nextBatchID: UInt64 = 1
        /// A recording the peer offered us and we are "taking", with how far.
        var taking: (offer: Offer, received: UInt64)?
        /// A recording we offered the peer with its true metadata (and no bytes).
        var offering: Recording?
        /// Whether the node ID it claims is its own.
        let claimsOwnIdentity: Bool

        init(end: Int, target: String, nodeID: String, role: Role, incarnation: String, claimsOwnIdentity: Bool) {
            self.end = end
            self.target = target
            self.nodeID = nodeID
            self.role = role
            self.incarnation = incarnation
            self.claimsOwnIdentity = claimsOwnIdentity
        }
    }

    /// One write of the hostile node's own origin, as it first sent it.
    struct OwnWrite {
        let id: String
        let sequence: UInt64
        let hlc: UInt64
        let deleted: Bool
        let payload: [UInt8]
    }

    unowned let simulator: Simulator
    let random: SeededRandom
    let nodeID: String
    let incarnation: String
    var links: [Int: Link] = [:]
    var stopped = false
    /// What it learned of the honest nodes from their HELLOs: node ID → (role, incarnation, vector).
    var learned: [String: (role: Role, incarnation: String, vector: VersionVector)] = [:]
    /// The node ID each simulated node answered with last (simulator name → node ID).
    var nodeIDs: [String: String] = [:]
    /// Recording metadata seen in the batches honest nodes sent it.
    var recordings: [String: Recording] = [:]
    var log: [OwnWrite] = []
    /// Its own live entries (IDs), which its updates and deletes pick from.
    var liveEntries: [String] = []
    var lastHLC: UInt64 = 0
    /// Frames it may damage and send again: (bytes, whether only the hub may get them).
    var samples: [(bytes: [UInt8], hubOnly: Bool)] = []
    /// Every record it created (its entries, twins included), live or not.
    var createdRecords = Set<String>()

    /// Attacks left out (`SimulationOptions.hostileExclusions`).
    let excluded: Set<Attack>
    /// The attacks on resources (`HostileNode+Resources`).
    lazy var resources = Resources(seed: simulator.seed)

    init(simulator: Simulator, random: SeededRandom) {
        self.simulator = simulator
        self.random = random
        excluded = Set(Attack.allCases.filter { simulator.options.hostileExclusions.contains($0.rawValue) })
        nodeID = Identifier.make(role: .phone, random: random)
        incarnation = Identifier.uuidV4(random: random)
    }

    var hub: String { simulator.hub }

    /// Its own key, the one the honest nodes trust it with: it seals what it sends with it.
    var signer: SimulatedSigner { SimulatedSigner(name: Self.name, seed: simulator.seed) }

    // MARK: - Driven by the simulator

    /// A timed step: dial, or attack over an open link.
    func act() {
        guard !stopped else { return }
        defer { simulator.network.schedule(at: simulator.now + 100 + Int64(random.next(below: 1_400))) { [unowned self] in act() } }
        attackResources()
        let open = links.values.filter { $0.peer != nil }.sorted { $0.end < $1.end }
        if links.count < 2 && (open.isEmpty || random.next(below: 4) == 0) {
            dial()
            return
        }
        guard !open.isEmpty else { return }
        attack(over: open[Int(random.next(below: UInt64(open.count)))])
    }

    /// The liveness phase: every connection closed, nothing sent any more.
    func stop() {
        stopped = true
        stopResourceAttacks()
        for end in links.keys.sorted() { simulator.network.close(end) }
        links.removeAll()
    }

    func received(end: Int, bytes: [UInt8]) {
        guard !stopped, let link = links[end] else { return }
        let frames: [(type: UInt8, payload: ArraySlice<UInt8>)]
        do { frames = try link.decoder.feed(bytes) } catch { return }
        for frame in frames {
            guard links[end] != nil else { return }
            guard let message = try? Message.decode(type: frame.type, payload: frame.payload) else { continue }
            // What it received may be damaged and sent on, but never a BATCH: that would be
            // forging the honest writes it carries.
            if frame.type != MessageType.batch.rawValue { sample(Self.frame(rawType: frame.type, Array(frame.payload)), hubOnly: false) }
            handle(message, on: link)
        }
    }

    func closed(end: Int) {
        links[end] = nil
    }

    // MARK: - Dialling and the HELLO

    func dial() {
        let candidates = simulator.names.filter { simulator.network.isUp($0) }
        guard !candidates.isEmpty else { return }
        // Mostly the hub (the only node it sends writes to); the others for everything else.
        let others = candidates.filter { $0 != hub }
        let target = candidates.contains(hub) && (others.isEmpty || random.next(below: 10) < 6)
            ? hub : others[Int(random.next(below: UInt64(others.count)))]
        guard !links.values.contains(where: { $0.target == target }) else { return }
        // The identity it claims.
        let known = learned.keys.sorted()
        var claimNode = nodeID, claimRole = Role.phone, claimIncarnation = incarnation
        var kind = Self.hellos.pick(random)
        if known.isEmpty { kind = .helloOwn }
        if kind != .helloOwn {
            let victim = known[Int(random.next(below: UInt64(known.count)))]
            let info = learned[victim]!
            if kind != .helloClaimsIncarnation { (claimNode, claimRole) = (victim, info.role) }
            if kind != .helloClaimsNode { claimIncarnation = info.incarnation }
        }
        if !may(kind) { (kind, claimNode, claimRole, claimIncarnation) = (.helloOwn, nodeID, .phone, incarnation) }
        guard may(kind), let end = simulator.network.connect(HostileNode.name, to: target) else { return }
        let link = Link(end: end, target: target, nodeID: claimNode, role: claimRole, incarnation: claimIncarnation,
                        claimsOwnIdentity: claimNode == nodeID)
        links[end] = link
        count(kind)
        if random.next(below: 12) == 0 && may(.outOfState) {
            // Something other than a HELLO first.
            count(.outOfState)
            send([ping(UInt64(simulator.now)), ack(id: 1), vectorFrame(.caughtUp, [])][Int(random.next(below: 3))], on: link)
            return
        }
        var vector: [(String, UInt64)] = nodeIDs[target].flatMap { learned[$0] }.map { Self.entries($0.vector) } ?? []
        var clock = currentHLC()
        if random.next(below: 5) == 0 && (may(.lyingVector) || may(.claimsOwnHistory)) {
            let own = may(.claimsOwnHistory) && (!may(.lyingVector) || random.next(below: 2) == 0)
            if may(.lyingVector) { count(.lyingVector) }
            if own { count(.claimsOwnHistory) }
            vector = lie(about: target, base: vector, own: own, others: may(.lyingVector))
            if random.next(below: 2) == 0 { clock = UInt64(HLCTimestamp.maximum.rawValue) }
        } else if random.next(below: 12) == 0 && may(.vectorPastCeiling) {
            count(.vectorPastCeiling)
            vector = pastCeiling(vector)
            if random.next(below: 2) == 0 { clock = UInt64(HLCTimestamp.maximum.rawValue) + 1 + random.next(below: 1 << 40) }
        }
        send(hello(link, vector: vector, clock: clock), on: link)
    }

    func hello(_ link: Link, vector: [(String, UInt64)], clock: UInt64) -> [UInt8] {
        var w = HostileWriter()
        w.raw(Hello.magic)
        w.u16(ProtocolVersion.minimum)
        w.u16(ProtocolVersion.maximum)
        w.string(link.nodeID)
        w.u8(link.role.wireCode)
        w.string(link.incarnation)
        w.u32((Capabilities.receivesEntries.rawValue | Capabilities.recordings.rawValue | Capabilities.receivesRecordings.rawValue)
              | (random.next(below: 8) == 0 ? UInt32(truncatingIfNeeded: random.nextUInt64()) & ~7 : 0))
        w.u64(clock)
        w.vector(vector)
        return Self.frame(.hello, w.bytes)
    }

    // MARK: - Answering what the honest node sends

    func handle(_ message: Message, on link: Link) {
        switch message {
        case .hello(let hello):
            link.peer = hello
            learned[hello.nodeID] = (hello.role, hello.incarnation, hello.vector)
            nodeIDs[link.target] = hello.nodeID
            link.ownSent = hello.vector[incarnation]
        case .batch(let batch):
            for change in batch.changes where change.kind == .recording {
                if let recording = change.recording { recordings[recording.id] = recording }
            }
            if random.next(below: 6) != 0 {
                send(ack(id: batch.id, applied: UInt32(batch.changes.count)), on: link)
            }
        case .ping(let nonce):
            send(Self.frame(.pong, HostileWriter.u64(nonce)), on: link)
        case .offer(let offer):
            answer(offer, on: link)
        case .chunk(let chunk):
            take(chunk, on: link)
        case .accept(let id, let offset):
            // An honest node took our OFFER: chunks it cannot use.
            guard let recording = link.offering, recording.id == id, may(.chunkOutOfOrder) else { return }
            count(.chunkOutOfOrder)
            let wrongOffset = random.next(below: 2) == 0 ? offset + 1 + random.next(below: 100_000) : offset
            let data = (0..<(1 + Int(random.next(below: 2_000)))).map { _ in UInt8(truncatingIfNeeded: random.nextUInt64()) }
            send(Message.chunk(Chunk(recordingID: id, offset: wrongOffset, sha256: digest(), data: data)).encoded(), on: link)
            link.offering = nil
        case .error(let code, _):
            // An identity it does not hold the key of is refused at the handshake: counted, so
            // the tests see authentication at work (and never a claimed identity let through).
            if code == ErrorCode.notTrusted.rawValue {
                simulator.count(link.claimsOwnIdentity ? "hostile_own_identity_refused" : "hostile_claimed_identity_refused")
            }
            links[link.end] = nil
        case .caughtUp, .syncRequest, .holds, .pong, .ack, .confirm, .failure, .history, .want:
            break
        }
    }

    /// Whose identity a HELLO claims: its own, or a node's it learned (its ID, its incarnation,
    /// or both), one row each (`WeightedTable`).
    static let hellos = WeightedTable<Attack>([(.helloOwn, 55), (.helloClaimsNode, 15), (.helloClaimsIncarnation, 12), (.helloClaimsBoth, 18)])

    /// What it answers an OFFER with; a row whose attack is left out, and `silence`, answer nothing.
    enum Answer: Sendable { case failureDeleted, confirm, acceptBadOffset, take, silence }

    static let answers = WeightedTable<Answer>([(.failureDeleted, 35), (.confirm, 20), (.acceptBadOffset, 15), (.take, 25), (.silence, 5)])

    /// An honest node offers a recording: refuse it as deleted, confirm it without the bytes,
    /// accept at an impossible offset, or take it (and then misbehave).
    func answer(_ offer: Offer, on link: Link) {
        switch Self.answers.pick(random) {
        case .failureDeleted where may(.failureDeleted):
            count(.failureDeleted)
            send(Message.failure(recordingID: offer.recordingID, code: TransferFailure.deleted.rawValue, message: "deleted").encoded(), on: link)
        case .confirm where link.claimsOwnIdentity ? may(.confirmWithoutBytes) : may(.vouchAsOther):
            count(link.claimsOwnIdentity ? .confirmWithoutBytes : .vouchAsOther)
            send(Message.confirm(recordingID: offer.recordingID, sha256: offer.sha256).encoded(), on: link)
        case .acceptBadOffset where may(.acceptBadOffset):
            count(.acceptBadOffset)
            let chunk = UInt64(offer.chunkSize)
            let offset = [offer.size + 1 + random.next(below: 1_000), chunk / 2 + 1, offer.size + chunk, UInt64.max][Int(random.next(below: 4))]
            send(Message.accept(recordingID: offer.recordingID, offset: offset).encoded(), on: link)
        case .take:
            link.taking = (offer, 0)
            send(Message.accept(recordingID: offer.recordingID, offset: 0).encoded(), on: link)
        default:
            break  // silence: the transfer just stalls
        }
    }

    /// A chunk of a recording it is "taking": acknowledged honestly, backwards, or beyond what
    /// was sent; at the end it claims the recording was deleted.
    func take(_ chunk: Chunk, on link: Link) {
        guard var taking = link.taking, taking.offer.recordingID == chunk.recordingID else { return }
        taking.received = chunk.offset + UInt64(chunk.data.count)
        link.taking = taking
        let id = chunk.recordingID
        switch random.next(below: 10) {
        case 0 where may(.acceptBadOffset):
            count(.acceptBadOffset)
            send(Message.accept(recordingID: id, offset: taking.received + UInt64(taking.offer.chunkSize) * (1 + random.next(below: 8))).encoded(), on: link)
        case 1 where chunk.offset > 0 && may(.acceptBadOffset):
            count(.acceptBadOffset)
            send(Message.accept(recordingID: id, offset: chunk.offset - 1 - random.next(below: chunk.offset)).encoded(), on: link)
        default:
            send(Message.accept(recordingID: id, offset: taking.received).encoded(), on: link)
            if taking.received >= taking.offer.size {
                link.taking = nil
                guard may(.failureDeleted) else { return }
                count(.failureDeleted)
                send(Message.failure(recordingID: id, code: TransferFailure.deleted.rawValue, message: "deleted").encoded(), on: link)
            }
        }
    }
}

extension SimulationOptions {
    /// Every attack of the hostile node, by the name it is counted under in a run's fault counts
    /// and left out by in `hostileExclusions`.
    package static var hostileAttacks: [String] {
        HostileNode.Attack.allCases.map(\.rawValue) + HostileNode.ResourceAttack.allCases.map(\.rawValue)
    }
}
