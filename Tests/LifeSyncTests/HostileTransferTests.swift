import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// Recording transfers with a peer that lies (issue: a core no peer can trick). A receiver has
/// no say over the sender's copy; a watch lets go only of bytes it delivered and saw
/// acknowledged; a receiver takes only the bytes the replicated metadata names.
@Suite struct HostileTransferTests {
    static let chunk = Int(RecordingTransferTests.chunk)

    /// A watch with one recording of `chunks` chunks, facing a fake phone that completed the
    /// handshake and acknowledged the metadata, so the watch has offered the recording.
    static func watchOffering(chunks: Int = 10, seed: UInt64 = 51) throws -> (TestNode, Recording, [UInt8], FakePeer, Offer) {
        let watch = try TestNode(.watch, seed: seed)
        let bytes = randomBytes(chunks * Self.chunk, seed: seed)
        let recording = try watch.attach(bytes, seed: seed + 1)
        let phone = FakePeer(facing: watch.session(), role: .phone, seed: seed + 2)
        phone.hello()
        let batch = try #require(phone.batches.first)
        #expect(batch.changes.contains { $0.id == recording.id })
        phone.send(.ack(Ack(batchID: batch.id, applied: 1, conflicts: 0)))
        let offer = try #require(phone.replies.compactMap { if case .offer(let o) = $0 { return o }; return nil }.first)
        #expect(offer.recordingID == recording.id)
        return (watch, recording, bytes, phone, offer)
    }

    @Test func aWatchOffersOnlyOnceThePhoneHoldsTheMetadata() throws {
        let watch = try TestNode(.watch, seed: 50)
        try watch.attach(randomBytes(Self.chunk, seed: 50), seed: 49)
        let phone = FakePeer(facing: watch.session(), role: .phone, seed: 48)
        phone.hello()
        #expect(!phone.replies.contains { if case .offer = $0 { return true }; return false })
    }

    @Test func aFailureDeletedFromTheReceiverDeletesNothing() throws {
        let (watch, recording, bytes, phone, _) = try Self.watchOffering()
        phone.send(.failure(recordingID: recording.id, code: TransferFailure.deleted.rawValue, message: "deleted here"))
        #expect(try watch.replica.recording(id: recording.id)?.deleted == false)
        try expectStillPending(watch, recording, bytes: bytes)
        #expect(phone.victim.state == .open)
    }

    @Test func aConfirmWithoutTheBytesKeepsTheWatchCopy() throws {
        let (watch, recording, bytes, phone, offer) = try Self.watchOffering()
        phone.send(.confirm(recordingID: recording.id, sha256: offer.sha256))
        expectStored(watch, recording.fileName, bytes)
        #expect(watch.storage.removals.isEmpty)
        #expect(try watch.replica.recordingFile(id: recording.id)?.state == .present)
    }

    /// The same CONFIRM after every byte was sent and acknowledged lets the watch go.
    @Test func aConfirmAfterEveryByteLetsTheWatchGo() throws {
        let (watch, recording, _, phone, offer) = try Self.watchOffering(chunks: 2)
        phone.send(.accept(recordingID: recording.id, offset: 0))
        let chunks = phone.replies.compactMap { if case .chunk(let c) = $0 { return c }; return nil }
        #expect(chunks.count == 2)
        phone.send(.accept(recordingID: recording.id, offset: UInt64(2 * Self.chunk)))
        phone.send(.confirm(recordingID: recording.id, sha256: offer.sha256))
        #expect(watch.storage.removals == [recording.fileName])
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
    }

    /// An ACCEPT beyond what was sent (it crashed the sender) or going backwards is refused.
    @Test(arguments: [UInt64(10 * 4096), UInt64(4 * 4096 + 1), UInt64.max])
    func anAcceptOutsideWhatWasSentIsRefused(offset: UInt64) throws {
        let (watch, recording, bytes, phone, _) = try Self.watchOffering()
        phone.send(.accept(recordingID: recording.id, offset: 0))
        #expect(phone.replies.filter { if case .chunk = $0 { return true }; return false }.count == 4)
        phone.send(.accept(recordingID: recording.id, offset: offset))
        #expect(phone.errors == [.malformed])
        try expectStillPending(watch, recording, bytes: bytes)
    }

