import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// A peer made of frames, facing one real `SyncSession`: it says HELLO as whoever it likes and
/// then sends whatever a test wants, as a hostile or buggy implementation would. Everything the
/// session answers is decoded and kept.
final class FakePeer {
    let victim: SyncSession
    var now: Int64 = 1
    let nodeID: String
    let role: Role
    let incarnation: String
    /// Every message the victim sent, in order.
    private(set) var replies: [Message] = []
    private(set) var events: [SessionEvent] = []
    private(set) var closed = false

    init(facing victim: SyncSession, role: Role = .phone, seed: UInt64 = 900) {
        self.victim = victim
        self.role = role
        let random = SeededRandom(seed: seed)
        nodeID = Identifier.make(role: role, random: random)
        incarnation = Identifier.uuidV4(random: random)
        take(victim.start(now: 0))
    }

    /// Our HELLO, claiming `vector` and `capabilities`.
    func hello(vector: VersionVector = VersionVector(), capabilities: Capabilities = [.seals, .receivesEntries, .recordings, .receivesRecordings],
               clock: HLCTimestamp = .zero) {
        send(.hello(Hello(nodeID: nodeID, role: role, incarnation: incarnation, capabilities: capabilities, clock: clock, vector: vector)))
    }

    /// A BATCH with changes and no seals goes sealed by this peer's key (`TestKeys`), as a peer
    /// of this revision sends it; what other nodes' origins it carries, their owners would refuse.
    func send(_ message: Message) {
        if case .batch(let batch) = message, batch.seals.isEmpty, !batch.changes.isEmpty {
            send(bytes: Message.batch(batch.sealed(as: nodeID)).encoded())
        } else {
            send(bytes: message.encoded())
        }
    }

    func send(bytes: [UInt8]) {
        now += 1
        take(victim.receive(bytes, now: now))
    }

    func tick(by milliseconds: Int64 = 1) {
        now += milliseconds
        take(victim.tick(now: now))
    }

    private func take(_ actions: [SessionAction]) {
        for action in actions {
            switch action {
            case .send(let bytes):
                var decoder = FrameDecoder()
                guard let frames = try? decoder.feed(bytes) else { Issue.record("the victim sent bytes that are no frame"); continue }
                for frame in frames {
                    guard let message = try? Message.decode(type: frame.type, payload: frame.payload) else {
                        Issue.record("the victim sent a frame that does not decode")
                        continue
                    }
                    replies.append(message)
                }
            case .close:
                closed = true
            case .event(let event):
                events.append(event)
            }
        }
    }

    /// The ERROR codes the victim sent.
    var errors: [ErrorCode?] {
        replies.compactMap { if case .error(let code, _) = $0 { return ErrorCode(rawValue: code) }; return nil }
    }

    var acks: [UInt64] { replies.compactMap { if case .ack(let ack) = $0 { return ack.batchID }; return nil } }

    var batches: [Batch] { replies.compactMap { if case .batch(let batch) = $0 { return batch }; return nil } }

    var failures: [(id: String, code: UInt16)] {
        replies.compactMap { if case .failure(let id, let code, _) = $0 { return (id, code) }; return nil }
    }

    /// A change of this peer's incarnation (or `origin`) for a new entry.
    func change(sequence: UInt64, origin: String? = nil, id: String? = nil, text: String = "from a peer",
                hlc: HLCTimestamp = HLCTimestamp(milliseconds: ReplicaFixtures.epoch, counter: 0), seed: UInt64 = 1) throws -> Change {
        let origin = origin ?? incarnation
        let entryID = id ?? Identifier.make(role: role, random: SeededRandom(seed: seed &* 7919 &+ sequence))
        let entry = try LogEntry.validated(from: ReplicaFixtures.entryJSON(text: text).merging(["id": .string(entryID)]),
                                           defaults: EntryDefaults(makeID: { entryID }, recordedAt: Timestamp(millisecondsSince1970: ReplicaFixtures.epoch),
                                                                   timestamp: nil, source: "phone", deviceId: nodeID))
        return Change(id: entryID, stamp: VersionStamp(hlc: hlc, origin: origin, sequence: sequence,
                                                        vector: VersionVector([(origin, sequence)]), deleted: false), entry: entry)
    }
}

extension JSONValue {
    /// This object with `members` set (added or replaced).
    func merging(_ members: [String: JSONValue]) -> JSONValue {
        guard case .object(var pairs) = self else { return self }
        for (key, value) in members.sorted(by: { $0.key < $1.key }) {
            if let i = pairs.firstIndex(where: { $0.0 == key }) { pairs[i].1 = value } else { pairs.append((key, value)) }
        }
        return .object(pairs)
    }
}
