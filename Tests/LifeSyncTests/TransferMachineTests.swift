@testable import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// The transfer machines on their own, without a session: what the sender puts in the window,
/// what a CONFIRM proves, and how the receiver takes, refuses and finishes.
@Suite struct TransferMachineTests {
    static let chunk: UInt32 = 1_024

    static func recording(_ bytes: [UInt8]) -> (Recording, MemoryRecordingStorage) {
        let id = Identifier.make(role: .watch, random: SeededRandom(seed: UInt64(bytes.count)))
        let recording = Recording(id: id, fileName: id + ".m4a", size: UInt64(bytes.count), sha256: SHA256.hash(bytes), mediaType: "audio/mp4",
                                  entryID: nil, originNode: "watch_6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
                                  createdAt: Timestamp(millisecondsSince1970: ReplicaFixtures.epoch))
        let storage = MemoryRecordingStorage()
        storage.put(recording.fileName, bytes)
        return (recording, storage)
    }

    static func decodeChunk(_ frame: [UInt8]) throws -> Chunk {
        guard case .chunk(let chunk)? = SessionPair.decode(frame) else { throw RawPeerError("not a CHUNK frame") }
        return chunk
    }

    @Test func theSenderFillsTheWindowWithRunningDigestsAndOnlyDeliveredBytesAreProof() throws {
        let bytes = randomBytes(5 * Int(Self.chunk) + 100, seed: 1)
        let (recording, storage) = Self.recording(bytes)
        var transfer = OutgoingTransfer(recording: recording, now: 0)
        #expect(try transfer.fill(chunkSize: Self.chunk, window: 2, from: storage).isEmpty, "nothing before the first ACCEPT")
        try transfer.accept(offset: 0, chunkSize: Self.chunk, now: 1)
        let first = try transfer.fill(chunkSize: Self.chunk, window: 2, from: storage).map(Self.decodeChunk)
        #expect(first.map(\.offset) == [0, 1_024])
        #expect(first.last?.sha256 == SHA256.hash(bytes[..<2_048]))
        #expect(try transfer.fill(chunkSize: Self.chunk, window: 2, from: storage).isEmpty, "the window is full")
        #expect(transfer.confirmation(of: recording.sha256) == .claim, "no byte acknowledged yet")
        try transfer.accept(offset: 2_048, chunkSize: Self.chunk, now: 2)
        var rest: [Chunk] = []
        for ack in [4_096, 5_120, UInt64(bytes.count)] {
            rest += try transfer.fill(chunkSize: Self.chunk, window: 2, from: storage).map(Self.decodeChunk)
            try transfer.accept(offset: min(UInt64(ack), transfer.sent), chunkSize: Self.chunk, now: 3)
        }
        rest += try transfer.fill(chunkSize: Self.chunk, window: 2, from: storage).map(Self.decodeChunk)
        #expect(rest.last?.sha256 == recording.sha256)
        #expect(Array((first + rest).map(\.data).joined()) == bytes)
        try transfer.accept(offset: UInt64(bytes.count), chunkSize: Self.chunk, now: 4)
        #expect(transfer.confirmation(of: recording.sha256) == .proof)
        #expect(transfer.confirmation(of: SHA256.hash([1, 2, 3])) == .mismatch)
        #expect(!transfer.isStalled(now: 60_004, timeout: 60_000) && transfer.isStalled(now: 60_005, timeout: 60_000))
    }

    @Test func aSenderWhoseCopyChangedStopsAtTheLastChunk() throws {
        let bytes = randomBytes(3 * Int(Self.chunk), seed: 2)
        let (recording, storage) = Self.recording(bytes)
        var damaged = bytes
        damaged[100] ^= 1
        storage.put(recording.fileName, damaged)
        var transfer = OutgoingTransfer(recording: recording, now: 0)
        try transfer.accept(offset: 0, chunkSize: Self.chunk, now: 1)
        #expect(throws: LocalCopyDamaged.self) { try transfer.fill(chunkSize: Self.chunk, window: 4, from: storage) }
    }

    @Test func theReceiverTakesRefusesAndFinishes() throws {
        let bytes = randomBytes(2 * Int(Self.chunk), seed: 3)
        let (recording, _) = Self.recording(bytes)
        let storage = MemoryRecordingStorage()
        let offer = Offer(recordingID: recording.id, fileName: recording.fileName, mediaType: recording.mediaType, size: recording.size,
                          chunkSize: Self.chunk, sha256: recording.sha256)
        var transfer = try IncomingTransfer.start(offer, resumingAt: 0, in: storage)
        let half = Array(bytes[..<1_024])
        let second = Chunk(recordingID: recording.id, offset: 1_024, sha256: SHA256.hash(bytes), data: Array(bytes[1_024...]))
        guard case .refused(.outOfOrder, _, false) = transfer.take(second) else { Issue.record("a gap was taken"); return }
        let wrong = Chunk(recordingID: recording.id, offset: 0, sha256: SHA256.hash([0]), data: half)
        guard case .refused(.corruptChunk, _, false) = transfer.take(wrong) else { Issue.record("a wrong digest was taken"); return }

        var fresh = try IncomingTransfer.start(offer, resumingAt: 0, in: storage)
        #expect(fresh.take(Chunk(recordingID: recording.id, offset: 0, sha256: SHA256.hash(half), data: half)) == .taken(verified: 1_024, checkpoint: false))
        #expect(fresh.take(second) == .taken(verified: 2_048, checkpoint: false))
        #expect(fresh.isComplete)
        #expect(fresh.finish(in: storage) == .stored(recording.sha256))
        #expect(storage.files[recording.fileName] == bytes && storage.temporary.isEmpty)

        // Resumed from the first chunk kept on disk: the running hash picks up from there.
        let again = MemoryRecordingStorage()
        try again.writeTemporary(recording.id, offset: 0, bytes: half)
        var resumed = try IncomingTransfer.start(offer, resumingAt: 1_024, in: again)
        #expect(resumed.take(second) == .taken(verified: 2_048, checkpoint: false))
        #expect(resumed.finish(in: again) == .stored(recording.sha256))
    }
}
