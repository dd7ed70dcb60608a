import LifeSync

/// The error cases of §6 not covered with framing and the handshake: each refused with the
/// spec's code, and a second client is served afterwards.
extension ConformanceCases {
    static let badInput: [ConformanceCase] = [
        ConformanceCase("2.4", "bad.vector-not-ascending", "a SYNC_REQUEST whose vector is not in ascending origin order is refused with ERROR malformed") { target in
            let origins = target.pair
            var payload: [UInt8] = [0, 2]
            for origin in origins.reversed() { payload += [0, UInt8(origin.utf8.count)] + Array(origin.utf8) + u64(1) }
            return try refusedInSession(target, rawFrame(type: MessageType.syncRequest.rawValue, payload), .malformed, "a SYNC_REQUEST with origins descending")
        },
        ConformanceCase("2.4", "bad.vector-seq-zero", "a CAUGHT_UP whose vector holds a sequence 0 is refused with ERROR malformed") { target in
            let origin = target.origin
            let payload: [UInt8] = [0, 1, 0, UInt8(origin.utf8.count)] + Array(origin.utf8) + u64(0)
            return try refusedInSession(target, rawFrame(type: MessageType.caughtUp.rawValue, payload), .malformed, "a CAUGHT_UP with sequence 0")
        },
        ConformanceCase("5.2.1", "bad.change-kind", "a change of kind 0x03 is refused with ERROR malformed") { target in
            try target.requireReceivesEntries()
            let origin = target.origin
            var frame = target.batch(1, [target.change(id: target.newEntryID(), origin: origin, sequence: target.sequences(origin, count: 1).lowerBound)])
            frame[kindOffset(in: frame)] = 0x03
            return try refusedInSession(target, frame, .malformed, "a change of kind 0x03")
        },
        ConformanceCase("5.2.1", "bad.delete-with-entry", "a delete carrying an entry is refused with ERROR malformed") { target in
            try target.requireReceivesEntries()
            let origin = target.origin
            var frame = target.batch(1, [target.change(id: target.newEntryID(), origin: origin, sequence: target.sequences(origin, count: 1).lowerBound)])
            frame[kindOffset(in: frame) + 1] = 0x01  // the deleted flag, on a change that carries its entry
            return try refusedInSession(target, frame, .malformed, "a delete with a non-empty entry")
        },
        ConformanceCase("2.1", "bad.hlc-ceiling", "a change stamped above the HLC ceiling (2^62 − 1) is refused with ERROR malformed") { target in
            try target.requireReceivesEntries()
            let origin = target.origin
            let change = target.change(id: target.newEntryID(), origin: origin, sequence: target.sequences(origin, count: 1).lowerBound,
                                       hlc: HLCTimestamp(rawValue: 1 << 62))
            return try refusedInSession(target, target.batch(1, [change]), .malformed, "a change with hlc 2^62")
        },
        ConformanceCase("5.2.1", "bad.vector-misses-own-write", "a change whose vector does not include the write itself is refused with ERROR invalid_change") { target in
            try target.requireReceivesEntries()
            let origin = target.origin, sequence = target.sequences(origin, count: 2).upperBound
            var change = target.change(id: target.newEntryID(), origin: origin, sequence: sequence)
            change.stamp.vector = VersionVector([(origin, sequence - 1)])
            return try refusedInSession(target, target.batch(1, [change]), .invalidChange, "a change \(origin):\(sequence) whose vector says \(origin):\(sequence - 1)")
        },
        ConformanceCase("7.3", "bad.batch-to-non-receiver", "a BATCH with changes to a node that does not set receives_entries is refused with ERROR unexpected_message") { target in
            guard !target.firstHello.capabilities.contains(.receivesEntries) else { throw ConformanceSkip("the target sets receives_entries") }
            let change = target.change(id: target.newEntryID(), origin: target.origin, sequence: target.sequences(target.origin, count: 1).lowerBound)
            return try refusedInSession(target, target.batch(1, [change]), .unexpectedMessage, "a BATCH to a node that receives no entries")
        },
        ConformanceCase("5.9", "bad.recording-message-uninvited", "an OFFER to a node whose HELLO does not offer receives_recordings is refused with ERROR unexpected_message") { target in
            guard !target.firstHello.capabilities.contains(.receivesRecordings) else { throw ConformanceSkip("the target sets receives_recordings") }
            let offer = Offer(recordingID: Identifier.make(role: target.runner.role, random: target.random), fileName: "a.m4a", mediaType: "audio/mp4",
                              size: 1, chunkSize: 1, sha256: SHA256.hash([0]))
            return try refusedInSession(target, Message.offer(offer).encoded(), .unexpectedMessage, "an OFFER to a node that takes no recordings")
        },
    ]

    /// Where the first change record starts in a BATCH frame of `ConformanceTarget.batch`:
    /// after the header, batch_id, the origin table and change_count.
    static func kindOffset(in frame: [UInt8]) -> Int {
        var at = 5 + 8
        let origins = Int(frame[at]) << 8 | Int(frame[at + 1])
        at += 2
        for _ in 0..<origins {
            let origin = Int(frame[at]) << 8 | Int(frame[at + 1])
            at += 2 + origin
            let node = Int(frame[at]) << 8 | Int(frame[at + 1])
            at += 2 + node + 1
        }
        return at + 4
    }
}
