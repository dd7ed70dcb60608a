import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

// Recording transfer as a state machine (PROTOCOL.md §5.9–5.13, LifeAdmin §1.1, §2.1, §3.1–3.3):
// two sessions with in-memory recording storage, joined frame by frame in memory, so a test can
// look between any two frames, alter a frame in transit, or cut the connection.

// MARK: - The link

/// Two `SyncSession`s with recording storage, joined in memory one frame at a time, in both
/// directions alternately. Frames can be altered or dropped in transit (`transform`), and the
/// test can look at every frame sent (`onSend`) and delivered (`observe`).
private final class TransferLink {
    enum Side: Equatable, CustomStringConvertible {
        case a, b
        var other: Side { self == .a ? .b : .a }
        var description: String { self == .a ? "a" : "b" }
    }

    let a: SyncSession
    let b: SyncSession
    var now: Int64
    private var toA: [[UInt8]] = []
    private var toB: [[UInt8]] = []
    /// Every message sent, by sender, in order (before any `transform`).
    private(set) var sent: [(from: Side, message: Message)] = []
    /// Every message delivered, by receiver, in order (after `transform`).
    private(set) var delivered: [(to: Side, message: Message)] = []
    private(set) var events: [(side: Side, event: SessionEvent)] = []
    private(set) var closed: [(side: Side, reason: String)] = []
    /// Alters a frame on its way to `Side`; nil drops it.
    var transform: ((Side, Message, [UInt8]) -> [UInt8]?)?
    /// Called for each frame a side sends.
    var onSend: ((Side, Message) -> Void)?
    /// Called after each frame was delivered to (and handled by) a side.
    var observe: ((Side, Message) -> Void)?

    init(a: SyncSession, b: SyncSession, now: Int64 = 0) {
        self.a = a
        self.b = b
        self.now = now
    }

    func session(_ side: Side) -> SyncSession { side == .a ? a : b }

    /// Both sides send their HELLO; nothing is delivered yet.
    func start() {
        enqueue(a.start(now: now), from: .a)
        enqueue(b.start(now: now), from: .b)
    }

    /// Queues what `side`'s session asked to send, keeping its events and closes.
    func enqueue(_ actions: [SessionAction], from side: Side) {
        for action in actions {
            switch action {
            case .send(let bytes):
                if let message = TransferLink.decode(bytes) {
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
    func inject(_ bytes: [UInt8], to side: Side) {
        if side == .a { toA.append(bytes) } else { toB.append(bytes) }
    }

    /// Delivers frames one at a time, alternating directions, until both queues are empty, or
    /// `stop` says so after a delivery. Returns false when `maximumFrames` ran out first.
    @discardableResult
    func run(maximumFrames: Int = 200_000, stop: (Side, Message) -> Bool = { _, _ in false }) -> Bool {
        var frames = 0
        var next: Side = .b
        while !toA.isEmpty || !toB.isEmpty {
            guard frames < maximumFrames else { return false }
            frames += 1
            if (next == .a && toA.isEmpty) || (next == .b && toB.isEmpty) { next = next.other }
            let side = next
            next = next.other
            let bytes = side == .a ? toA.removeFirst() : toB.removeFirst()
            guard let message = TransferLink.decode(bytes) else {
                Issue.record("a side sent bytes that are not one whole frame")
                continue
            }
            var frame = bytes
            if let transform {
                guard let altered = transform(side, message, bytes) else { continue }
                frame = altered
            }
            let arrived = TransferLink.decode(frame) ?? message
            delivered.append((side, arrived))
            enqueue(session(side).receive(frame, now: now), from: side)
            observe?(side, arrived)
            if stop(side, arrived) { return true }
        }
        return true
    }

    /// The connection drops: what is in transit is lost, both sessions learn it closed.
    func drop() {
        toA.removeAll()
        toB.removeAll()
        a.transportClosed()
        b.transportClosed()
    }

    static func decode(_ frame: [UInt8]) -> Message? {
        var decoder = FrameDecoder()
        guard let frames = try? decoder.feed(frame), frames.count == 1, decoder.bufferedCount == 0 else { return nil }
        return try? Message.decode(type: frames[0].type, payload: frames[0].payload)
    }

    // What was said, by kind.

    func offers(from side: Side) -> [Offer] {
        sent.compactMap { $0.from == side ? { if case .offer(let o) = $0 { return o }; return nil }($0.message) : nil }
    }

    func chunks(from side: Side) -> [Chunk] {
        sent.compactMap { $0.from == side ? { if case .chunk(let c) = $0 { return c }; return nil }($0.message) : nil }
    }

    func accepts(from side: Side) -> [(id: String, offset: UInt64)] {
        sent.compactMap {
            guard $0.from == side, case .accept(let id, let offset) = $0.message else { return nil }
            return (id, offset)
        }
    }

    func confirms(from side: Side) -> [(id: String, sha256: [UInt8])] {
        sent.compactMap {
            guard $0.from == side, case .confirm(let id, let digest) = $0.message else { return nil }
            return (id, digest)
        }
    }

    func failures(from side: Side) -> [(id: String, code: UInt16, message: String)] {
        sent.compactMap {
            guard $0.from == side, case .failure(let id, let code, let text) = $0.message else { return nil }
            return (id, code, text)
        }
    }
}

// MARK: - Fixtures

/// One node for these tests: an in-memory replica and its in-memory recording storage.
private struct TestNode {
    let replica: Replica
    let storage = MemoryRecordingStorage()
    /// Shared by all of this node's sessions, as `NodeCore` shares it.
    let incomingTransfers = IncomingTransfers()
    var configuration: SessionConfiguration

    init(_ role: Role, seed: UInt64, _ configure: (inout SessionConfiguration) -> Void = { _ in }) throws {
        replica = try ReplicaFixtures.replica(role: role, seed: seed)
        var configuration = SessionConfiguration()
        configuration.transfer.chunkSize = RecordingTransferTests.chunk
        configure(&configuration)
        self.configuration = configuration
    }

    func session(now: Int64 = 0) -> SyncSession {
        SyncSession(replica: replica, configuration: configuration, now: now, storage: storage, incomingTransfers: incomingTransfers)
    }

    /// Registers a recording as `attach` does: bytes into storage, metadata (with their real
    /// SHA-256 unless `sha256` says otherwise) into the replica.
    @discardableResult
    func attach(_ bytes: [UInt8], seed: UInt64, sha256: String? = nil) throws -> Recording {
        let id = Identifier.make(role: replica.identity.role, random: SeededRandom(seed: seed))
        let recording = Recording(id: id, fileName: id + ".m4a", size: UInt64(bytes.count), sha256: sha256 ?? SHA256.hash(bytes).hex,
                                  mediaType: "audio/mp4", entryID: nil, originNode: replica.identity.nodeID, createdAt: replica.now)
        storage.put(recording.fileName, bytes)
        try replica.addRecording(recording)
        return recording
    }
}

/// `count` pseudo-random bytes from `seed`.
private func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    let random = SeededRandom(seed: seed)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        var value = random.nextUInt64()
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: value))
            value >>= 8
        }
    }
    return Array(bytes.prefix(count))
}

