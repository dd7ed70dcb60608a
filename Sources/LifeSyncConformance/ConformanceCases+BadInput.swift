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
        ConformanceCase("3.1", "bad.sequence-ceiling", "a change whose seq is 2^53, one past the ceiling 2^53 − 1, is refused with ERROR malformed") { target in
            try target.requireReceivesEntries()
            let change = target.change(id: target.newEntryID(), origin: target.origin, sequence: 1 << 53)
            return try refusedInSession(target, target.batch(1, [change]), .malformed, "a change with seq 2^53")
        },
        ConformanceCase("3.1", "bad.entry-over-content-bound", "an entry whose canonical encoding is 262 145 bytes, one past the content bound, is refused with ERROR malformed on its length") { target in
            try target.requireReceivesEntries()
            let origin = target.origin
            var change = target.change(id: target.newEntryID(), origin: origin, sequence: target.sequences(origin, count: 1).lowerBound)
            change.payload = overContentBound(target, id: change.id)
            return try refusedInSession(target, target.batch(1, [change]), .malformed, "an entry of \(change.payload.count) bytes")
        },
    ]

    /// The content bound of §3.1: 262 144 bytes of canonical encoding.
    static let contentBound = 262_144

    /// A canonical entry one byte past the content bound that breaks no other rule: its text is
    /// within 65 536 bytes, but U+0001 escapes to six bytes (§5.2.3 says that is how an entry
    /// outgrows the bound), padded with letters to the exact length.
    static func overContentBound(_ target: ConformanceTarget, id: String) -> [UInt8] {
        let base = target.entryJSON(id: id, text: "")
        let marker = Array("\"text\":\"\"".utf8)
        let at = (0...(base.count - marker.count)).first { Array(base[$0..<($0 + marker.count)]) == marker }! + marker.count - 1
        let need = contentBound + 1 - base.count
        let text = Array(String(repeating: "\\u0001", count: need / 6).utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: need % 6)
        let entry = Array(base[..<at]) + text + Array(base[at...])
        precondition(entry.count == contentBound + 1 && need / 6 + need % 6 <= 65_536, "one byte past the bound, text within its rule")
        return entry
    }

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
