import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

extension RecordingTransferTests {
    // MARK: Digests kept at attach (the sender's second hash pass spared)

    /// With digests kept for its chunk size, the sender puts them in its chunks as they are: the
    /// phone checks them and stores the very bytes. Kept for another chunk size, or not one per
    /// chunk, they are not used, and the transfer hashes as it reads.
    @Test(arguments: [RecordingTransferTests.chunk, RecordingTransferTests.chunk * 2])
    func keptDigestsTravelInTheChunksAndTheFileArrivesWhole(keptFor chunkSize: UInt32) throws {
        let watch = try TestNode(.watch, seed: 70)
        let phone = try TestNode(.phone, seed: 71)
        let bytes = randomBytes(10 * Int(Self.chunk) + 77, seed: 72)
        let recording = try watch.attach(bytes, seed: 170)
        watch.storage.keepChunkDigests(recording.fileName, chunkSize: chunkSize)
        let kept = try #require(watch.storage.keptDigests[recording.fileName]?.digests)
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        expectStored(phone, recording.fileName, bytes)
        #expect(link.confirms(from: .b).map(\.sha256) == [recording.sha256])
        if chunkSize == Self.chunk {
            #expect(link.chunks(from: .a).map(\.sha256) == kept)
        }
        #expect(link.chunks(from: .a).allSatisfy { SHA256.hash(bytes[0..<(Int($0.offset) + $0.data.count)]) == $0.sha256 })
    }

    /// Kept digests that do not match the file (a torn or stale cache): the phone refuses the
    /// first chunk they get wrong, the watch drops them (only them: its copy stays, pending),
    /// and the retry, hashing the copy itself, delivers it.
    @Test func staleKeptDigestsAreDroppedAndTheRetryDelivers() throws {
        let watch = try TestNode(.watch, seed: 73)
        let phone = try TestNode(.phone, seed: 74)
        let bytes = randomBytes(8 * Int(Self.chunk), seed: 75)
        let recording = try watch.attach(bytes, seed: 171)
        watch.storage.keepChunkDigests(recording.fileName, chunkSize: Self.chunk)
        var wrong = try #require(watch.storage.keptDigests[recording.fileName]?.digests)
        wrong[3] = SHA256.hash([3])
        watch.storage.keepChunkDigests(recording.fileName, chunkSize: Self.chunk, digests: wrong)
        let link = SessionPair(a: watch.session(), b: phone.session(), now: 1_000)
        link.start()
        #expect(link.run())
        expectFailure(link, from: .b, recording.id, .corruptChunk)
        #expect(watch.storage.keptDigests[recording.fileName] == nil, "the stale digests were kept")
        try expectStillPending(watch, recording, bytes: bytes)
        #expect(phone.storage.temporary[recording.id] == Array(bytes[0..<(3 * Int(Self.chunk))]), "the verified prefix was not kept")

        link.a.forgetFailedRecordings()
        link.enqueue(link.a.replicaChanged(now: link.now), from: .a)
        #expect(link.run())
        expectStored(phone, recording.fileName, bytes)
        #expect(link.confirms(from: .b).map(\.sha256) == [recording.sha256])
    }

    /// The copy rotted after its digests were kept: the kept digests pass the rotten chunk on
    /// as if it were right, the phone refuses it, and the retry hashes the copy, finds it
    /// damaged, and stops offering it. Nothing wrong is ever stored or confirmed.
    @Test func aCopyThatRottedUnderItsKeptDigestsIsFoundDamagedOnTheRetry() throws {
        let watch = try TestNode(.watch, seed: 76)
        let phone = try TestNode(.phone, seed: 77)
        let bytes = randomBytes(6 * Int(Self.chunk), seed: 78)
        let recording = try watch.attach(bytes, seed: 172)
        watch.storage.keepChunkDigests(recording.fileName, chunkSize: Self.chunk)
        var rotten = bytes
        rotten[4 * Int(Self.chunk) + 9] ^= 0x40
        watch.storage.put(recording.fileName, rotten)
        let link = SessionPair(a: watch.session(), b: phone.session(), now: 1_000)
        link.start()
        #expect(link.run())
        expectFailure(link, from: .b, recording.id, .corruptChunk)
        #expect(watch.storage.keptDigests[recording.fileName] == nil)

        link.a.forgetFailedRecordings()
        link.enqueue(link.a.replicaChanged(now: link.now), from: .a)
        #expect(link.run())
        #expect(phone.storage.files.isEmpty)
        #expect(link.confirms(from: .b).isEmpty)
        let status = try watch.replica.recordingStatuses().first { $0.recording.id == recording.id }
        #expect(status?.damage != nil, "the rotten copy is not marked damaged: \(String(describing: status))")
        #expect(watch.storage.removals.isEmpty)
    }
}
