import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// What the simulator's hostile node found in the core, each reduced to the few messages that
/// show it; all fixed, and these tests keep them fixed.
@Suite struct HostileFindingTests {
    static let evil = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
    /// An origin that sorts above any other: at equal HLCs its writes win.
    static let evilHigh = "fffffff0-4b5a-4968-8776-a5b4c3d2e1f0"
    static let evilNode = "phone_0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"

    static func entry(_ id: String, _ text: String) -> LogEntry {
        let time = Timestamp(millisecondsSince1970: ReplicaFixtures.epoch)
        return LogEntry(id: id, timestamp: time, recordedAt: time, source: "evil", deviceId: evilNode, data: LogData(text: text))
    }

    static func stamp(_ sequence: UInt64, origin: String = evil, hlc: HLCTimestamp? = nil, deleted: Bool = false,
                      seen: [(String, UInt64)] = []) -> VersionStamp {
        VersionStamp(hlc: hlc ?? HLCTimestamp(milliseconds: ReplicaFixtures.epoch, counter: Int(sequence)), origin: origin, sequence: sequence,
                     vector: VersionVector([(origin, sequence)] + seen), deleted: deleted)
    }

    static func id(_ n: Int) -> String { "evil_\(String(repeating: String(n % 10), count: 8))-1111-4111-8111-111111111111" }