/// LifeAdmin §2.1: the only automatic removal is a watch's own recording after a phone proved by
/// checksum that it holds it. Every removal in `node`'s storage must be one of those.
private func expectOnlyConfirmedWatchCopiesRemoved(_ node: TestNode, sourceLocation: SourceLocation = #_sourceLocation) throws {
    for fileName in node.storage.removals {
        #expect(node.replica.identity.role == .watch, "a \(node.replica.identity.role) removed \(fileName)", sourceLocation: sourceLocation)
        let id = String(fileName.prefix { $0 != "." })
        let known = try node.replica.recording(id: id)
        #expect(known?.recording.fileName == fileName, "removed \(fileName), which is no recording's file", sourceLocation: sourceLocation)
        #expect(known?.recording.originNode == node.replica.identity.nodeID, "removed \(fileName), not its own recording",
                sourceLocation: sourceLocation)
        let confirmations = try node.replica.confirmations(id: id)
        #expect(confirmations.contains { $0.role == .phone && $0.sha256 == known?.recording.sha256 },
                "removed \(fileName) without a phone's matching confirmation: \(confirmations)", sourceLocation: sourceLocation)
    }
    #expect(Set(node.storage.removals).count == node.storage.removals.count, "a file removed twice: \(node.storage.removals)",
            sourceLocation: sourceLocation)
}

/// The sender still holds the recording, unconfirmed, offered again later (LifeAdmin §1.1 step 9).
private func expectStillPending(_ node: TestNode, _ recording: Recording, bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    expectStored(node, recording.fileName, bytes, sourceLocation: sourceLocation)
    #expect(!node.storage.removals.contains(recording.fileName), sourceLocation: sourceLocation)
    #expect(try node.replica.confirmations(id: recording.id).isEmpty, sourceLocation: sourceLocation)
    #expect(try node.replica.recordingFile(id: recording.id)?.state == .present, sourceLocation: sourceLocation)
    let status = try node.replica.recordingStatuses().first { $0.recording.id == recording.id }
    #expect(status?.state == "pending", "state \(status?.state ?? "none")", sourceLocation: sourceLocation)
}

/// `node` stores exactly `bytes` as `fileName` (reported by size and hash, not byte by byte).
private func expectStored(_ node: TestNode, _ fileName: String, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    guard let stored = node.storage.files[fileName] else {
        Issue.record("\(node.replica.identity.role) does not store \(fileName)", sourceLocation: sourceLocation)
        return
    }
    let identical = stored == bytes
    #expect(identical, "\(node.replica.identity.role) stores \(stored.count) bytes (SHA-256 \(SHA256.hash(stored).hex)), expected \(bytes.count) (\(SHA256.hash(bytes).hex))",
            sourceLocation: sourceLocation)
}

/// The receiver wrote nothing of the recording anywhere.
private func expectNothingWritten(_ node: TestNode, _ recording: Recording, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(node.storage.files.isEmpty, "files: \(node.storage.files.keys.sorted())", sourceLocation: sourceLocation)
    #expect(node.storage.temporary[recording.id] == nil, "a temporary file was left", sourceLocation: sourceLocation)
    #expect(node.storage.temporary.isEmpty, sourceLocation: sourceLocation)
}

private func expectFailure(_ link: TransferLink, from side: TransferLink.Side, _ id: String, _ code: TransferFailure,
                           sourceLocation: SourceLocation = #_sourceLocation) {
    let failures = link.failures(from: side)
    #expect(failures.map(\.id) == [id] && failures.map(\.code) == [code.rawValue],
            "expected one FAILURE(\(code)) for \(id), got \(failures)", sourceLocation: sourceLocation)
}

// MARK: - Tests

@Suite struct RecordingTransferTests {
    static let chunk: UInt32 = 4096

    // MARK: Delivery and retention

