import LifeSync
import LifeSyncRuntime

/// Two `SyncSession`s joined in memory, one frame at a time in both directions alternately: the
/// embedded event loop of the session tests (as quinn-proto's test `Pair` joins two endpoints) —
/// no sockets, no threads, no wall clock. Frames can be altered or dropped in transit
/// (`transform`), injected (`inject`) or cut off (`drop`), and the test can look at every frame
/// sent (`onSend`) and delivered (`observe`). (Whole nodes run on `VirtualNetwork`, which the
/// simulator and the NodeCore tests share.)
///
///     let pair = SessionPair(phone, mac)
///     pair.start()
///     #expect(pair.run())
package final class SessionPair {
    package enum Side: Equatable, Sendable, CustomStringConvertible {
        case a, b
        package var other: Side { self == .a ? .b : .a }
        package var description: String { self == .a ? "a" : "b" }
    }

    package let a: SyncSession
    package let b: SyncSession
    package var now: Int64
    private var toA: [[UInt8]] = []
    private var toB: [[UInt8]] = []
    /// Every message sent, by sender, in order (before any `transform`).
    package private(set) var sent: [(from: Side, message: Message)] = []
    /// Every message delivered, by receiver, in order (after `transform`).
    package private(set) var delivered: [(to: Side, message: Message)] = []
    package private(set) var events: [(side: Side, event: SessionEvent)] = []
    package private(set) var closed: [(side: Side, reason: String)] = []
    /// Alters a frame on its way to `Side`; nil drops it.
    package var transform: ((Side, Message, [UInt8]) -> [UInt8]?)?
    /// CHUNKs `damageChunks` damaged so far.
    package private(set) var damagedChunks = 0
    /// Called for each frame a side sends.
    package var onSend: ((Side, Message) -> Void)?
    /// Called after each frame was delivered to (and handled by) a side.
    package var observe: ((Side, Message) -> Void)?

    /// Frames a side sent that were not one whole decodable frame (a defect of the sender).
    package private(set) var undecodable: [(from: Side, bytes: [UInt8])] = []

    package init(a: SyncSession, b: SyncSession, now: Int64 = 0) {
        TestKeys.adopt(a.replica)
        TestKeys.adopt(b.replica)
        self.a = a
        self.b = b
        self.now = now
    }

    /// Sessions over two replicas (no recording storage), `configurationB` for `b` if given.
    package convenience init(_ a: Replica, _ b: Replica, configuration: SessionConfiguration = .init(),
                            configurationB: SessionConfiguration? = nil, now: Int64 = 0) {
        self.init(a: SyncSession(replica: a, configuration: configuration, now: now),
                  b: SyncSession(replica: b, configuration: configurationB ?? configuration, now: now), now: now)
    }

    package func session(_ side: Side) -> SyncSession { side == .a ? a : b }

    /// Both sides send their HELLO; nothing is delivered yet.
    package func start() {
        enqueue(a.start(now: now), from: .a)
        enqueue(b.start(now: now), from: .b)
    }

    /// Queues what `side`'s session asked to send, keeping its events and closes.
    package func enqueue(_ actions: [SessionAction], from side: Side) {
        for action in actions {
            switch action {
            case .send(let bytes):
                if let message = SessionPair.decode(bytes) {
                    sent.append((side, message))
                    onSend?(side, message)
                }
                if side == .a { toB.append(bytes) } else { toA.append(bytes) }
            case .close(let reason):
                closed.append((side, reason))
            case .event(let event):
                events.append((side, event))
            }
        }
    }

    /// A frame made by the test, queued for `side`.
    package func inject(_ bytes: [UInt8], to side: Side) {
        if side == .a { toA.append(bytes) } else { toB.append(bytes) }
    }

    /// Delivers frames one at a time, alternating directions, until both queues are empty and
    /// no side is due a tick at `now` (as a runtime's loop would tick it), or `stop` says so
    /// after a delivery. Returns false when `maximumFrames` ran out first, or a side sent bytes
    /// that are not one whole frame (`undecodable`).
    @discardableResult
    package func run(maximumFrames: Int = 200_000, stop: (Side, Message) -> Bool = { _, _ in false }) -> Bool {
        var frames = 0
        var next: Side = .b
        while true {
            if toA.isEmpty && toB.isEmpty {
                for side in [Side.a, .b] where session(side).nextDeadline.map({ $0 <= now }) == true {
                    enqueue(session(side).tick(now: now), from: side)
                }
                if toA.isEmpty && toB.isEmpty { break }
            }
            guard frames < maximumFrames else { return false }
            frames += 1
            if (next == .a && toA.isEmpty) || (next == .b && toB.isEmpty) { next = next.other }
            let side = next
            next = next.other
            let bytes = side == .a ? toA.removeFirst() : toB.removeFirst()
            guard let message = SessionPair.decode(bytes) else {
                undecodable.append((side.other, bytes))
                continue
            }
            var frame = bytes
            if let transform {
                guard let altered = transform(side, message, bytes) else { continue }
                frame = altered
            }
            let arrived = SessionPair.decode(frame) ?? message
            delivered.append((side, arrived))
            enqueue(session(side).receive(frame, now: now), from: side)
            observe?(side, arrived)
            if stop(side, arrived) { return undecodable.isEmpty }
        }
        return undecodable.isEmpty
    }

    /// Tells both sides their replica changed and delivers until quiet.
    @discardableResult
    package func replicaChanged() -> Bool {
        enqueue(a.replicaChanged(now: now), from: .a)
        enqueue(b.replicaChanged(now: now), from: .b)
        return run()
    }

    /// The connection drops: what is in transit is lost, both sessions learn it closed.
    package func drop() {
        toA.removeAll()
        toB.removeAll()
        a.transportClosed()
        b.transportClosed()
    }

    /// A link that damages bytes: flips one bit in the middle of the data of each CHUNK on its
    /// way to `side` that `matching` picks, `times` of them at most (counted in `damagedChunks`).
    package func damageChunks(to side: Side, times: Int = .max, matching: @escaping (Chunk) -> Bool = { _ in true }) {
        transform = { [unowned self] to, message, frame in
            guard to == side, damagedChunks < times, case .chunk(let chunk) = message, matching(chunk) else { return frame }
            damagedChunks += 1
            var frame = frame
            frame[frame.count - 1 - chunk.data.count / 2] ^= 0x10
            return frame
        }
    }

    package static func decode(_ frame: [UInt8]) -> Message? {
        var decoder = FrameDecoder()
        guard let frames = try? decoder.feed(frame), frames.count == 1, decoder.bufferedCount == 0 else { return nil }
        return try? Message.decode(type: frames[0].type, payload: frames[0].payload)
    }

    // What was said, by kind.

    package func offers(from side: Side) -> [Offer] {
        sent.compactMap { $0.from == side ? { if case .offer(let o) = $0 { return o }; return nil }($0.message) : nil }
    }

    package func chunks(from side: Side) -> [Chunk] {
        sent.compactMap { $0.from == side ? { if case .chunk(let c) = $0 { return c }; return nil }($0.message) : nil }
    }

    package func accepts(from side: Side) -> [(id: String, offset: UInt64)] {
        sent.compactMap {
            guard $0.from == side, case .accept(let id, let offset) = $0.message else { return nil }
            return (id, offset)
        }
    }

    package func confirms(from side: Side) -> [(id: String, sha256: SHA256.Digest)] {
        sent.compactMap {
            guard $0.from == side, case .confirm(let id, let digest) = $0.message else { return nil }
            return (id, digest)
        }
    }

    package func failures(from side: Side) -> [(id: String, code: UInt16, message: String)] {
        sent.compactMap {
            guard $0.from == side, case .failure(let id, let code, let text) = $0.message else { return nil }
            return (id, code, text)
        }
    }
}