    /// A phone holding `x` (the hostile's write 1), then its delete (write 2), then a live twin
    /// `y` under (hostile, 2): each table checks only its own rows, so both are stored.
    static func phoneWithATwinOfATombstone() throws -> (Replica, x: String, y: String) {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 5)
        let x = Self.id(1), y = Self.id(2)
        // Each sealed by the hostile's own key, as it would send them: the twin is its own doing.
        func deliver(_ change: Change, through: UInt64) throws {
            let seals = try Seal.sealing([change.encoded], as: Self.evilNode, signer: TestKeys.key(for: Self.evilNode))
            _ = try phone.apply([([change], VersionVector([(Self.evil, through)]))], seals: [Replica.ReceivedSeals(seals: seals)])
        }
        try deliver(Change(id: x, stamp: Self.stamp(1), entry: Self.entry(x, "x")), through: 1)
        try deliver(Change(id: x, stamp: Self.stamp(2, deleted: true), entry: nil), through: 2)
        try deliver(Change(id: y, stamp: Self.stamp(2), entry: Self.entry(y, "twin")), through: 2)
        return (phone, x, y)
    }

    /// (hostile_twin_of_tombstone, fixed) The twin made every relay build a batch holding that
    /// sequence twice and trap in `DeltaSync.sent` — a process abort on every connection
    /// (simulator: `--hostile` seed 17 and many others). A batch now never holds it twice.
    @Test func aTwinOfATombstoneNeverTrapsARelay() throws {
        let (phone, _, _) = try Self.phoneWithATwinOfATombstone()
        let sendable = try phone.encodedChanges(origin: Self.evil, after: 0, limit: 10).filter { !$0.isDamaged }.map(\.stamp.sequence)
        #expect(Set(sendable).count == sendable.count, "\(sendable)")
        let mac = ScriptedPeer(SyncSession(replica: phone, configuration: .init(), now: 0))
        mac.send(.hello(Hello(nodeID: "mac_6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", role: .mac, incarnation: "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
                              capabilities: [.seals, .receivesEntries], clock: .zero, vector: VersionVector())))
        // At most one of the twins goes, and only the one its seal vouches for: the mac takes it.
        #expect(mac.batches.flatMap(\.changes).filter { $0.stamp.origin == Self.evil }.count <= 1)
        #expect(mac.session.state == .open && mac.errors.isEmpty, "\(mac.errors)")
    }

    /// (hostile_twin_of_tombstone, fixed) …and the phone held both as current versions while it
    /// relayed only one: the full replicas disagreed for ever (simulator: seed 5). A change whose
    /// (origin, seq) the replica vector already covers was absorbed before, and is now left out
    /// (kept as a clash when a record still holds that pair: `Replica.skipAbsorbed`).
    @Test func aTwinOfATombstoneIsSetAsideAsAClash() throws {
        let (phone, _, y) = try Self.phoneWithATwinOfATombstone()
        let live = try phone.versionStamp(id: y)
        #expect(live == nil, "\(String(describing: live))")
    }

    /// (hostile_duplicate_seq, fixed) A twin of a write a later edit replaced: the slot (origin,
    /// seq) was free again and the twin's HLC above the edit's, so it won at the replica it
    /// reached although the edit had seen that very (origin, seq) — and lying below every peer's
    /// vector it was never relayed (simulator: seed 10). The vector covers it: left out.
    @Test func aTwinOfASupersededWriteDoesNotReplaceTheEdit() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 16)
        let x = Self.id(6)
        try phone.apply([Change(id: x, stamp: Self.stamp(1), entry: Self.entry(x, "original"))], through: VersionVector([(Self.evil, 1)]))
        try phone.update(id: x, patch: .object([("data", .object([("text", .string("edited on the phone"))]))]))
        let edit = try #require(try phone.versionStamp(id: x))
        let twin = Self.stamp(1, hlc: edit.hlc.successor)
        try phone.apply([Change(id: x, stamp: twin, entry: Self.entry(x, "twin"))], through: VersionVector([(Self.evil, 1)]))
        let held = try phone.versionStamp(id: x)
        #expect(held?.origin == edit.origin && held?.sequence == edit.sequence, "\(String(describing: held))")
    }

    /// (hostile_hello_claims_incarnation, fixed) The first peer to deliver data under an incarnation
    /// owns it: a stranger that learned a watch's incarnation (from the watch's own HELLO) before
    /// the watch delivered anything under it claims it with its own node ID, sends one write, and
    /// the hub refuses the real watch with `identity_conflict` for ever.
    @Test func aClaimedIncarnationDoesNotLockItsOwnerOut() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 6)
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 7)
        try watch.add(json: ReplicaFixtures.entryJSON(text: "offline"))
        let squatter = ScriptedPeer(SyncSession(replica: phone, configuration: .init(), now: 0))
        squatter.send(.hello(Hello(nodeID: Self.evilNode, role: .phone, incarnation: watch.identity.incarnation,
                                   capabilities: [.seals, .receivesEntries], clock: .zero, vector: VersionVector())))
        let x = Self.id(3)  // its own write, under its own origin
        squatter.send(.batch(Batch(id: 1, origins: [], changes: [Change(id: x, stamp: Self.stamp(1), entry: Self.entry(x, "mine"))],
                                   through: VersionVector([(Self.evil, 1)]))))
        #expect(squatter.acks == [1])
        let real = ScriptedPeer(SyncSession(replica: phone, configuration: .init(), now: 0))
        real.send(.hello(Hello(nodeID: watch.identity.nodeID, role: .watch, incarnation: watch.identity.incarnation,
                               capabilities: [.seals], clock: .zero, vector: try watch.replicaVector())))
        #expect(real.session.state == .open, "\(real.errors)")
    }

    /// (hostile_squat_origin, fixed) The same through a BATCH origin table: a watch receives no
    /// changes, so it never learns the phone's incarnation from the phone, and the first table
    /// naming it with another owner (here a stranger's through-only batch) makes the watch
    /// refuse the real phone for ever.
    @Test func anOriginTableDoesNotReassignAnIncarnation() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 8)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 9)
        let stranger = ScriptedPeer(SyncSession(replica: watch, configuration: .init(), now: 0))
        stranger.send(.hello(Hello(nodeID: Self.evilNode, role: .phone, incarnation: Self.evil, capabilities: [.seals, .receivesEntries],
                                   clock: .zero, vector: VersionVector())))
        stranger.send(.batch(Batch(id: 1, origins: [OriginInfo(origin: phone.identity.incarnation, nodeID: "mac_6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", role: .mac)],
                                   changes: [], through: VersionVector([(phone.identity.incarnation, 1)]))))  // the table names what `through` names
        let real = ScriptedPeer(SyncSession(replica: watch, configuration: .init(), now: 0))
        real.send(.hello(Hello(nodeID: phone.identity.nodeID, role: .phone, incarnation: phone.identity.incarnation,
                               capabilities: [.seals, .receivesEntries], clock: .zero, vector: VersionVector())))
        #expect(real.session.state == .open, "\(real.errors)")
    }

    /// (hostile_hlc_at_maximum, fixed) A peer's entry stamped at `HLCTimestamp.maximum` pins the clock
    /// of the first node whose user edits it: `nextStamp` catches the clock up to the ceiling
    /// (`catchUp` has no drift bound), so every later local write on that node, to any entry, is
    /// stamped at the ceiling too, where the order falls to the origin: a causally later write
    /// from a smaller origin loses, and its writer keeps it while every other replica keeps the
    /// older version (divergence and a causality violation in the simulator; seed 6).
    @Test func editingACeilingStampedEntryDoesNotPinTheClock() throws {
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 10)
        let x = Self.id(4)
        try mac.apply([Change(id: x, stamp: Self.stamp(1, hlc: .maximum), entry: Self.entry(x, "at the ceiling"))],
                      through: VersionVector([(Self.evil, 1)]))
        try mac.update(id: x, patch: .object([("data", .object([("text", .string("edited"))]))]))
        let later = try mac.add(json: ReplicaFixtures.entryJSON(text: "an unrelated later write"))
        let stamp = try #require(try mac.versionStamp(id: later.id))
        #expect(stamp.hlc < .maximum, "\(stamp.hlc)")
    }

    /// (hostile_hlc_at_maximum, fixed) The edit itself is stamped at the ceiling too (HLCs
    /// saturate), where the order fell to the origin: at every other replica the ceiling version,
    /// from a greater origin, beat the causally later edit, while the editor kept its own —
    /// divergence, and a causality violation (simulator: seed 1). Equal HLCs are now ordered by
    /// the vector's weight first, and an edit's vector always weighs more than what it replaced.
    @Test func anEditOfACeilingStampedEntryWinsEverywhere() throws {
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 17)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 18)
        let x = Self.id(7)
        let ceiling = Change(id: x, stamp: Self.stamp(1, origin: Self.evilHigh, hlc: .maximum), entry: Self.entry(x, "at the ceiling"))
        for replica in [mac, phone] { try replica.apply([ceiling], through: VersionVector([(Self.evilHigh, 1)])) }
        try mac.update(id: x, patch: .object([("data", .object([("text", .string("edited on the mac"))]))]))
        let edit = try #require(try mac.versionStamp(id: x))
        try ReplicaFixtures.sync(from: mac, to: phone)
        let held = try phone.versionStamp(id: x)
        #expect(held?.origin == edit.origin && held?.sequence == edit.sequence, "\(String(describing: held))")
    }

    /// (hostile_vouch_as_other, fixed; impersonation) An OFFER of a recording the phone holds
    /// counted as proof that the offerer holds it: a stranger claiming the mac's node ID offered
    /// one (true metadata, no bytes), the phone recorded the mac's confirmation and never sent the
    /// real mac the bytes (simulator: seed 8). Who is the mac only signatures can tell, but an
    /// OFFER proves nothing about the offerer's copy either way.
    @Test func anOfferIsNoConfirmation() throws {
        let (phone, storage, recordings, configuration) = try Self.phoneWithRecordings(1, seed: 19)
        let impostor = Self.macImpostor(facing: phone, storage: storage, configuration: configuration)
        let recording = recordings[0]
        impostor.send(.offer(Offer(recordingID: recording.id, fileName: recording.fileName, mediaType: recording.mediaType,
                                   size: recording.size, chunkSize: 1_024, sha256: recording.sha256)))
        let owed = try phone.recordingsToOffer(peerNodeID: Self.mac).map(\.id)
        #expect(owed.contains(recording.id))
    }

    /// (hostile_vouch_as_other, fixed) …nor does a CONFIRM that no delivered bytes stand
    /// behind: claiming the mac's node ID, a stranger answers the phone's OFFER with the OFFER's
    /// own hash. The phone stops offering it in that session, and records nothing: the real mac
    /// is offered it next time.
    @Test func aConfirmWithoutBytesIsBelievedForTheSessionOnly() throws {
        let (phone, storage, recordings, configuration) = try Self.phoneWithRecordings(2, seed: 20)
        let impostor = Self.macImpostor(facing: phone, storage: storage, configuration: configuration)
        for batch in impostor.batches { impostor.send(.ack(Ack(batchID: batch.id, applied: UInt32(batch.changes.count), conflicts: 0))) }
        let first = try #require(impostor.offers.first)
        impostor.send(.confirm(recordingID: first.recordingID, sha256: first.sha256))
        #expect(impostor.offers.count == 2, "the next recording is offered")
        #expect(impostor.offers.last?.recordingID != first.recordingID, "the claimed one is not offered again in this session")
        #expect(try phone.confirmations(id: first.recordingID).isEmpty, "a claim is recorded as a confirmation")
        #expect(try phone.recordingsToOffer(peerNodeID: Self.mac).map(\.id).contains(first.recordingID))
        #expect(recordings.map(\.id).contains(first.recordingID))
    }

    /// (hostile_hlc_at_maximum with hostile_forged_vv) A ceiling version whose vector claims more of
    /// the editor's own incarnation than it wrote: an edit setting that entry to its true sequence
    /// would weigh less than what it replaced, and lose to it at the ceiling. The editor's next
    /// sequence skips above the claim instead, so the edit still orders after it.
    @Test func anEditOverAForgedClaimOnTheEditorsOwnOriginStillOrdersAfterIt() throws {
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 21)
        let own = mac.identity.incarnation
        let x = Self.id(8)
        let forged = Self.stamp(1, origin: Self.evilHigh, hlc: .maximum, seen: [(own, 175)])
        try mac.apply([Change(id: x, stamp: forged, entry: Self.entry(x, "claims 175 of the mac's writes"))],
                      through: VersionVector([(Self.evilHigh, 1)]))
        try mac.update(id: x, patch: .object([("data", .object([("text", .string("edited on the mac"))]))]))
        let edit = try #require(try mac.versionStamp(id: x))
        #expect(edit.origin == own && edit.sequence == 176 && edit.hlc == .maximum, "\(edit)")
        #expect(Merge.decide(local: forged, remote: edit) == .takeRemote(conflict: false))
        // The skipped numbers read as superseded writes: a later write goes on from there.
        let later = try mac.add(json: ReplicaFixtures.entryJSON(text: "after"))
        #expect(try mac.versionStamp(id: later.id)?.sequence == 177)
    }

    static let mac = "mac_6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

    /// A stranger that says it is `mac` (under its own incarnation), past the handshake with `phone`.
    static func macImpostor(facing phone: Replica, storage: MemoryRecordingStorage, configuration: SessionConfiguration) -> ScriptedPeer {
        let impostor = ScriptedPeer(SyncSession(replica: phone, configuration: configuration, now: 0, storage: storage))
        impostor.send(.hello(Hello(nodeID: mac, role: .mac, incarnation: evil, capabilities: [.seals, .receivesEntries, .recordings, .receivesRecordings],
                                   clock: .zero, vector: VersionVector())))
        return impostor
    }

    /// A phone with `count` recordings of 4 KiB in memory storage, and a session configuration
    /// with 1 KiB chunks.
    static func phoneWithRecordings(_ count: Int, seed: UInt64) throws -> (Replica, MemoryRecordingStorage, [Recording], SessionConfiguration) {
        let storage = MemoryRecordingStorage()
        var configuration = SessionConfiguration()
        configuration.transfer.chunkSize = 1_024
        let phone = try ReplicaFixtures.replica(role: .phone, seed: seed)
        var recordings: [Recording] = []
        for n in 0..<count {
            let bytes = (0..<4_096).map { UInt8(truncatingIfNeeded: $0 * (n + 3)) }
            let id = Identifier.make(role: .phone, random: SeededRandom(seed: seed * 100 + UInt64(n)))
            let recording = Recording(id: id, fileName: id + ".m4a", size: UInt64(bytes.count), sha256: SHA256.hash(bytes),
                                      mediaType: "audio/mp4", entryID: nil, originNode: phone.identity.nodeID, createdAt: phone.now)
            storage.put(recording.fileName, bytes)
            try phone.addRecording(recording, signedBy: TestKeys.key(for: phone.identity.nodeID))
            recordings.append(recording)
        }
        return (phone, storage, recordings, configuration)
    }

    /// (hostile_forged_vv, fixed) A delivered write's version vector counts as proof of a third
    /// party's sequence (`DeltaSync.admit`): a stranger's own write claiming it saw a watch's
    /// origin up to 5, with `through` 5, moves the hub's vector for that watch to 5 while it
    /// holds none of those writes. The watch, which wrote 7, then sends only 6 and 7: 1–5 are
    /// never delivered (seed 11 in the simulator: "no acknowledged write lost").
    @Test func aForgedVectorDoesNotAdvanceAThirdPartysOrigin() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 11)
        let watch = Identifier.uuidV4(random: SeededRandom(seed: 12))
        let stranger = ScriptedPeer(SyncSession(replica: phone, configuration: .init(), now: 0))
        stranger.send(.hello(Hello(nodeID: Self.evilNode, role: .phone, incarnation: Self.evil, capabilities: [.seals, .receivesEntries],
                                   clock: .zero, vector: VersionVector())))
        let x = Self.id(5)
        stranger.send(.batch(Batch(id: 1, origins: [], changes: [Change(id: x, stamp: Self.stamp(1, seen: [(watch, 5)]), entry: Self.entry(x, "saw it all"))],
                                   through: VersionVector([(Self.evil, 1), (watch, 5)]))))
        #expect(stranger.acks == [1])
        let held = try phone.replicaVector()[watch]
        #expect(held == 0)
    }

    /// (hostile_claims_own_history, fixed) A rotation in one session is not seen by the node's other open
    /// sessions: `ownOrigins` is taken at the handshake. A stranger's HELLO claiming more of a
    /// watch's writes than it made rotates the watch's incarnation; the watch's open session
    /// with its phone still allows only the old origin, so every later write (under the new
    /// one) is held back until that session happens to reconnect — in the simulator, never
    /// (seed 3: "no acknowledged write lost", the watch's new origin absent from the phone).
    @Test func aRotationInOneSessionReachesTheOthers() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 13)
        try watch.add(json: ReplicaFixtures.entryJSON(text: "before"))
        let toPhone = ScriptedPeer(SyncSession(replica: watch, configuration: .init(), now: 0))
        toPhone.send(.hello(Hello(nodeID: "phone_6f1c2a3b-4d5e-4f60-8a71-92b3c4d5e6f7", role: .phone, incarnation: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
                                  capabilities: [.seals, .receivesEntries], clock: .zero, vector: VersionVector())))
        for batch in toPhone.batches { toPhone.send(.ack(Ack(batchID: batch.id, applied: UInt32(batch.changes.count), conflicts: 0))) }
        let old = watch.identity.incarnation
        let liar = ScriptedPeer(SyncSession(replica: watch, configuration: .init(), now: 0))
        liar.send(.hello(Hello(nodeID: Self.evilNode, role: .phone, incarnation: Self.evil, capabilities: [.seals, .receivesEntries],
                               clock: .zero, vector: VersionVector([(old, 1_000)]))))
        #expect(watch.identity.incarnation != old, "the claim rotates the watch (by design)")
        let after = try watch.add(json: ReplicaFixtures.entryJSON(text: "after the rotation"))
        toPhone.take(toPhone.session.replicaChanged(now: 10))
        #expect(toPhone.batches.flatMap(\.changes).contains { $0.id == after.id })
    }

    /// (any refused transfer, fixed; a CPU finding, not an invariant) A recording whose transfer
    /// failed is retried after `retryDelay`; if it cannot be offered then (another transfer is
    /// under way, or it is no longer a candidate), its retry time stays in `nextDeadline`, in
    /// the past: the driver ticks the session again at once, for as long as the session lives.
    /// In the simulator a hostile phone that refuses one recording and stalls the next made the
    /// hub tick ~40 000 times per simulated second (seed 76); the daemon would spin a core.
    @Test func aRetryThatCannotHappenDoesNotSpinTheTimer() throws {
        let (phone, storage, _, configuration) = try Self.phoneWithRecordings(2, seed: 14)
        let peer = ScriptedPeer(SyncSession(replica: phone, configuration: configuration, now: 0, storage: storage))
        peer.send(.hello(Hello(nodeID: Self.evilNode, role: .phone, incarnation: Self.evil,
                               capabilities: [.seals, .receivesEntries, .recordings, .receivesRecordings], clock: .zero,
                               vector: VersionVector([(phone.identity.incarnation, 1_000)]))))
        for batch in peer.batches { peer.send(.ack(Ack(batchID: batch.id, applied: UInt32(batch.changes.count), conflicts: 0))) }
        let first = try #require(peer.offers.first)
        peer.send(.failure(recordingID: first.recordingID, code: TransferFailure.storageFailure.rawValue, message: "no"))
        #expect(peer.offers.count == 2, "the second recording is offered and then left hanging")
        peer.now += configuration.transfer.retryDelay + 1
        peer.take(peer.session.tick(now: peer.now))
        let deadline = try #require(peer.session.nextDeadline)
        #expect(deadline > peer.now, "deadline \(deadline) at \(peer.now)")
    }
}

