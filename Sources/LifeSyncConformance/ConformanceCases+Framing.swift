import LifeSync

/// Framing and its bounds (§3, §3.1): each refusal with the spec's ERROR code, and the node
/// serves the next client afterwards.
extension ConformanceCases {
    /// A frame with any type byte and payload, `length` as given or as it should be.
    static func rawFrame(type: UInt8, _ payload: [UInt8], length: UInt32? = nil) -> [UInt8] {
        let length = length ?? UInt32(payload.count + 1)
        return (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * UInt32($0))) } + [type] + payload
    }

    static func u64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }

    /// A refusal case after the handshake: `bytes` in an open session, then ERROR `code`, then a
    /// second client served.
    static func refusedInSession(_ target: ConformanceTarget, _ bytes: [UInt8], _ code: ErrorCode, _ what: String) throws -> ConformanceOutcome {
        let (connection, _) = try target.open()
        defer { connection.close() }
        _ = connection.send(bytes)
        try target.expectError(code, on: connection, after: what)
        try target.expectStillServing(after: what)
        return .pass(nil)
    }

    static let framing: [ConformanceCase] = [
        ConformanceCase("3", "framing.split-and-joined", "frames split over many writes and several frames in one write are reassembled by length") { target in
            let connection = try target.connect()
            defer { connection.close() }
            let hello = ConformanceTarget.hello(target.runner, capabilities: [.seals, .receivesEntries], vector: target.knownVector).encoded()
            let ping = Message.ping(nonce: 31).encoded(), second = Message.ping(nonce: 32).encoded()
            // The HELLO in three pieces, its last piece in one write with a PING; then a PING split in its header.
            _ = connection.send(Array(hello[0..<3]))
            _ = connection.send(Array(hello[3..<20]))
            _ = connection.send(Array(hello[20...]) + ping + Array(second[0..<2]))
            _ = connection.send(Array(second[2...]))
            _ = try target.expectHello(on: connection)
            var seen: [UInt64] = []
            try target.waitFor("PONG 31 and PONG 32", on: connection) { message -> Bool? in
                if case .pong(let nonce) = message { seen.append(nonce) }
                return seen.count == 2 ? true : nil
            }
            guard seen == [31, 32] else { throw ConformanceFailure("PONGs \(seen), expected [31, 32] in order (§7.1: frames are processed in order)", connection) }
            return .pass(nil)
        },
        ConformanceCase("3", "framing.first-frame-too-large", "a first frame longer than 1 MiB is refused with ERROR frame_too_large as soon as its length arrives") { target in
            let connection = try target.connect()
            defer { connection.close() }
            // Only the header: the target must not wait for the payload to decide.
            _ = connection.send(rawFrame(type: MessageType.hello.rawValue, [], length: UInt32(Message.Limits.maximumHandshakeFrameLength + 1)))
            try target.expectError(.frameTooLarge, on: connection, after: "a first frame of length 1 MiB + 1 (header only)")
            try target.expectStillServing(after: "a first frame over 1 MiB")
            return .pass(nil)
        },
        ConformanceCase("3", "framing.too-large", "a frame longer than 8 MiB in an open session is refused with ERROR frame_too_large as soon as its length arrives") { target in
            try refusedInSession(target, rawFrame(type: MessageType.batch.rawValue, [], length: UInt32(Framing.maximumFrameLength + 1)),
                                 .frameTooLarge, "a frame header of length 8 MiB + 1")
        },
        ConformanceCase("3", "framing.length-zero", "a frame of length 0 is refused with ERROR malformed") { target in
            try refusedInSession(target, [0, 0, 0, 0], .malformed, "a frame of length 0")
        },
        ConformanceCase("4", "framing.unknown-type", "a whole frame of type 0x09 is refused with ERROR unknown_type") { target in
            try refusedInSession(target, rawFrame(type: 0x09, u64(1)), .unknownType, "a frame of type 0x09")
        },
        ConformanceCase("3", "framing.trailing-bytes", "a PING with a byte after its nonce is refused with ERROR malformed") { target in
            try refusedInSession(target, rawFrame(type: MessageType.ping.rawValue, u64(1) + [0]), .malformed, "a 9-byte PING payload")
        },
        ConformanceCase("3", "framing.truncated-payload", "a PING whose payload ends inside the nonce is refused with ERROR malformed") { target in
            try refusedInSession(target, rawFrame(type: MessageType.ping.rawValue, [0, 0, 0]), .malformed, "a 3-byte PING payload")
        },
    ]
}