    @Test(arguments: [1, 4095, 4096, 4097, 100_000])
    func watchToPhoneDeliversIdenticalBytesAndRemovesTheCopyOnlyAfterTheConfirm(size: Int) throws {
        let watch = try TestNode(.watch, seed: 1)
        let phone = try TestNode(.phone, seed: 2)
        let bytes = randomBytes(size, seed: UInt64(size))
        let recording = try watch.attach(bytes, seed: 100)
        let link = TransferLink(a: watch.session(), b: phone.session())

        // The window: never more than 4 chunks sent beyond what the phone acknowledged.
        var highestSent: UInt64 = 0, highestAcknowledged: UInt64 = 0, windowViolations: [String] = []
        // Retention: the watch's copy is there until the CONFIRM, gone right after it.
        var removalSeenAfter: [Message] = []
        var confirmDelivered = false
        link.onSend = { side, message in
            guard side == .a, case .chunk(let chunk) = message else { return }
            highestSent = chunk.offset + UInt64(chunk.data.count)
            if highestSent - highestAcknowledged > 4 * UInt64(Self.chunk) {
                windowViolations.append("sent through \(highestSent) with \(highestAcknowledged) acknowledged")
            }
        }
        link.transform = { side, message, frame in
            // Counted as it arrives: the chunks it lets the watch send go out while it is handled.
            if side == .a, case .accept(_, let offset) = message { highestAcknowledged = max(highestAcknowledged, offset) }
            return frame
        }
        link.observe = { side, message in
            guard side == .a else { return }
            if case .confirm = message { confirmDelivered = true }
            if !watch.storage.removals.isEmpty && removalSeenAfter.isEmpty { removalSeenAfter.append(message) }
            if !confirmDelivered {
                #expect(watch.storage.removals.isEmpty && watch.storage.exists(recording.fileName),
                        "the watch let go of its copy before the phone's CONFIRM (after \(message.type))")
            }
        }
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        #expect(windowViolations.isEmpty, "\(windowViolations)")

        // The phone holds the very bytes, in permanent storage, nothing temporary left.
        expectStored(phone, recording.fileName, bytes)
        #expect(phone.storage.temporary.isEmpty)
        let file = try #require(try phone.replica.recordingFile(id: recording.id))
        #expect(file.state == .present && file.sha256 == recording.sha256 && file.received == UInt64(size))
        let phoneStatus = try #require(try phone.replica.recordingStatuses().first { $0.recording.id == recording.id })
        #expect(phoneStatus.recording == recording)

        // The protocol as documented: one OFFER, ACCEPT(0), chunks in order, one CONFIRM with the
        // receiver's own hash of the bytes.
        #expect(link.offers(from: .a).count == 1)
        #expect(link.offers(from: .a).first?.sha256 == SHA256.hash(bytes).bytes)
        #expect(link.accepts(from: .b).first?.offset == 0)
        let chunks = link.chunks(from: .a)
        #expect(chunks.count == (size + Int(Self.chunk) - 1) / Int(Self.chunk))
        #expect(chunks.map(\.offset) == chunks.indices.map { UInt64($0) * UInt64(Self.chunk) })
        #expect(chunks.allSatisfy { SHA256.hash($0.data).bytes == $0.sha256 })
        #expect(link.accepts(from: .b).last?.offset == UInt64(size))
        #expect(link.confirms(from: .b).map(\.id) == [recording.id])
        #expect(link.confirms(from: .b).first?.sha256 == SHA256.hash(bytes).bytes)
        #expect(link.failures(from: .a).isEmpty && link.failures(from: .b).isEmpty)

        // The watch recorded the phone's confirmation and removed its copy right at the CONFIRM.
        #expect(confirmDelivered)
        if case .confirm(let id, _)? = removalSeenAfter.first { #expect(id == recording.id) } else {
            Issue.record("the watch removed its copy after \(removalSeenAfter.first.map { "\($0.type)" } ?? "nothing"), not the CONFIRM")
        }
        #expect(watch.storage.removals == [recording.fileName])
        #expect(!watch.storage.exists(recording.fileName))
        let confirmations = try watch.replica.confirmations(id: recording.id)
        #expect(confirmations.map(\.nodeID) == [phone.replica.identity.nodeID])
        #expect(confirmations.first?.sha256 == recording.sha256)
        #expect(try watch.replica.recordingFile(id: recording.id)?.state == .removed)
        let watchStatus = try #require(try watch.replica.recordingStatuses().first { $0.recording.id == recording.id })
        #expect(watchStatus.state == "synced (local copy removed)")
        #expect(link.events.contains { $0.side == .a && $0.event == .recordingConfirmed(id: recording.id) })
        #expect(link.events.contains { $0.side == .a && $0.event == .recordingCopyRemoved(id: recording.id) })
        #expect(link.events.contains { $0.side == .b && $0.event == .recordingReceived(id: recording.id, size: UInt64(size)) })