/// A peer made of messages facing one real `SyncSession` (a trimmed `FakePeer`, which lives in
/// another test target): everything the session answers is decoded and kept.
final class ScriptedPeer {
    let session: SyncSession
    var now: Int64 = 1
    private(set) var replies: [Message] = []

    init(_ session: SyncSession) {
        self.session = session
        take(session.start(now: 0))
    }

    /// The node its HELLO named: a BATCH with changes and no seals goes sealed as that node
    /// (`TestKeys`), as every peer of this revision sends it.
    private(set) var nodeID: String?

    func send(_ message: Message) {
        now += 1
        var message = message
        if case .hello(let hello) = message { nodeID = hello.nodeID }
        if case .batch(let batch) = message, batch.seals.isEmpty, !batch.changes.isEmpty, let nodeID { message = .batch(batch.sealed(as: nodeID)) }
        take(session.receive(message.encoded(), now: now))
    }

    func take(_ actions: [SessionAction]) {
        for case .send(let bytes) in actions {
            var decoder = FrameDecoder()
            for frame in (try? decoder.feed(bytes)) ?? [] {
                if let message = try? Message.decode(type: frame.type, payload: frame.payload) { replies.append(message) }
            }
        }
    }

    var errors: [UInt16] { replies.compactMap { if case .error(let code, _) = $0 { return code }; return nil } }
    var acks: [UInt64] { replies.compactMap { if case .ack(let ack) = $0 { return ack.batchID }; return nil } }
    var batches: [Batch] { replies.compactMap { if case .batch(let batch) = $0 { return batch }; return nil } }
    var offers: [Offer] { replies.compactMap { if case .offer(let offer) = $0 { return offer }; return nil } }
}
