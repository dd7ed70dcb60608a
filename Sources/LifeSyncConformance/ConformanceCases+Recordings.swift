import LifeSync

/// Recording transfer (§5.9), when the target's HELLO offers it: skipped, not failed, otherwise.
extension ConformanceCases {
    static let recordingCapabilities: Capabilities = [.seals, .receivesEntries, .recordings, .receivesRecordings]
    /// The largest recording the runner fetches in full to check it.
    static let largestFetched: UInt64 = 64 << 20

    static func requireRecordings(_ target: ConformanceTarget, receiving: Bool) throws {
        let capabilities = target.firstHello.capabilities
        guard capabilities.contains(.recordings) else { throw ConformanceSkip("the target's HELLO does not offer recordings (§5.1)") }
        if receiving, !capabilities.contains(.receivesRecordings) { throw ConformanceSkip("the target's HELLO does not set receives_recordings") }
    }

    static let recordings: [ConformanceCase] = [
        ConformanceCase("5.9.3", "recordings.receive-offered", "an offered recording arrives from offset 0 in order, every chunk's running digest verifies, and the file hashes to the OFFER's sha256") { target in
            try requireRecordings(target, receiving: false)
            let (connection, _) = try target.open(vector: try target.refreshVector(), capabilities: recordingCapabilities)
            defer { connection.close() }
            var offered: Offer?
            for _ in 0..<10_000 where offered == nil {
                switch connection.next() {
                case .message(.offer(let offer)): offered = offer
                case .message(.error), .closed, .undecodable: throw ConformanceFailure("waiting for an OFFER, the session ended", connection)
                case .silent: throw ConformanceSkip("the target offered no recording within \(target.timeout) s (attach one to it to test §5.9)")
                case .message: continue
                }
            }
            guard let offer = offered else { throw ConformanceSkip("no OFFER among the target's first frames") }
            guard offer.size <= largestFetched else { throw ConformanceSkip("the recording offered is \(offer.size) bytes, more than the runner fetches") }
            _ = connection.send(.accept(recordingID: offer.recordingID, offset: 0))
            let hash = SHA256()
            var received: UInt64 = 0, chunks = 0
            while received < offer.size {
                let chunk = try target.waitFor("the CHUNK at offset \(received) of \(offer.recordingID)", on: connection) { message -> Chunk? in
                    if case .chunk(let chunk) = message, chunk.recordingID == offer.recordingID { return chunk }
                    return nil
                }
                guard chunk.offset == received else { throw ConformanceFailure("CHUNK at offset \(chunk.offset) where \(received) was due (§5.9 step 3)", connection) }
                guard chunk.data.count <= Int(offer.chunkSize), !chunk.data.isEmpty else {
                    throw ConformanceFailure("CHUNK of \(chunk.data.count) bytes; the OFFER's chunk size is \(offer.chunkSize)", connection)
                }
                hash.update(chunk.data)
                received += UInt64(chunk.data.count)
                chunks += 1
                guard hash.digestSoFar() == chunk.sha256 else {
                    throw ConformanceFailure("the running digest of the CHUNK ending at \(received) is \(chunk.sha256.hex), the bytes give \(hash.digestSoFar().hex) (§5.9.3)", connection)
                }
                guard received <= offer.size else { throw ConformanceFailure("chunks run past the OFFER's size \(offer.size)", connection) }
                _ = connection.send(.accept(recordingID: offer.recordingID, offset: received))
            }
            let digest = hash.finalize()
            guard digest == offer.sha256 else { throw ConformanceFailure("the file hashes to \(digest.hex), the OFFER said \(offer.sha256.hex)", connection) }
            // No CONFIRM: the runner keeps nothing, and CONFIRM says "verified and stored" (§5.9.4).
            // Without it the target offers the recording again to the next run.
            return .pass("\(offer.size) bytes in \(chunks) chunks")
        },
        ConformanceCase("5.9", "recordings.corrupt-chunk", "a CHUNK whose running digest does not match its bytes is answered with FAILURE corrupt_chunk (3)") { target in
            try requireRecordings(target, receiving: true)
            try target.requireReceivesEntries()
            let (recording, metadata, bytes) = try ownRecording(target, size: 3_000)
            let (connection, _) = try target.open(capabilities: recordingCapabilities)
            defer { connection.close() }
            try target.push([metadata], on: connection)
            _ = connection.send(.offer(Offer(recordingID: recording.id, fileName: recording.fileName, mediaType: recording.mediaType,
                                             size: recording.size, chunkSize: 1_000, sha256: recording.sha256)))
            let offset = try target.waitFor("ACCEPT of the OFFER", on: connection) { message -> UInt64? in
                if case .failure(_, let code, let text) = message { throw ConformanceFailure("the OFFER of recording metadata it holds was refused: FAILURE \(code) \"\(text)\"", connection) }
                if case .accept(recording.id, let offset) = message { return offset }
                return nil
            }
            guard offset == 0 else { throw ConformanceFailure("ACCEPT at \(offset) for a recording never sent before", connection) }
            let first = Array(bytes[0..<1_000]), second = Array(bytes[1_000..<2_000])
            _ = connection.send(.chunk(Chunk(recordingID: recording.id, offset: 0, sha256: SHA256.hash(first), data: first)))
            try target.waitFor("ACCEPT 1000 after a good chunk", on: connection) { message -> Bool? in
                if case .failure(_, let code, let text) = message { throw ConformanceFailure("a good chunk was refused: FAILURE \(code) \"\(text)\"", connection) }
                if case .accept(recording.id, 1_000) = message { return true }
                return nil
            }
            // The second chunk's digest is that of the first chunk alone: wrong for bytes 0…1999.
            _ = connection.send(.chunk(Chunk(recordingID: recording.id, offset: 1_000, sha256: SHA256.hash(first), data: second)))
            let code = try target.waitFor("FAILURE after a corrupt chunk", on: connection) { message -> UInt16? in
                if case .failure(recording.id, let code, _) = message { return code }
                if case .accept(recording.id, let offset) = message, offset > 1_000 {
                    throw ConformanceFailure("a chunk with a wrong running digest was acknowledged (ACCEPT \(offset))", connection)
                }
                return nil
            }
            guard code == TransferFailure.corruptChunk.rawValue else {
                throw ConformanceFailure("FAILURE code \(code) for a corrupt chunk; §5.9 names corrupt_chunk (3)", connection)
            }
            try target.expectStillServing(after: "a corrupt chunk")
            return .pass(nil)
        },
    ]
}
