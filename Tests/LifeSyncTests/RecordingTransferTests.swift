import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

@Suite struct RecordingTransferTests {
    static let chunk: UInt32 = 4096

    // MARK: Delivery and retention

    /// `checksLater`: the phone's storage checks chunks later, as the runtime's does on a queue
    /// of its own: its ACCEPTs lag behind the chunks and never acknowledge an unchecked byte.
    @Test(arguments: [1, 4095, 4096, 4097, 100_000], [false, true])
    func watchToPhoneDeliversIdenticalBytesAndRemovesTheCopyOnlyAfterTheConfirm(size: Int, checksLater: Bool) throws {
        let watch = try TestNode(.watch, seed: 1)
        let phone = try TestNode(.phone, seed: 2)
        phone.storage.defersChecks = checksLater
        let bytes = randomBytes(size, seed: UInt64(size))
        let recording = try watch.attach(bytes, seed: 100)
        let link = SessionPair(a: watch.session(), b: phone.session())

        // The window: never more than 4 chunks sent beyond what the phone acknowledged.
        var highestSent: UInt64 = 0, highestAcknowledged: UInt64 = 0, windowViolations: [String] = []
        // Retention: the watch's copy is there until the CONFIRM, gone right after it.
        var removalSeenAfter: [Message] = []
        var confirmDelivered = false
        var uncheckedAcknowledged: [UInt64] = [], mostUnchecked = 0
        link.onSend = { side, message in
            if side == .b, case .accept(_, let offset) = message, offset > 0,
               offset > UInt64(phone.storage.temporary[recording.id]?.count ?? phone.storage.files[recording.fileName]?.count ?? 0) {
                uncheckedAcknowledged.append(offset)
            }
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
            mostUnchecked = max(mostUnchecked, phone.storage.pendingChecks)
            guard side == .a else { return }
            if case .confirm = message { confirmDelivered = true }
            if !watch.storage.removals.isEmpty && removalSeenAfter.isEmpty { removalSeenAfter.append(message) }
            if !confirmDelivered {
                #expect(watch.storage.removals.isEmpty && watch.storage.exists(recording.fileName),
                        "the watch let go of its copy before the phone's CONFIRM (after \(message.type))")
            }
        }
        link.start()
        #expect(runJudgingLater(link, phone.storage))
        #expect(link.closed.isEmpty, "\(link.closed)")
        #expect(windowViolations.isEmpty, "\(windowViolations)")
        #expect(uncheckedAcknowledged.isEmpty, "ACCEPTs beyond the bytes checked and written: \(uncheckedAcknowledged)")
        // Every ACCEPT after the first moves on: verdicts that came late are acknowledged once.
        let offsets = link.accepts(from: .b).map(\.offset)
        #expect(zip(offsets.dropFirst(), offsets.dropFirst(2)).allSatisfy { $0 < $1 }, "\(offsets)")
        #expect(!checksLater || size <= Int(Self.chunk) || mostUnchecked > 0, "the phone never held an unchecked chunk")

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
        #expect(link.offers(from: .a).first?.sha256 == SHA256.hash(bytes))
        #expect(link.accepts(from: .b).first?.offset == 0)
        let chunks = link.chunks(from: .a)
        #expect(chunks.count == (size + Int(Self.chunk) - 1) / Int(Self.chunk))
        #expect(chunks.map(\.offset) == chunks.indices.map { UInt64($0) * UInt64(Self.chunk) })
        // Each chunk carries the running digest: the SHA-256 of the file up to the chunk's end.
        #expect(chunks.allSatisfy { SHA256.hash(bytes[0..<(Int($0.offset) + $0.data.count)]) == $0.sha256 })
        #expect(chunks.last?.sha256 == SHA256.hash(bytes))
        #expect(link.accepts(from: .b).last?.offset == UInt64(size))
        #expect(link.confirms(from: .b).map(\.id) == [recording.id])
        #expect(link.confirms(from: .b).first?.sha256 == SHA256.hash(bytes))
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
        let again = SessionPair(a: watch.session(), b: phone.session())
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
        let link = SessionPair(a: watch.session(), b: phone.session())
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
        let link = SessionPair(a: watch.session(), b: phone.session())
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
        let link = SessionPair(a: watch.session(), b: phone.session())
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
        let again = SessionPair(a: watch.session(), b: phone.session())
        again.start()
        #expect(again.run())
        #expect(again.offers(from: .a).isEmpty)
        #expect(phone.storage.removals.isEmpty)
    }

    /// A CONFIRM that was lost on the way: the watch keeps its copy; the next session's OFFER is
    /// answered at once with a CONFIRM (the phone already holds the verified file). The watch
    /// counts the recording as confirmed by that phone, but keeps its copy: a CONFIRM for bytes
    /// the session did not deliver is only the peer's word.
    @Test func aLostConfirmIsAnsweredAgainButTheWatchKeepsItsCopy() throws {
        let watch = try TestNode(.watch, seed: 10)
        let phone = try TestNode(.phone, seed: 11)
        let bytes = randomBytes(40_000, seed: 12)
        let recording = try watch.attach(bytes, seed: 103)
        let first = SessionPair(a: watch.session(), b: phone.session())
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

        // The phone holds the verified file and confirms at once. That CONFIRM comes with no
        // bytes this session delivered, so it proves nothing about the phone's copy: the watch
        // stops offering it for the session, records nothing, and keeps its own.
        let second = SessionPair(a: watch.session(), b: phone.session())
        second.start()
        #expect(second.run())
        #expect(second.chunks(from: .a).isEmpty, "bytes the phone already verified were sent again")
        #expect(second.confirms(from: .b).map(\.id) == [recording.id])
        #expect(watch.storage.removals.isEmpty)
        #expect(try watch.replica.confirmations(id: recording.id).isEmpty)
        #expect(second.offers(from: .a).count == 1, "offered again in the same session")
        expectStored(watch, recording.fileName, bytes)
        expectStored(phone, recording.fileName, bytes)
        #expect(phone.storage.removals.isEmpty)
    }

    /// A CONFIRM whose checksum is not the recording's proves nothing (LifeAdmin §1.1 step 8).
    @Test func aConfirmWithTheWrongChecksumRemovesNothing() throws {
        let watch = try TestNode(.watch, seed: 13)
        let phone = try TestNode(.phone, seed: 14)
        let bytes = randomBytes(20_000, seed: 15)
        let recording = try watch.attach(bytes, seed: 104)
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.transform = { side, message, frame in
            guard side == .a, case .confirm(let id, let digest) = message else { return frame }
            var bytes = digest.bytes
            bytes[0] ^= 0x80
            return Message.confirm(recordingID: id, sha256: SHA256.Digest(bytes: bytes)).encoded()
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
            let link = senderDials ? SessionPair(a: sender.session(), b: receiver.session())
                                   : SessionPair(a: receiver.session(), b: sender.session())
            let senderSide: SessionPair.Side = senderDials ? .a : .b
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
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        let id = Identifier.make(role: .phone, random: SeededRandom(seed: 106))
        let bytes = randomBytes(5_000, seed: 25)
        link.inject(Message.offer(Offer(recordingID: id, fileName: id + ".m4a", mediaType: "audio/mp4", size: UInt64(bytes.count),
                                        chunkSize: Self.chunk, sha256: SHA256.hash(bytes))).encoded(), to: .a)
        link.inject(Message.chunk(Chunk(recordingID: id, offset: 0, sha256: SHA256.hash(bytes), data: bytes)).encoded(), to: .a)
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
        let link = SessionPair(a: watch.session(), b: phone.session())
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
        let again = SessionPair(a: watch.session(), b: phone.session())
        again.start()
        #expect(again.run())
        expectStored(phone, small.fileName, randomBytes(50_000, seed: 33))
        #expect(!phone.storage.exists(recording.fileName))
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }

    /// A file name is a base name: no '/', NUL or control characters, 1…255 bytes of UTF-8.
    @Test(arguments: ["../x", "../{id}.m4a", "{id}.m4a/../../x", "/{id}.m4a", "{id}.m4a{nul}", "{id}/.m4a", "", ".", "..",
                      "voice\u{1}.m4a", "voice\n.m4a", String(repeating: "é", count: 128)])
    func anOfferWithABadFileNameIsRefusedAndNothingWritten(pattern: String) throws {
        try offerRenamed(pattern, refusedWith: .badName)
    }

    /// A well-formed name, but not the one the signed metadata names.
    @Test(arguments: ["{other}.m4a", "{id}", "{id}.", "{id}.M4A", "{id}..m4a", "{id}.m4a.", "{id}.abcdefghijk", ".{id}.m4a",
                      String(repeating: "é", count: 127) + "a"])
    func anOfferNamingAnotherFileThanTheMetadataIsRefusedAndNothingWritten(pattern: String) throws {
        try offerRenamed(pattern, refusedWith: .metadataMismatch)
    }

    private func offerRenamed(_ pattern: String, refusedWith code: TransferFailure) throws {
        let watch = try TestNode(.watch, seed: 34)
        let phone = try TestNode(.phone, seed: 35)
        let bytes = randomBytes(9_000, seed: 36)
        let recording = try watch.attach(bytes, seed: 109)
        let other = Identifier.make(role: .watch, random: SeededRandom(seed: 110))
        let badName = pattern.replacingOccurrences(of: "{id}", with: recording.id).replacingOccurrences(of: "{other}", with: other)
            .replacingOccurrences(of: "{nul}", with: "\u{0}")
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.transform = { side, message, frame in
            guard side == .b, case .offer(var offer) = message else { return frame }
            offer.fileName = badName
            return Message.offer(offer).encoded()
        }
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        expectFailure(link, from: .b, recording.id, code)
        #expect(link.chunks(from: .a).isEmpty)
        expectNothingWritten(phone, recording)
        #expect(try phone.replica.recordingFile(id: recording.id) == nil)
        #expect(try phone.replica.recordingFile(id: other) == nil)
        try expectStillPending(watch, recording, bytes: bytes)
        try expectOnlyConfirmedWatchCopiesRemoved(watch)
        #expect(phone.storage.removals.isEmpty)
    }
}