        // Confirmed: never offered again, on this session or a new one.
        link.enqueue(link.a.replicaChanged(now: 1), from: .a)
        #expect(link.run())
        let again = TransferLink(a: watch.session(), b: phone.session())
        again.start()
        #expect(again.run())
        #expect(link.offers(from: .a).count == 1 && again.offers(from: .a).isEmpty)
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        try expectOnlyConfirmedWatchCopiesRemoved(phone)
        #expect(phone.storage.removals.isEmpty)
    }

    /// A zero-byte recording (`attach` of an empty file is accepted) must sync like any other,
    /// or it stays pending forever and the fallback timer never stops. No CHUNK carries it, so no
    /// temporary file is ever written; the receiver must still store and confirm it.
    @Test func anEmptyRecordingIsDeliveredAndConfirmed() throws {
        let watch = try TestNode(.watch, seed: 3)
        let phone = try TestNode(.phone, seed: 4)
        let recording = try watch.attach([], seed: 101)
        let link = TransferLink(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        #expect(link.failures(from: .b).isEmpty, "the phone refused an empty recording: \(link.failures(from: .b))")
        #expect(phone.storage.files[recording.fileName] == [])
        #expect(try phone.replica.recordingFile(id: recording.id)?.state == .present)
        #expect(link.confirms(from: .b).map(\.id) == [recording.id])
        #expect(try watch.replica.confirmations(id: recording.id).count == 1)
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    @Test func severalRecordingsGoOneAtATimeAndEachCopyIsRemovedAfterItsOwnConfirm() throws {
        let watch = try TestNode(.watch, seed: 5)
        let phone = try TestNode(.phone, seed: 6)
        let contents = (0..<3).map { randomBytes(20_000 + $0 * 7_000, seed: 50 + UInt64($0)) }
        let recordings = try contents.enumerated().map { try watch.attach($1, seed: 200 + UInt64($0)) }
        let link = TransferLink(a: watch.session(), b: phone.session())
        var offered: [String] = []
        var overlapping: [String] = []
        func confirmedIDs() -> Set<String> {
            Set(link.delivered.compactMap { delivery -> String? in
                guard delivery.to == .a, case .confirm(let id, _) = delivery.message else { return nil }
                return id
            })
        }
        link.onSend = { side, message in
            guard side == .a, case .offer(let offer) = message else { return }
            let unconfirmed = offered.filter { !confirmedIDs().contains($0) }
            if !unconfirmed.isEmpty { overlapping.append("\(offer.recordingID) offered while \(unconfirmed) were unconfirmed") }
            offered.append(offer.recordingID)
        }
        link.observe = { side, message in
            guard side == .a else { return }
            if case .confirm(let id, _) = message {
                #expect(watch.storage.removals.last == recordings.first { $0.id == id }?.fileName)
            }
            // Every removal so far is of a recording whose CONFIRM has been delivered.
            let confirmed = confirmedIDs()
            for name in watch.storage.removals {
                #expect(confirmed.contains(String(name.prefix { $0 != "." })), "\(name) removed before its CONFIRM")
            }
        }
        link.start()
        #expect(link.run())
        #expect(overlapping.isEmpty, "\(overlapping)")
        for (recording, bytes) in zip(recordings, contents) {
            expectStored(phone, recording.fileName, bytes)
            #expect(try watch.replica.confirmations(id: recording.id).map(\.nodeID) == [phone.replica.identity.nodeID])
        }
        #expect(Set(watch.storage.removals) == Set(recordings.map(\.fileName)))
        #expect(watch.storage.files.isEmpty)
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    @Test func withKeepRecordingsTheWatchKeepsItsConfirmedCopy() throws {
        let watch = try TestNode(.watch, seed: 7) { $0.transfer.keepRecordings = true }
        let phone = try TestNode(.phone, seed: 8)
        let bytes = randomBytes(30_000, seed: 9)
        let recording = try watch.attach(bytes, seed: 102)
        let link = TransferLink(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        expectStored(phone, recording.fileName, bytes)
        #expect(try watch.replica.confirmations(id: recording.id).map(\.nodeID) == [phone.replica.identity.nodeID])
        expectStored(watch, recording.fileName, bytes)
        #expect(watch.storage.removals.isEmpty)
        #expect(try watch.replica.recordingFile(id: recording.id)?.state == .present)
        #expect(try watch.replica.recordingStatuses().first?.state == "synced")
        #expect(!link.events.contains { $0.event == .recordingCopyRemoved(id: recording.id) })
        // Kept and confirmed: not offered again.
        let again = TransferLink(a: watch.session(), b: phone.session())
        again.start()
        #expect(again.run())
        #expect(again.offers(from: .a).isEmpty)
        #expect(phone.storage.removals.isEmpty)
    }

    /// A CONFIRM that was lost on the way: the watch keeps its copy; the next session's OFFER is
    /// answered at once with a CONFIRM (the phone already holds the verified file), and only then
    /// is the watch copy removed.
    @Test func aLostConfirmKeepsTheCopyUntilTheNextSessionConfirms() throws {
        let watch = try TestNode(.watch, seed: 10)
        let phone = try TestNode(.phone, seed: 11)
        let bytes = randomBytes(40_000, seed: 12)
        let recording = try watch.attach(bytes, seed: 103)
        let first = TransferLink(a: watch.session(), b: phone.session())
        first.transform = { side, message, bytes in
            if side == .a, case .confirm = message { return nil }
            return bytes
        }
        first.start()
        #expect(first.run())
        #expect(first.confirms(from: .b).count == 1)
        expectStored(phone, recording.fileName, bytes)
        try expectStillPending(watch, recording, bytes: bytes)
        first.drop()

        let second = TransferLink(a: watch.session(), b: phone.session())
        second.start()
        #expect(second.run())
        #expect(second.chunks(from: .a).isEmpty, "bytes the phone already verified were sent again")
        #expect(second.confirms(from: .b).map(\.id) == [recording.id])
        #expect(watch.storage.removals == [recording.fileName])
        expectStored(phone, recording.fileName, bytes)
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    /// A CONFIRM whose checksum is not the recording's proves nothing (LifeAdmin §1.1 step 8).
    @Test func aConfirmWithTheWrongChecksumRemovesNothing() throws {
        let watch = try TestNode(.watch, seed: 13)
        let phone = try TestNode(.phone, seed: 14)
        let bytes = randomBytes(20_000, seed: 15)
        let recording = try watch.attach(bytes, seed: 104)
        let link = TransferLink(a: watch.session(), b: phone.session())
        link.transform = { side, message, frame in
            guard side == .a, case .confirm(let id, var digest) = message else { return frame }
            digest[0] ^= 0x80
            return Message.confirm(recordingID: id, sha256: digest).encoded()
        }
        link.start()
        #expect(link.run())
        try expectStillPending(watch, recording, bytes: bytes)
        #expect(watch.storage.removals.isEmpty)
        #expect(phone.storage.removals.isEmpty)
        #expect(link.events.contains {
            if $0.side == .a, case .recordingFailed(let id, _, true) = $0.event { return id == recording.id }
            return false
        })
    }

    // MARK: Role policy

    struct PolicyCase: CustomTestStringConvertible, Sendable {
        var from: Role
        var to: Role
        var offers: Bool
        var testDescription: String { "\(from) → \(to): \(offers ? "sends" : "sends nothing")" }
    }

    @Test(arguments: [
        PolicyCase(from: .watch, to: .phone, offers: true),
        PolicyCase(from: .watch, to: .mac, offers: false),
        PolicyCase(from: .phone, to: .mac, offers: true),
        PolicyCase(from: .mac, to: .phone, offers: true),
        PolicyCase(from: .phone, to: .watch, offers: false),
        PolicyCase(from: .mac, to: .watch, offers: false),
    ])
    func rolePolicy(_ policy: PolicyCase) throws {
        let sender = try TestNode(policy.from, seed: 20)
        let receiver = try TestNode(policy.to, seed: 21)
        let bytes = randomBytes(10_000, seed: 22)
        let recording = try sender.attach(bytes, seed: 105)
        for senderDials in [true, false] {
            let link = senderDials ? TransferLink(a: sender.session(), b: receiver.session())
                                   : TransferLink(a: receiver.session(), b: sender.session())
            let senderSide: TransferLink.Side = senderDials ? .a : .b
            link.start()
            #expect(link.run())
            #expect(link.closed.isEmpty, "\(link.closed)")
            #expect(link.offers(from: senderSide.other).isEmpty, "the receiver offered something back")
            if policy.offers {
                expectStored(receiver, recording.fileName, bytes)
                #expect(try sender.replica.confirmations(id: recording.id).map(\.nodeID) == [receiver.replica.identity.nodeID])
                break
            }
            #expect(link.offers(from: senderSide).isEmpty, "\(policy.from) offered to a \(policy.to)")
            #expect(link.chunks(from: senderSide).isEmpty)
            expectNothingWritten(receiver, recording)
            #expect(try receiver.replica.recordingFile(id: recording.id) == nil)
            try expectStillPending(sender, recording, bytes: bytes)
        }
        // A watch lets go of its copy once the phone confirmed it; nothing else is ever removed.
        try expectOnlyConfirmedWatchCopiesRemoved(sender)
        #expect(sender.storage.removals == (policy.from == .watch && policy.offers ? [recording.fileName] : []))
        #expect(receiver.storage.removals.isEmpty)
    }

    /// A peer that offers to a watch anyway breaks the protocol: the watch closes, writes nothing.
    @Test func anOfferToAWatchIsAProtocolErrorAndWritesNothing() throws {
        let watch = try TestNode(.watch, seed: 23)
        let phone = try TestNode(.phone, seed: 24)
        let link = TransferLink(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        let id = Identifier.make(role: .phone, random: SeededRandom(seed: 106))
        let bytes = randomBytes(5_000, seed: 25)
        link.inject(Message.offer(Offer(recordingID: id, fileName: id + ".m4a", mediaType: "audio/mp4", size: UInt64(bytes.count),
                                        chunkSize: Self.chunk, sha256: SHA256.hash(bytes).bytes)).encoded(), to: .a)
        link.inject(Message.chunk(Chunk(recordingID: id, offset: 0, sha256: SHA256.hash(bytes).bytes, data: bytes)).encoded(), to: .a)
        #expect(link.run())
        #expect(link.a.state == .closed)
        #expect(link.closed.contains { $0.side == .a })
        #expect(watch.storage.files.isEmpty && watch.storage.temporary.isEmpty)
        #expect(try watch.replica.recordingFile(id: id) == nil)
        #expect(watch.storage.removals.isEmpty && phone.storage.removals.isEmpty)
    }

    // MARK: Refusals

    @Test func anOfferOverTheMaximumSizeIsRefusedAndNothingWritten() throws {
        let watch = try TestNode(.watch, seed: 30)
        let phone = try TestNode(.phone, seed: 31) { $0.transfer.maximumSize = 50_000 }
        let bytes = randomBytes(50_001, seed: 32)
        let recording = try watch.attach(bytes, seed: 107)
        let link = TransferLink(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty)
        expectFailure(link, from: .b, recording.id, .tooLarge)
        #expect(link.accepts(from: .b).isEmpty)
        #expect(link.chunks(from: .a).isEmpty)
        expectNothingWritten(phone, recording)
        #expect(try phone.replica.recordingFile(id: recording.id) == nil)
        try expectStillPending(watch, recording, bytes: bytes)
        // Exactly at the limit is fine.
        let small = try watch.attach(randomBytes(50_000, seed: 33), seed: 108)
        let again = TransferLink(a: watch.session(), b: phone.session())
        again.start()
        #expect(again.run())
        expectStored(phone, small.fileName, randomBytes(50_000, seed: 33))
        #expect(!phone.storage.exists(recording.fileName))
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    @Test(arguments: ["../x", "../{id}.m4a", "{other}.m4a", "{id}.m4a/../../x", "{id}", "{id}.", "{id}.M4A", "{id}..m4a",
                      "{id}.m4a.", "/{id}.m4a", "{id}.abcdefghijk", "{id}.m4a{nul}", ".{id}.m4a", "{id}/.m4a"])
    func anOfferWithABadFileNameIsRefusedAndNothingWritten(pattern: String) throws {
        let watch = try TestNode(.watch, seed: 34)
        let phone = try TestNode(.phone, seed: 35)
        let bytes = randomBytes(9_000, seed: 36)
        let recording = try watch.attach(bytes, seed: 109)
        let other = Identifier.make(role: .watch, random: SeededRandom(seed: 110))
        let badName = pattern.replacingOccurrences(of: "{id}", with: recording.id).replacingOccurrences(of: "{other}", with: other)
            .replacingOccurrences(of: "{nul}", with: "\u{0}")
        let link = TransferLink(a: watch.session(), b: phone.session())
        link.transform = { side, message, frame in
            guard side == .b, case .offer(var offer) = message else { return frame }
            offer.fileName = badName
            return Message.offer(offer).encoded()
        }
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        expectFailure(link, from: .b, recording.id, .badName)
        #expect(link.chunks(from: .a).isEmpty)
        expectNothingWritten(phone, recording)
        #expect(try phone.replica.recordingFile(id: recording.id) == nil)
        #expect(try phone.replica.recordingFile(id: other) == nil)
        try expectStillPending(watch, recording, bytes: bytes)
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    // MARK: Corruption, resume, full disk

    /// One bit flipped in one CHUNK on the wire: refused at that chunk, nothing confirmed, the
    /// verified prefix kept; the retry resumes from it and completes.
    @Test(arguments: [0, 10, 24])
    func aCorruptChunkIsRefusedAndTheRetryResumesFromTheVerifiedPrefix(corruptIndex: Int) throws {
        let watch = try TestNode(.watch, seed: 40)
        let phone = try TestNode(.phone, seed: 41)
        let bytes = randomBytes(100_000, seed: 42)  // 25 chunks, the last one short
        let recording = try watch.attach(bytes, seed: 111)
        let corruptOffset = UInt64(corruptIndex) * UInt64(Self.chunk)
        let link = TransferLink(a: watch.session(), b: phone.session(), now: 1_000)
        var flipped = 0
        link.transform = { side, message, frame in
            guard side == .b, flipped == 0, case .chunk(let chunk) = message, chunk.offset == corruptOffset else { return frame }
            flipped += 1
            var frame = frame
            frame[frame.count - 1 - (chunk.data.count / 2)] ^= 0x10  // one bit of the data
            return frame
        }
        link.start()
        #expect(link.run())
        #expect(flipped == 1)
        #expect(link.closed.isEmpty, "\(link.closed)")

        // Refused at that very chunk; nothing after it was taken.
        expectFailure(link, from: .b, recording.id, .corruptChunk)
        #expect(link.failures(from: .b).first?.message.contains("\(corruptOffset)") == true)
        #expect(link.accepts(from: .b).map(\.offset).max() == corruptOffset)
        #expect(link.confirms(from: .b).isEmpty)
        #expect(phone.storage.files.isEmpty)
        let kept = phone.storage.temporary[recording.id] ?? []
        #expect(kept.count == Int(corruptOffset) && kept == Array(bytes[0..<Int(corruptOffset)]), "the verified prefix was not kept")
        #expect(try phone.replica.recordingFile(id: recording.id)?.state == .partial)
        try expectStillPending(watch, recording, bytes: bytes)
        // Not offered again at once: after the retry delay, or when the fallback timer says so.
        #expect(link.offers(from: .a).count == 1)
        link.enqueue(link.a.tick(now: link.now + 1), from: .a)
        #expect(link.run())
        #expect(link.offers(from: .a).count == 1)

        let before = link.sent.count
        link.a.forgetFailedRecordings()
        link.enqueue(link.a.replicaChanged(now: link.now), from: .a)
        #expect(link.run())
        let retry = Array(link.sent[before...])
        let retryAccepts = retry.compactMap { entry -> UInt64? in
            guard entry.from == .b, case .accept(_, let offset) = entry.message else { return nil }
            return offset
        }
        let retryChunks = retry.compactMap { entry -> Chunk? in
            guard entry.from == .a, case .chunk(let chunk) = entry.message else { return nil }
            return chunk
        }
        #expect(link.offers(from: .a).count == 2)
        #expect(retryAccepts.first == corruptOffset, "the retry did not resume from the verified prefix")
        if corruptOffset > 0 {
            #expect(link.events.contains { $0.side == .b && $0.event == .recordingResumed(id: recording.id, offset: corruptOffset) })
        }
        #expect(retryChunks.first?.offset == corruptOffset)
        #expect(retryChunks.reduce(0) { $0 + $1.data.count } == bytes.count - Int(corruptOffset))
        expectStored(phone, recording.fileName, bytes)
        #expect(phone.storage.temporary.isEmpty)
        #expect(link.confirms(from: .b).map(\.sha256) == [SHA256.hash(bytes).bytes])
        #expect(watch.storage.removals == [recording.fileName])
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    /// The retry after a failure also comes by itself, from the session's tick, once the retry
    /// delay has passed.
    @Test func aFailedTransferIsRetriedByTheTickAfterTheRetryDelay() throws {
        let watch = try TestNode(.watch, seed: 43) { $0.transfer.retryDelay = 5_000 }
        let phone = try TestNode(.phone, seed: 44)
        let bytes = randomBytes(30_000, seed: 45)
        let recording = try watch.attach(bytes, seed: 112)
        let link = TransferLink(a: watch.session(), b: phone.session(), now: 1_000)
        var flipped = false
        link.transform = { side, message, frame in
            guard side == .b, !flipped, case .chunk(let chunk) = message, chunk.offset == UInt64(Self.chunk) * 3 else { return frame }
            flipped = true
            var frame = frame
            frame[frame.count - 1] ^= 0x01
            return frame
        }
        link.start()
        #expect(link.run())
        expectFailure(link, from: .b, recording.id, .corruptChunk)
        link.enqueue(link.a.tick(now: 5_999), from: .a)
        #expect(link.run())
        #expect(link.offers(from: .a).count == 1, "retried before the retry delay")
        #expect(link.a.nextDeadline.map { $0 <= 6_000 } == true, "the retry is not among the session's deadlines")
        link.now = 6_000
        link.enqueue(link.a.tick(now: 6_000), from: .a)
        #expect(link.run())
        #expect(link.offers(from: .a).count == 2)
        expectStored(phone, recording.fileName, bytes)
        #expect(watch.storage.removals == [recording.fileName])
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    @Test func aFullDiskFailsTheTransferRemovesTheTemporaryFileAndKeepsItPending() throws {
        let watch = try TestNode(.watch, seed: 50)
        let phone = try TestNode(.phone, seed: 51)
        phone.storage.quota = 60_000
        let bytes = randomBytes(100_000, seed: 52)
        let recording = try watch.attach(bytes, seed: 113)
        let link = TransferLink(a: watch.session(), b: phone.session(), now: 1_000)
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        expectFailure(link, from: .b, recording.id, .storageFailure)
        #expect(link.confirms(from: .b).isEmpty)
        #expect(link.accepts(from: .b).map(\.offset).max().map { $0 <= 60_000 } == true)
        expectNothingWritten(phone, recording)
        #expect(phone.storage.used == 0)
        #expect(try phone.replica.recordingFile(id: recording.id)?.state != .present)
        try expectStillPending(watch, recording, bytes: bytes)

        // Space freed: the retry starts over (nothing was kept) and completes.
        phone.storage.quota = .max
        let before = link.sent.count
        link.a.forgetFailedRecordings()
        link.enqueue(link.a.replicaChanged(now: link.now), from: .a)
        #expect(link.run())
        let retryAccept = link.sent[before...].first { if $0.from == .b, case .accept = $0.message { return true }; return false }
        if case .accept(_, let offset)? = retryAccept?.message { #expect(offset == 0) } else { Issue.record("no ACCEPT on the retry") }
        expectStored(phone, recording.fileName, bytes)
        #expect(watch.storage.removals == [recording.fileName])
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    @Test func aWholeFileChecksumMismatchIsRefusedAndNothingKept() throws {
        let watch = try TestNode(.watch, seed: 60)
        let phone = try TestNode(.phone, seed: 61)
        let bytes = randomBytes(50_000, seed: 62)
        var other = bytes
        other[25_000] ^= 0x01
        let recording = try watch.attach(bytes, seed: 114, sha256: SHA256.hash(other).hex)
        let link = TransferLink(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        expectFailure(link, from: .b, recording.id, .checksumMismatch)
        #expect(link.confirms(from: .b).isEmpty)
        expectNothingWritten(phone, recording)
        #expect(try phone.replica.recordingFile(id: recording.id)?.state != .present)
        #expect(try watch.replica.confirmations(id: recording.id).isEmpty)
        expectStored(watch, recording.fileName, bytes)
        #expect(watch.storage.removals.isEmpty)
        #expect(phone.storage.removals.isEmpty)
    }

    /// The connection drops mid-transfer; a new session resumes from the end of the last whole
    /// chunk the phone holds, re-sending less than one chunk (a torn last write included).
    @Test(arguments: [0, 1_000])
    func aDroppedConnectionResumesFromTheLastWholeChunk(tornBytes: Int) throws {
        let watch = try TestNode(.watch, seed: 70)
        let phone = try TestNode(.phone, seed: 71)
        let bytes = randomBytes(100_000, seed: 72)
        let recording = try watch.attach(bytes, seed: 115)
        let cutAfter = UInt64(Self.chunk) * 12
        let first = TransferLink(a: watch.session(), b: phone.session())
        first.start()
        first.run { side, message in
            if side == .b, case .chunk(let chunk) = message { return chunk.offset == cutAfter }
            return false
        }
        first.drop()
        #expect(first.confirms(from: .b).isEmpty)
        let held = phone.storage.temporarySize(recording.id)
        #expect(held == cutAfter + UInt64(Self.chunk))
        #expect(phone.storage.files.isEmpty)
        try expectStillPending(watch, recording, bytes: bytes)
        if tornBytes > 0 {
            // A write cut short by the crash: part of the next chunk, unverified.
            try phone.storage.writeTemporary(recording.id, offset: held, bytes: Array(bytes[Int(held)..<Int(held) + tornBytes]))
        }
        let onDisk = phone.storage.temporarySize(recording.id)

        let second = TransferLink(a: watch.session(), b: phone.session())
        second.start()
        #expect(second.run())
        let resumedAt = try #require(second.accepts(from: .b).first?.offset)
        #expect(resumedAt == held, "resumed at \(resumedAt), the phone held \(held) verified bytes")
        #expect(second.events.contains { $0.side == .b && $0.event == .recordingResumed(id: recording.id, offset: held) })
        let resent = second.chunks(from: .a).filter { $0.offset < onDisk }.reduce(0) { $0 + min(Int(onDisk - $1.offset), $1.data.count) }
        #expect(resent < Int(Self.chunk), "\(resent) bytes the phone already had were sent again")
        #expect(resent == tornBytes)
        #expect(second.chunks(from: .a).allSatisfy { $0.offset >= held })
        expectStored(phone, recording.fileName, bytes)
        #expect(phone.storage.temporary.isEmpty)
        #expect(watch.storage.removals == [recording.fileName])
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    /// Two peers send the same recording to one node at once (a mac that hears it from the phone
    /// and from another mac). The node hashes each stream as it arrives, so the file it stores
    /// must hold exactly those bytes however the two streams interleave in its temporary file.
    @Test func twoPeersSendingTheSameRecordingAtOnceNeverCorruptTheStoredFile() throws {
        let phone = try TestNode(.phone, seed: 80)
        let otherMac = try TestNode(.mac, seed: 81)
        let mac = try TestNode(.mac, seed: 82)
        let bytes = randomBytes(100_000, seed: 83)
        let recording = try phone.attach(bytes, seed: 117)
        try ReplicaFixtures.sync(from: phone.replica, to: otherMac.replica)
        otherMac.storage.put(recording.fileName, bytes)
        try otherMac.replica.setRecordingFile(id: recording.id, state: .present, sha256: recording.sha256, received: recording.size)

        let fromPhone = TransferLink(a: phone.session(), b: mac.session())
        let fromOtherMac = TransferLink(a: otherMac.session(), b: mac.session())
        fromPhone.start()
        fromPhone.run { side, message in
            if side == .b, case .chunk(let chunk) = message { return chunk.offset == UInt64(Self.chunk) * 5 }
            return false
        }
        fromOtherMac.start()
        #expect(fromOtherMac.run())
        #expect(fromPhone.run())
        #expect(fromPhone.closed.isEmpty && fromOtherMac.closed.isEmpty)

        // Whatever each session confirmed, the stored file must be the recording's bytes.
        let stored = try #require(mac.storage.files[recording.fileName], "no file stored")
        #expect(stored.count == bytes.count)
        #expect(SHA256.hash(stored).hex == recording.sha256,
                "the stored file is not the recording (first difference at byte \(zip(stored, bytes).enumerated().first { $1.0 != $1.1 }?.offset ?? -1)) although CONFIRMs went out: phone link \(fromPhone.confirms(from: .b).count), other mac link \(fromOtherMac.confirms(from: .b).count)")
        #expect(try mac.replica.recordingFile(id: recording.id)?.state == .present)
        #expect(mac.storage.temporary.isEmpty)
        // One stream at a time: the second offer, made while the first was under way, was
        // declined for later rather than mixed into the same temporary file.
        #expect(fromPhone.confirms(from: .b).map(\.id) == [recording.id])
        expectFailure(fromOtherMac, from: .b, recording.id, .notAccepted)
        #expect(fromOtherMac.chunks(from: .a).isEmpty)
        // Offered again later: the mac already holds the verified file and confirms at once.
        fromOtherMac.a.forgetFailedRecordings()
        fromOtherMac.enqueue(fromOtherMac.a.replicaChanged(now: 0), from: .a)
        #expect(fromOtherMac.run())
        #expect(fromOtherMac.confirms(from: .b).map(\.id) == [recording.id])
        #expect(fromOtherMac.chunks(from: .a).isEmpty)
        #expect(try otherMac.replica.confirmations(id: recording.id).map(\.nodeID) == [mac.replica.identity.nodeID])
        expectStored(mac, recording.fileName, bytes)
        #expect(mac.storage.removals.isEmpty && phone.storage.removals.isEmpty && otherMac.storage.removals.isEmpty)
    }

    struct DeleteCase: CustomTestStringConvertible, Sendable {
        var onReceiver: Bool
        var afterChunks: Int
        var testDescription: String { "deleted on the \(onReceiver ? "receiver" : "sender") after \(afterChunks) chunk(s) arrived" }
    }

    /// An explicit user delete (`lifesync delete ID`: tombstone, then the file if there is one)
    /// while the recording is being received, on either end. Once both sides are quiet no bytes
    /// of it may be left anywhere: not in permanent storage, not in a temporary file.
    @Test(arguments: [DeleteCase(onReceiver: false, afterChunks: 6), DeleteCase(onReceiver: false, afterChunks: 22),
                      DeleteCase(onReceiver: true, afterChunks: 6), DeleteCase(onReceiver: true, afterChunks: 22)])
    func aRecordingDeletedWhileItIsReceivedLeavesNoBytesBehind(_ deletion: DeleteCase) throws {
        let phone = try TestNode(.phone, seed: 90)
        let mac = try TestNode(.mac, seed: 91)
        let bytes = randomBytes(100_000, seed: 92)  // 25 chunks
        let recording = try phone.attach(bytes, seed: 118)
        let link = TransferLink(a: phone.session(), b: mac.session())
        link.start()
        link.run { side, message in
            if side == .b, case .chunk(let chunk) = message { return chunk.offset == UInt64(Self.chunk) * UInt64(deletion.afterChunks - 1) }
            return false
        }
        #expect(mac.storage.temporarySize(recording.id) == UInt64(Self.chunk) * UInt64(deletion.afterChunks))

        // What `lifesync delete` does on that node, then the node's push of the local write.
        let node = deletion.onReceiver ? mac : phone
        let fileName = try node.replica.deleteRecording(id: recording.id)
        if node.storage.exists(fileName) { try node.storage.remove(fileName) }
        node.storage.discardTemporary(recording.id)
        if let file = try node.replica.recordingFile(id: recording.id) {
            try node.replica.setRecordingFile(id: recording.id, state: .removed, sha256: file.sha256, received: 0)
        }
        let side: TransferLink.Side = deletion.onReceiver ? .b : .a
        link.enqueue(link.session(side).replicaChanged(now: link.now), from: side)
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")

        for (name, node) in [("phone", phone), ("mac", mac)] {
            #expect(try node.replica.recording(id: recording.id)?.deleted == true, "\(name) did not learn of the delete")
            #expect(try node.replica.recordingStatuses().first { $0.recording.id == recording.id }?.state == "deleted")
            #expect(!node.storage.exists(recording.fileName), "\(name) still stores the deleted recording")
            #expect(node.storage.temporarySize(recording.id) == 0, "\(name) keeps bytes of the deleted recording in a temporary file")
            #expect(try node.replica.recordingFile(id: recording.id).map { $0.state != .present } ?? true,
                    "\(name) marks the deleted recording present")
        }
        #expect(try phone.replica.recordingsToOffer(peerNodeID: mac.replica.identity.nodeID).isEmpty)
    }

    /// The prefix kept for a resume went bad while the connection was down: the resumed transfer
    /// hashes it again, so the whole-file check catches it; nothing is kept, and the next attempt
    /// starts over and completes.
    @Test func aResumedPrefixThatRottedIsCaughtByTheWholeFileChecksum() throws {
        let watch = try TestNode(.watch, seed: 73)
        let phone = try TestNode(.phone, seed: 74)
        let bytes = randomBytes(60_000, seed: 75)
        let recording = try watch.attach(bytes, seed: 116)
        let first = TransferLink(a: watch.session(), b: phone.session())
        first.start()
        first.run { side, message in
            if side == .b, case .chunk(let chunk) = message { return chunk.offset == UInt64(Self.chunk) * 6 }
            return false
        }
        first.drop()
        var prefix = try phone.storage.readTemporary(recording.id, offset: 0, count: Int(phone.storage.temporarySize(recording.id)))
        #expect(prefix.count == Int(Self.chunk) * 7)
        prefix[5_000] ^= 0x04
        try phone.storage.writeTemporary(recording.id, offset: 0, bytes: prefix)

        let second = TransferLink(a: watch.session(), b: phone.session(), now: 1_000)
        second.start()
        #expect(second.run())
        #expect(second.accepts(from: .b).first?.offset == UInt64(Self.chunk) * 7)
        expectFailure(second, from: .b, recording.id, .checksumMismatch)
        expectNothingWritten(phone, recording)
        try expectStillPending(watch, recording, bytes: bytes)

        second.a.forgetFailedRecordings()
        let before = second.sent.count
        second.enqueue(second.a.replicaChanged(now: second.now), from: .a)
        #expect(second.run())
        let accept = second.sent[before...].first { if $0.from == .b, case .accept = $0.message { return true }; return false }
        if case .accept(_, let offset)? = accept?.message { #expect(offset == 0) } else { Issue.record("no ACCEPT on the retry") }
        expectStored(phone, recording.fileName, bytes)
        #expect(watch.storage.removals == [recording.fileName])
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }
}