    @Test func anAcceptGoingBackwardsIsRefused() throws {
        let (_, recording, _, phone, _) = try Self.watchOffering()
        phone.send(.accept(recordingID: recording.id, offset: 0))
        phone.send(.accept(recordingID: recording.id, offset: UInt64(2 * Self.chunk)))
        phone.send(.accept(recordingID: recording.id, offset: UInt64(Self.chunk)))
        #expect(phone.errors == [.malformed])
    }

    /// A receiver that accepts and then goes silent (it lost track of the transfer, or never
    /// meant to finish it) holds the session's one outgoing transfer only until the stall
    /// timeout: then the sender gives it up, and offers it again after the retry delay.
    @Test func aStalledTransferIsGivenUpAndOfferedAgain() throws {
        let (watch, recording, bytes, phone, _) = try Self.watchOffering(chunks: 10)
        phone.send(.accept(recordingID: recording.id, offset: 0))
        let configuration = TransferConfiguration()
        let offers = { phone.replies.filter { if case .offer = $0 { return true }; return false }.count }
        // The receiver stays alive (it answers keepalives), it just never moves the transfer on.
        func wait(_ milliseconds: Int64) {
            for _ in 0..<Int(milliseconds / 5_000) {
                phone.tick(by: 5_000)
                phone.send(.ping(nonce: UInt64(phone.now)))
            }
        }
        #expect(offers() == 1)
        wait(configuration.stallTimeout - 5_000)
        #expect(offers() == 1)
        wait(10_000 + configuration.retryDelay)
        #expect(phone.victim.state == .open)
        #expect(offers() == 2, "the stalled transfer was not offered again")
        #expect(phone.victim.nextDeadline.map { $0 > phone.now } == true, "a deadline in the past spins the driver")
        try expectStillPending(watch, recording, bytes: bytes)
    }

    // MARK: Receiving

    /// A phone, and a fake watch that delivered the metadata of `recording`.
    static func phoneKnowing(_ bytes: [UInt8], seed: UInt64) throws -> (TestNode, FakePeer, Recording) {
        let phone = try TestNode(.phone, seed: seed)
        let watch = FakePeer(facing: phone.session(), role: .watch, seed: seed + 1)
        watch.hello(capabilities: [.seals, .recordings])
        let id = Identifier.make(role: .watch, random: SeededRandom(seed: seed + 2))
        let recording = try Recording(id: id, fileName: id + ".m4a", size: UInt64(bytes.count), sha256: SHA256.hash(bytes),
                                      mediaType: "audio/mp4", entryID: nil, originNode: watch.nodeID,
                                      createdAt: Timestamp(millisecondsSince1970: ReplicaFixtures.epoch))
            .signed(by: TestKeys.key(for: watch.nodeID))
        let stamp = VersionStamp(hlc: HLCTimestamp(milliseconds: ReplicaFixtures.epoch, counter: 0), origin: watch.incarnation, sequence: 1,
                                 vector: VersionVector([(watch.incarnation, 1)]), deleted: false)
        watch.send(.batch(Batch(id: 1, origins: [], changes: [Change(id: id, stamp: stamp, recording: recording)],
                                through: VersionVector([(watch.incarnation, 1)]))))
        #expect(watch.acks == [1])
        return (phone, watch, recording)
    }

    static func offer(_ recording: Recording, sha256: SHA256.Digest? = nil, size: UInt64? = nil) -> Message {
        .offer(Offer(recordingID: recording.id, fileName: recording.fileName, mediaType: recording.mediaType, size: size ?? recording.size,
                     chunkSize: RecordingTransferTests.chunk, sha256: sha256 ?? recording.sha256))
    }

