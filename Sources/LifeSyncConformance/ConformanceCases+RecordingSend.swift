import Glibc
import LifeSync

/// The runner as the sender of a recording (§5.9): it attaches a small file of its own origin,
/// signs the metadata with its node key (the key the target pins for it, §5.9.7), delivers the
/// metadata in a BATCH and offers the bytes. Skipped when the target's HELLO does not take
/// recordings.
extension ConformanceCases {
    /// The runner's HELLO for sending: `recordings` without `receives_recordings`, so the target
    /// offers nothing of its own back and the case reads only answers to its own transfer.
    static let sendingCapabilities: Capabilities = [.seals, .receivesEntries, .recordings]
    static let sentChunkSize: UInt32 = 1_000

    /// A recording the target has never seen: fresh bytes (so no earlier run's verified file or
    /// temporary prefix matches them), metadata signed by the runner's key, and the change that
    /// carries it under the runner's origin.
    static func ownRecording(_ target: ConformanceTarget, size: Int) throws -> (Recording, EncodedChange, [UInt8]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        while bytes.count < size {
            let word = target.random.nextUInt64()
            bytes += (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * UInt64($0))) }
        }
        bytes.removeLast(bytes.count - size)
        let origin = target.origin, sequence = target.sequences(origin, count: 1).lowerBound
        let recording = try Recording(id: Identifier.make(role: target.runner.role, random: target.random), fileName: "conformance.bin",
                                      size: UInt64(size), sha256: SHA256.hash(bytes), mediaType: "application/octet-stream", entryID: nil,
                                      originNode: target.runner.nodeID, createdAt: Timestamp(millisecondsSince1970: target.wallClock.nowMilliseconds()))
            .signed(by: target.key)
        let metadata = EncodedChange(id: recording.id, kind: .recording,
                                     stamp: VersionStamp(hlc: target.now, origin: origin, sequence: sequence, vector: VersionVector([(origin, sequence)]), deleted: false),
                                     payload: Array(recording.json.canonicalText.utf8))
        return (recording, metadata, bytes)
    }

    static func offer(of recording: Recording) -> Message {
        .offer(Offer(recordingID: recording.id, fileName: recording.fileName, mediaType: recording.mediaType,
                     size: recording.size, chunkSize: sentChunkSize, sha256: recording.sha256))
    }

    /// The target's first ACCEPT of `recording`; a FAILURE is a failure of the case, except
    /// `not_accepted` (7), which is returned as nil: the target still holds a transfer of it
    /// in a session it has not yet seen closed.
    static func firstAccept(of recording: Recording, on connection: ProbeConnection, _ target: ConformanceTarget) throws -> UInt64? {
        try target.waitFor("ACCEPT of the OFFER of \(recording.id)", on: connection) { message -> UInt64?? in
            if case .failure(recording.id, let code, let text) = message {
                if code == TransferFailure.notAccepted.rawValue { return .some(nil) }
                throw ConformanceFailure("the OFFER of a recording whose metadata it acknowledged was refused: FAILURE \(code) \"\(text)\"", connection)
            }
            if case .accept(recording.id, let offset) = message { return .some(offset) }
            return nil
        }
    }

    /// Sends the chunks of `bytes` from `offset` on, one at a time, each acknowledged by ACCEPT
    /// at its end before the next, up to `end`. Returns the bytes sent.
    @discardableResult
    static func sendChunks(_ recording: Recording, _ bytes: [UInt8], from offset: Int, to end: Int,
                           on connection: ProbeConnection, _ target: ConformanceTarget) throws -> Int {
        let hash = SHA256()
        hash.update(bytes[0..<offset])  // the running digest covers the file from byte 0 (§5.9.3)
        var at = offset
        while at < end {
            let upTo = min(at + Int(sentChunkSize), end)
            hash.update(bytes[at..<upTo])
            _ = connection.send(.chunk(Chunk(recordingID: recording.id, offset: UInt64(at), sha256: hash.digestSoFar(), data: bytes[at..<upTo])))
            try target.waitFor("ACCEPT \(upTo) after the CHUNK at \(at)", on: connection) { message -> Bool? in
                if case .failure(recording.id, let code, let text) = message {
                    throw ConformanceFailure("a good CHUNK at \(at) was refused: FAILURE \(code) \"\(text)\"", connection)
                }
                if case .accept(recording.id, let acked) = message, acked >= UInt64(upTo) {
                    guard acked == UInt64(upTo) else { throw ConformanceFailure("ACCEPT \(acked) past the \(upTo) bytes sent", connection) }
                    return true
                }
                return nil
            }
            at = upTo
        }
        return end - offset
    }

    /// The CONFIRM that ends a transfer: it must carry the file's SHA-256 (§5.9 step 6a).
    static func expectConfirm(_ recording: Recording, on connection: ProbeConnection, _ target: ConformanceTarget) throws {
        let digest = try target.waitFor("CONFIRM of \(recording.id)", on: connection) { message -> SHA256.Digest? in
            if case .failure(recording.id, let code, let text) = message {
                throw ConformanceFailure("after the whole file, FAILURE \(code) \"\(text)\" instead of CONFIRM", connection)
            }
            if case .confirm(recording.id, let digest) = message { return digest }
            return nil
        }
        guard digest == recording.sha256 else {
            throw ConformanceFailure("CONFIRM with \(digest.hex); the file hashes to \(recording.sha256.hex) (§5.9 step 6a)", connection)
        }
    }

    static let recordingSend: [ConformanceCase] = [
        ConformanceCase("5.9", "recordings.send-confirmed", "a recording the runner attached and signed, its metadata acknowledged, is ACCEPTed from 0, every CHUNK acknowledged, and CONFIRMed with the file's SHA-256") { target in
            try requireRecordings(target, receiving: true)
            try target.requireReceivesEntries()
            let (recording, metadata, bytes) = try ownRecording(target, size: 4_500)
            let (connection, _) = try target.open(capabilities: sendingCapabilities)
            defer { connection.close() }
            try target.push([metadata], on: connection)
            _ = connection.send(offer(of: recording))
            guard let offset = try firstAccept(of: recording, on: connection, target) else {
                throw ConformanceFailure("FAILURE not_accepted for a recording no other session is sending", connection)
            }
            guard offset == 0 else { throw ConformanceFailure("ACCEPT at \(offset) for a recording never sent before (§5.9 step 2)", connection) }
            try sendChunks(recording, bytes, from: 0, to: bytes.count, on: connection, target)
            try expectConfirm(recording, on: connection, target)
            return .pass("\(bytes.count) bytes in \((bytes.count + Int(sentChunkSize) - 1) / Int(sentChunkSize)) chunks")
        },
        ConformanceCase("5.9.2", "recordings.resume-from-verified-chunk", "a transfer cut after two verified chunks, offered again in a new session, is ACCEPTed at the end of the second chunk; the rest completes with CONFIRM") { target in
            try requireRecordings(target, receiving: true)
            try target.requireReceivesEntries()
            let (recording, metadata, bytes) = try ownRecording(target, size: 4_500)
            let verified = 2 * Int(sentChunkSize)
            let (first, _) = try target.open(capabilities: sendingCapabilities)
            try target.push([metadata], on: first)
            _ = first.send(offer(of: recording))
            guard try firstAccept(of: recording, on: first, target) == 0 else {
                throw ConformanceFailure("the first OFFER of a new recording was not ACCEPTed at 0 (§5.9 step 2)", first)
            }
            var sent = try sendChunks(recording, bytes, from: 0, to: verified, on: first, target)
            first.cut()
            // The target may not have seen the cut yet and still count the transfer as under way
            // in that session: it answers not_accepted (§5.9.8), and a new session tries again.
            for _ in 0..<50 {
                let (second, _) = try target.open(capabilities: sendingCapabilities)
                defer { second.close() }
                _ = second.send(offer(of: recording))
                guard let offset = try firstAccept(of: recording, on: second, target) else {
                    usleep(100_000)
                    continue
                }
                guard offset == UInt64(verified) else {
                    throw ConformanceFailure("ACCEPT at \(offset) after a cut; \(verified) bytes were verified in whole chunks (§5.9.2, §5.9.8 Resuming)", second)
                }
                sent += try sendChunks(recording, bytes, from: verified, to: bytes.count, on: second, target)
                try expectConfirm(recording, on: second, target)
                return .pass("\(sent) bytes sent in all for a file of \(bytes.count)")
            }
            throw ConformanceFailure("the target answered FAILURE not_accepted to 50 OFFERs after the first session was cut")
        },
        ConformanceCase("5.9.9", "recordings.want-what-it-lacks", "a target that sets capability bit 5, given a recording's metadata and not its bytes, names it in a WANT after the runner's CAUGHT_UP") { target in
            try requireRecordings(target, receiving: true)
            try target.requireReceivesEntries()
            guard target.firstHello.capabilities.contains(.wants) else { throw ConformanceSkip("the target's HELLO does not set capability bit 5 `wants` (§5.9.9)") }
            let (recording, metadata, _) = try ownRecording(target, size: 1_500)
            let (connection, _) = try target.open(capabilities: sendingCapabilities.union(.wants))
            defer { connection.close() }
            try target.push([metadata], on: connection)
            _ = connection.send(.caughtUp(vector: VersionVector([(metadata.stamp.origin, metadata.stamp.sequence)])))
            let named = try target.waitFor("a WANT naming \(recording.id)", on: connection) { message -> Int? in
                guard case .want(let ids) = message, ids.contains(recording.id) else { return nil }
                return ids.count
            }
            return .pass("a WANT of \(named) recording(s), this one among them")
        },
    ]
}
