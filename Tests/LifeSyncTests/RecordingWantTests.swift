import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// WANT (PROTOCOL.md §5.9.9): a receiver names the recordings whose bytes it lacks, and its
/// sender offers them again whatever it recorded of an earlier delivery. The case it exists for:
/// a mac put back whole from a copy made after a recording's metadata arrived and before its
/// bytes did — the phone's confirmation from it stands, and nothing else would send them again.
@Suite struct RecordingWantTests {
    /// A phone with one recording that a mac received and confirmed in a first session.
    static func deliveredOnce() throws -> (phone: TestNode, mac: TestNode, recording: Recording, bytes: [UInt8]) {
        let phone = try TestNode(.phone, seed: 71), mac = try TestNode(.mac, seed: 72)
        let bytes = randomBytes(3 * Int(RecordingTransferTests.chunk) + 17, seed: 73)
        let recording = try phone.attach(bytes, seed: 74)
        let first = SessionPair(a: phone.session(), b: mac.session())
        first.start()
        #expect(first.run())
        #expect(mac.storage.files[recording.fileName] == bytes)
        #expect(try phone.replica.confirmations(id: recording.id).map(\.nodeID) == [mac.replica.identity.nodeID])
        return (phone, mac, recording, bytes)
    }

    /// The mac's bytes go as a restore from that copy takes them: its replica keeps the metadata
    /// and forgets the file; its folder loses it.
    static func loseBytes(of recording: Recording, on mac: TestNode) throws {
        try mac.replica.clearRecordingFile(id: recording.id)
        try mac.storage.remove(recording.fileName)
    }

    static func wants(_ link: SessionPair, from side: SessionPair.Side) -> [[String]] {
        link.sent.compactMap { $0.from == side ? { if case .want(let ids) = $0 { return ids }; return nil }($0.message) : nil }
    }

    @Test func aReceiverThatLostConfirmedBytesGetsThemAgain() throws {
        let (phone, mac, recording, bytes) = try Self.deliveredOnce()
        try Self.loseBytes(of: recording, on: mac)
        #expect(try mac.replica.recordingsWithoutBytes() == [recording.id])

        let second = SessionPair(a: phone.session(), b: mac.session())
        second.start()
        #expect(second.run())
        #expect(second.closed.isEmpty, "\(second.closed)")
        #expect(Self.wants(second, from: .b) == [[recording.id]], "the mac names what it lacks, once")
        #expect(Self.wants(second, from: .a).isEmpty, "the phone lacks nothing")
        #expect(second.offers(from: .a).map(\.recordingID) == [recording.id])
        #expect(mac.storage.files[recording.fileName] == bytes, "the bytes are back, identical")
        #expect(try mac.replica.recordingsWithoutBytes().isEmpty)
    }

    /// The wanted transfer fails once (here a chunk damaged on the way; in simulator seed 10976 a
    /// duplicated one): what the receiver named stays wanted until it confirms, so the sender
    /// offers it again after the retry delay — nothing but the WANT says it is lacking.
    @Test func aWantedRecordingThatFailsOnceIsOfferedAgainAfterTheRetryDelay() throws {
        let (phone, mac, recording, bytes) = try Self.deliveredOnce()
        try Self.loseBytes(of: recording, on: mac)
        let second = SessionPair(a: phone.session(), b: mac.session(), now: 10_000)
        second.damageChunks(to: .b, times: 1) { $0.offset == UInt64(RecordingTransferTests.chunk) }
        second.start()
        #expect(second.run())
        #expect(second.damagedChunks == 1 && second.failures(from: .b).map(\.id) == [recording.id])
        #expect(second.offers(from: .a).count == 1 && mac.storage.files[recording.fileName] == nil)
        let retryAt = try #require(second.a.nextDeadline, "the phone keeps no deadline for the retry")
        #expect(retryAt > second.now)
        second.now = retryAt
        #expect(second.run())
        #expect(second.closed.isEmpty, "\(second.closed)")
        #expect(second.offers(from: .a).map(\.recordingID) == [recording.id, recording.id], "the wanted recording was not offered again")
        #expect(mac.storage.files[recording.fileName].map { $0 == bytes } == true, "the bytes are back, identical")
        #expect(try mac.replica.recordingsWithoutBytes().isEmpty)
        // Confirmed, it is no longer wanted: a minute of deadlines (keepalives, retries) later,
        // nothing more was offered and the session still stands.
        let end = second.now + 60_000
        for _ in 0..<100 {
            guard let next = [second.a.nextDeadline, second.b.nextDeadline].compactMap({ $0 }).min(), next <= end else { break }
            second.now = next
            #expect(second.run())
        }
        #expect(second.offers(from: .a).count == 2 && second.closed.isEmpty, "\(second.closed)")
    }

    @Test func aReceiverThatLacksNothingSaysNothingAndNothingIsOfferedAgain() throws {
        let (phone, mac, _, _) = try Self.deliveredOnce()
        let second = SessionPair(a: phone.session(), b: mac.session())
        second.start()
        #expect(second.run())
        #expect(Self.wants(second, from: .b).isEmpty && Self.wants(second, from: .a).isEmpty)
        #expect(second.offers(from: .a).isEmpty, "a confirmation still stands when nobody says otherwise")
    }

    /// A WANT for a recording the sender does not hold, or from a peer it sends no recordings
    /// to (a watch), changes nothing; a seventeenth in one session is refused.
    @Test func aWantIsBoundedAndNamesOnlyWhatTheSenderMaySend() throws {
        let (phone, mac, recording, _) = try Self.deliveredOnce()
        let unknown = Identifier.make(role: .phone, random: SeededRandom(seed: 75))
        let link = SessionPair(a: phone.session(), b: mac.session())
        link.start()
        #expect(link.run())
        link.inject(Message.want(recordingIDs: [unknown]).encoded(), to: .a)
        #expect(link.run())
        #expect(link.offers(from: .a).isEmpty && link.closed.isEmpty, "an ID the phone does not hold is ignored")

        let watch = try TestNode(.watch, seed: 76)
        let toWatch = SessionPair(a: phone.session(), b: watch.session())
        toWatch.start()
        #expect(toWatch.run())
        toWatch.inject(Message.want(recordingIDs: [recording.id]).encoded(), to: .a)
        #expect(toWatch.run())
        #expect(toWatch.offers(from: .a).isEmpty, "nothing goes to a watch, whatever it asks")

        for _ in 0..<(Message.Limits.maximumWantsPerSession - 1) { link.inject(Message.want(recordingIDs: [unknown]).encoded(), to: .a) }
        _ = link.run()
        #expect(link.closed.isEmpty, "sixteen WANTs in a session are allowed")
        link.inject(Message.want(recordingIDs: [unknown]).encoded(), to: .a)
        _ = link.run()
        #expect(link.closed.contains { $0.side == .a && $0.reason.contains("WANT") }, "\(link.closed)")
    }
}