    @Test func bytesThatDifferFromTheMetadataAreRefused() throws {
        let bytes = randomBytes(3 * Self.chunk, seed: 60)
        let (phone, watch, recording) = try Self.phoneKnowing(bytes, seed: 61)
        watch.send(Self.offer(recording, sha256: SHA256.hash(randomBytes(3 * Self.chunk, seed: 62))))
        watch.send(Self.offer(recording, size: 4 << 30))
        #expect(watch.failures.map(\.code) == [TransferFailure.metadataMismatch.rawValue, TransferFailure.metadataMismatch.rawValue])
        #expect(phone.storage.temporary.isEmpty && phone.storage.files.isEmpty)
    }

    @Test func anOfferForARecordingNobodyAttachedIsRefused() throws {
        let bytes = randomBytes(Self.chunk, seed: 63)
        let (phone, watch, _) = try Self.phoneKnowing(bytes, seed: 64)
        let stranger = Identifier.make(role: .watch, random: SeededRandom(seed: 65))
        watch.send(.offer(Offer(recordingID: stranger, fileName: stranger + ".m4a", mediaType: "audio/mp4", size: 4 << 30,
                                chunkSize: RecordingTransferTests.chunk, sha256: SHA256.hash(bytes))))
        #expect(watch.failures.map(\.code) == [TransferFailure.unknownRecording.rawValue])
        #expect(phone.storage.temporary.isEmpty)
        #expect(try phone.replica.recordingFile(id: stranger) == nil)
    }

    /// The same OFFER again mid-transfer (a duplicated frame, or the sender's retry after it gave
    /// up waiting) goes on from what arrived: no restart, no refusal, the running hash intact.
    @Test func aRepeatedOfferContinuesFromWhatArrived() throws {
        let bytes = randomBytes(3 * Self.chunk, seed: 69)
        let (phone, watch, recording) = try Self.phoneKnowing(bytes, seed: 70)
        watch.send(Self.offer(recording))
        let first = Array(bytes[..<Self.chunk])
        watch.send(.chunk(Chunk(recordingID: recording.id, offset: 0, sha256: SHA256.hash(first), data: first)))
        watch.send(Self.offer(recording))
        let accepts = watch.replies.compactMap { if case .accept(_, let offset) = $0 { return offset }; return nil }
        #expect(accepts == [0, UInt64(Self.chunk), UInt64(Self.chunk)])
        let rest = Array(bytes[Self.chunk...])
        for (n, piece) in [Array(rest[..<Self.chunk]), Array(rest[Self.chunk...])].enumerated() {
            let end = (n + 2) * Self.chunk
            watch.send(.chunk(Chunk(recordingID: recording.id, offset: UInt64((n + 1) * Self.chunk), sha256: SHA256.hash(bytes[..<end]), data: piece)))
        }
        #expect(watch.failures.isEmpty)
        expectStored(phone, recording.fileName, bytes)
    }

    /// A verified file is never overwritten: an offer of the same recording is confirmed.
    @Test func aVerifiedFileIsNeverOverwritten() throws {
        let bytes = randomBytes(2 * Self.chunk, seed: 66)
        let (phone, watch, recording) = try Self.phoneKnowing(bytes, seed: 67)
        watch.send(Self.offer(recording))
        watch.send(.chunk(Chunk(recordingID: recording.id, offset: 0, sha256: SHA256.hash(bytes[..<Self.chunk]), data: Array(bytes[..<Self.chunk]))))
        watch.send(.chunk(Chunk(recordingID: recording.id, offset: UInt64(Self.chunk), sha256: SHA256.hash(bytes), data: Array(bytes[Self.chunk...]))))
        #expect(watch.replies.contains { if case .confirm = $0 { return true }; return false })
        expectStored(phone, recording.fileName, bytes)

        let other = randomBytes(2 * Self.chunk, seed: 68)
        watch.send(Self.offer(recording, sha256: SHA256.hash(other)))
        watch.send(Self.offer(recording))
        #expect(watch.failures.map(\.code) == [TransferFailure.metadataMismatch.rawValue])
        #expect(watch.replies.filter { if case .confirm = $0 { return true }; return false }.count == 2)
        expectStored(phone, recording.fileName, bytes)
    }
}
