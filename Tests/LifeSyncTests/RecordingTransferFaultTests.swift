import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

extension RecordingTransferTests {
    // MARK: Corruption, resume, full disk

    /// One bit flipped in one CHUNK on the wire: refused at that chunk, nothing confirmed, the
    /// verified prefix kept; the retry resumes from it and completes.
    /// `checksLater`: the phone checks chunks after more arrived (as the runtime does on a queue):
    /// the chunks behind the corrupt one are dropped unwritten.
    @Test(arguments: [0, 10, 24], [false, true])
    func aCorruptChunkIsRefusedAndTheRetryResumesFromTheVerifiedPrefix(corruptIndex: Int, checksLater: Bool) throws {
        let watch = try TestNode(.watch, seed: 40)
        let phone = try TestNode(.phone, seed: 41)
        phone.storage.defersChecks = checksLater
        let bytes = randomBytes(100_000, seed: 42)  // 25 chunks, the last one short
        let recording = try watch.attach(bytes, seed: 111)
        let corruptOffset = UInt64(corruptIndex) * UInt64(Self.chunk)
        let link = SessionPair(a: watch.session(), b: phone.session(), now: 1_000)
        link.damageChunks(to: .b, times: 1) { $0.offset == corruptOffset }
        link.start()
        #expect(runJudgingLater(link, phone.storage))
        #expect(link.damagedChunks == 1)
        #expect(link.closed.isEmpty, "\(link.closed)")

        // Refused at that very chunk; nothing after it was taken.
        expectFailure(link, from: .b, recording.id, .corruptChunk)
        #expect(link.failures(from: .b).first?.message.contains("\(corruptOffset)") == true)
        // Checked later, the last chunks before it may be refused unacknowledged (kept all the same).
        let acknowledged = link.accepts(from: .b).map(\.offset).max() ?? 0
        #expect(checksLater ? acknowledged <= corruptOffset : acknowledged == corruptOffset)
        #expect(link.confirms(from: .b).isEmpty)
        #expect(phone.storage.files.isEmpty)
        let kept = phone.storage.temporary[recording.id] ?? []
        #expect(kept.count == Int(corruptOffset) && kept == Array(bytes[0..<Int(corruptOffset)]), "the verified prefix was not kept")
        #expect(try phone.replica.recordingFile(id: recording.id)?.state == .partial)
        try expectStillPending(watch, recording, bytes: bytes)
        // Not offered again at once: after the retry delay, or when the fallback timer says so.
        #expect(link.offers(from: .a).count == 1)
        link.enqueue(link.a.tick(now: link.now + 1), from: .a)
        #expect(runJudgingLater(link, phone.storage))
        #expect(link.offers(from: .a).count == 1)

        let before = link.sent.count
        link.a.forgetFailedRecordings()
        link.enqueue(link.a.replicaChanged(now: link.now), from: .a)
        #expect(runJudgingLater(link, phone.storage))
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
        #expect(link.confirms(from: .b).map(\.sha256) == [SHA256.hash(bytes)])
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
        let link = SessionPair(a: watch.session(), b: phone.session(), now: 1_000)
        link.damageChunks(to: .b, times: 1) { $0.offset == UInt64(Self.chunk) * 3 }
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
        let link = SessionPair(a: watch.session(), b: phone.session(), now: 1_000)
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

    /// The sender's own copy no longer matches the SHA-256 it was attached with (bit rot): the
    /// sender notices at its last chunk, refuses to finish, and keeps the recording pending.
    @Test func aSenderCopyThatNoLongerMatchesIsNeverConfirmed() throws {
        let watch = try TestNode(.watch, seed: 60)
        let phone = try TestNode(.phone, seed: 61)
        let bytes = randomBytes(50_000, seed: 62)
        var other = bytes
        other[25_000] ^= 0x01
        let recording = try watch.attach(bytes, seed: 114, sha256: SHA256.hash(other))
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        expectFailure(link, from: .a, recording.id, .storageFailure)
        #expect(link.confirms(from: .b).isEmpty)
        #expect(phone.storage.files.isEmpty, "files: \(phone.storage.files.keys.sorted())")
        #expect(try phone.replica.recordingFile(id: recording.id)?.state != .present)
        #expect(try watch.replica.confirmations(id: recording.id).isEmpty)
        expectStored(watch, recording.fileName, bytes)
        #expect(watch.storage.removals.isEmpty)
        #expect(phone.storage.removals.isEmpty)
    }

    /// A peer whose chunks are each consistent but whose whole file is not what it offered: the
    /// receiver compares the whole-file hash with the OFFER's, refuses, and keeps nothing.
    @Test func aWholeFileChecksumMismatchIsRefusedAndNothingKept() throws {
        let watch = try TestNode(.watch, seed: 63)
        let phone = try TestNode(.phone, seed: 64)
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        let id = Identifier.make(role: .watch, random: SeededRandom(seed: 115))
        let bytes = randomBytes(20_000, seed: 65)
        var other = bytes
        other[10_000] ^= 0x01
        // The recording's metadata names `other`; the bytes sent are `bytes`, each chunk
        // consistent with itself.
        let origin = Identifier.uuidV4(random: SeededRandom(seed: 116))
        let metadata = try Recording(id: id, fileName: id + ".m4a", size: UInt64(bytes.count), sha256: SHA256.hash(other), mediaType: "audio/mp4",
                                     entryID: nil, originNode: watch.replica.identity.nodeID, createdAt: Timestamp(millisecondsSince1970: 0))
            .signed(by: TestKeys.key(for: watch.replica.identity.nodeID))
        try phone.replica.apply([Change(id: id, stamp: VersionStamp(hlc: .zero, origin: origin, sequence: 1, vector: VersionVector([(origin, 1)]), deleted: false),
                                        recording: metadata)], through: VersionVector([(origin, 1)]))
        link.inject(Message.offer(Offer(recordingID: id, fileName: id + ".m4a", mediaType: "audio/mp4", size: UInt64(bytes.count),
                                        chunkSize: UInt32(bytes.count), sha256: SHA256.hash(other))).encoded(), to: .b)
        link.inject(Message.chunk(Chunk(recordingID: id, offset: 0, sha256: SHA256.hash(bytes), data: bytes)).encoded(), to: .b)
        #expect(link.run())
        #expect(link.closed.isEmpty, "\(link.closed)")
        let failures = link.failures(from: .b)
        #expect(failures.map(\.id) == [id] && failures.map(\.code) == [TransferFailure.checksumMismatch.rawValue], "\(failures)")
        #expect(link.confirms(from: .b).isEmpty)
        #expect(phone.storage.files.isEmpty && phone.storage.temporary.isEmpty)
        #expect(try phone.replica.recordingFile(id: id)?.state != .present)
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
        let first = SessionPair(a: watch.session(), b: phone.session())
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

        let second = SessionPair(a: watch.session(), b: phone.session())
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

        let fromPhone = SessionPair(a: phone.session(), b: mac.session())
        let fromOtherMac = SessionPair(a: otherMac.session(), b: mac.session())
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
        #expect(SHA256.hash(stored) == recording.sha256,
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
        // "I have it" is believed for the session, not recorded: only delivered bytes are proof.
        #expect(try otherMac.replica.confirmations(id: recording.id).isEmpty)
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
                      DeleteCase(onReceiver: true, afterChunks: 6), DeleteCase(onReceiver: true, afterChunks: 22)], [false, true])
    func aRecordingDeletedWhileItIsReceivedLeavesNoBytesBehind(_ deletion: DeleteCase, checksLater: Bool) throws {
        let phone = try TestNode(.phone, seed: 90)
        let mac = try TestNode(.mac, seed: 91)
        mac.storage.defersChecks = checksLater  // the file discarded under chunks waiting for their check
        let bytes = randomBytes(100_000, seed: 92)  // 25 chunks
        let recording = try phone.attach(bytes, seed: 118)
        let link = SessionPair(a: phone.session(), b: mac.session())
        link.start()
        var reached = false
        for _ in 0..<1_000 where !reached {
            link.run { side, message in
                if side == .b, case .chunk(let chunk) = message { reached = chunk.offset == UInt64(Self.chunk) * UInt64(deletion.afterChunks - 1) }
                return reached
            }
            if reached { break }
            // Checked later: the mac acknowledges (and the phone sends on) once a check comes in.
            mac.storage.judgePendingChunks(1)
            link.enqueue(link.b.tick(now: link.now), from: .b)
        }
        #expect(reached)
        #expect(mac.storage.temporarySize(recording.id) == UInt64(Self.chunk) * UInt64(deletion.afterChunks))

        // What `lifesync delete` does on that node, then the node's push of the local write.
        let node = deletion.onReceiver ? mac : phone
        let fileName = try node.replica.deleteRecording(id: recording.id)
        if node.storage.exists(fileName) { try node.storage.remove(fileName) }
        node.storage.discardTemporary(recording.id)
        if let file = try node.replica.recordingFile(id: recording.id) {
            try node.replica.setRecordingFile(id: recording.id, state: .removed, sha256: file.sha256, received: 0)
        }
        let side: SessionPair.Side = deletion.onReceiver ? .b : .a
        link.enqueue(link.session(side).replicaChanged(now: link.now), from: side)
        #expect(runJudgingLater(link, mac.storage))
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
    /// hashes it again, and the first chunk's running digest (which covers the prefix) catches
    /// it at once; the prefix is dropped, and the next attempt starts over and completes.
    @Test func aResumedPrefixThatRottedIsCaughtAtTheFirstResumedChunk() throws {
        let watch = try TestNode(.watch, seed: 73)
        let phone = try TestNode(.phone, seed: 74)
        let bytes = randomBytes(60_000, seed: 75)
        let recording = try watch.attach(bytes, seed: 116)
        let first = SessionPair(a: watch.session(), b: phone.session())
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

        let second = SessionPair(a: watch.session(), b: phone.session(), now: 1_000)
        second.start()
        #expect(second.run())
        #expect(second.accepts(from: .b).first?.offset == UInt64(Self.chunk) * 7)
        expectFailure(second, from: .b, recording.id, .corruptChunk)
        #expect(second.failures(from: .b).first?.message.contains("chunk at \(UInt64(Self.chunk) * 7) ") == true,
                "the rot was not caught at the first resumed chunk: \(second.failures(from: .b))")
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
