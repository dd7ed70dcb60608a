import Foundation
@testable import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// `Protocol/vectors/session_transcript.json` (format in its README): two whole sessions between
/// a phone and a mac, every frame both sides exchanged, made by the real session machines on
/// fixed seeds and clocks. Regenerated on every run and compared byte for byte with the file,
/// so the published transcript is what the code does today. To rewrite the file after a
/// deliberate change, run this suite with `LIFESYNC_WRITE_VECTORS=1`.
@Suite struct SessionTranscriptTests {
    static let file = ProtocolVectorTests.directory.appendingPathComponent("session_transcript.json")

    @Test func theTranscriptIsWhatTheSessionsSendToday() throws {
        let generated = try SessionTranscript.generate().prettyText + "\n"
        if ProcessInfo.processInfo.environment["LIFESYNC_WRITE_VECTORS"] == "1" {
            try generated.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let published = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(published == generated, "session_transcript.json differs from what the sessions send (LIFESYNC_WRITE_VECTORS=1 rewrites it)")
    }

    /// Each frame's hex is one frame that decodes to its "message" and re-encodes to the same
    /// bytes; and the story holds: the first session is cut after one chunk, the second resumes
    /// at that chunk's end and ends with a CONFIRM of the offered hash.
    @Test func everyFrameDecodesToItsMeaningAndTheStoryHolds() throws {
        let document = try JSONValue.parse(try String(contentsOf: Self.file, encoding: .utf8))
        guard case .array(let sessions)? = document["sessions"], sessions.count == 2 else {
            Issue.record("session_transcript.json: expected two sessions")
            return
        }
        var perSession: [[(from: String, lost: Bool, message: Message)]] = []
        for session in sessions {
            guard case .array(let frames)? = session["frames"] else { throw MessageJSON.FormatError("a session without frames") }
            var decoded: [(from: String, lost: Bool, message: Message)] = []
            for frame in frames {
                guard case .string(let from)? = frame["from"], case .string(let hex)? = frame["hex"], let bytes = Hex.decode(hex),
                      let expected = frame["message"] else { throw MessageJSON.FormatError("a frame lacks from, hex or message") }
                guard let message = SessionPair.decode(bytes) else {
                    Issue.record("\(hex.prefix(40))… is not one valid frame")
                    continue
                }
                #expect(MessageJSON.json(message) == expected, "decoded \(MessageJSON.json(message).canonicalText)")
                #expect(message.encoded() == bytes, "\(message.type) re-encodes differently")
                #expect(try MessageJSON.message(from: expected) == message)
                decoded.append((from, frame["lost"] == .bool(true), message))
            }
            perSession.append(decoded)
        }
        let first = perSession[0], second = perSession[1]
        #expect(first.prefix(2).map(\.message.type) == [.hello, .hello] && second.prefix(2).map(\.message.type) == [.hello, .hello])
        #expect(first.contains { $0.from == "phone" && $0.message.type == .batch } && first.contains { $0.from == "mac" && $0.message.type == .batch },
                "the first session pushes and pulls")
        #expect(first.contains { $0.lost }, "the first session is cut with frames in transit")
        #expect(!first.contains { $0.message.type == .confirm } && !second.contains { $0.lost })
        let offers = second.compactMap { if case .offer(let offer) = $0.message { return offer }; return nil }
        let accepts = second.compactMap { if case .accept(_, let offset) = $0.message { return offset }; return nil }
        let confirms = second.compactMap { if case .confirm(_, let digest) = $0.message { return digest }; return nil }
        let offer = try #require(offers.first)
        #expect(accepts.first == UInt64(offer.chunkSize), "the second session resumes after the one chunk that arrived")
        #expect(accepts.last == offer.size)
        #expect(confirms == [offer.sha256])
    }
}

/// The scenario of the transcript. Fixed seeds, a manual clock, and signatures that come out the
/// same on every run: ECDSA draws a fresh nonce per signature, so both nodes sign with a stand-in
/// of the same shape (a 91-byte key, a 64-byte signature made by hashing), which both replicas
/// check with its own verifier. The transcript shows where keys and signatures travel; the
/// vectors that verify with real ECDSA are `seal.json` and `recording_signature.json`.
enum SessionTranscript {
    static let chunkSize: UInt32 = 4
    static let recordingBytes: [UInt8] = Array("ten bytes!".utf8)

    struct StandInSigner: RecordingSigner {
        let publicKey: [UInt8]

        init(_ name: String) {
            let block = SHA256.hash(Array("transcript key \(name)".utf8)).bytes
            publicKey = Array((block + block + block).prefix(RecordingSignature.publicKeyLength))
        }

        func sign(_ message: [UInt8]) throws -> [UInt8] { StandInVerifier.signature(of: message, by: publicKey) }
    }

    struct StandInVerifier: SignatureVerifier {
        static func signature(of message: [UInt8], by key: [UInt8]) -> [UInt8] {
            SHA256.hash(key + message).bytes + SHA256.hash(message + key).bytes
        }

        func isValid(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
            signature == Self.signature(of: message, by: publicKey)
        }
    }

    static func generate() throws -> JSONValue {
        let phone = try TestNode(.phone, seed: 601) { $0.transfer.chunkSize = chunkSize }
        let mac = try TestNode(.mac, seed: 602) { $0.transfer.chunkSize = chunkSize }
        for node in [phone, mac] {
            node.replica.signatureVerifier = StandInVerifier()
            try node.replica.adoptSigningKey(StandInSigner(node.replica.identity.nodeID))
        }
        try phone.replica.add(json: ReplicaFixtures.entryJSON(text: "pushed by the phone"))
        try mac.replica.add(json: ReplicaFixtures.entryJSON(text: "pulled from the mac"))
        let id = Identifier.make(role: .phone, random: SeededRandom(seed: 603))
        let recording = Recording(id: id, fileName: "morning walk.m4a", size: UInt64(recordingBytes.count), sha256: SHA256.hash(recordingBytes),
                                  mediaType: "audio/mp4", entryID: nil, originNode: phone.replica.identity.nodeID, createdAt: phone.replica.now)
        phone.storage.put(recording.storageName, recordingBytes)
        try phone.replica.addRecording(recording, signedBy: StandInSigner(phone.replica.identity.nodeID))

        // Session 1: the phone dials; both push and pull; the recording's first chunk arrives
        // and the connection is cut with the rest in transit.
        let first = SessionPair(a: phone.session(now: 0), b: mac.session(now: 0), now: 0)
        var firstFrames: [JSONValue] = []
        first.transform = { side, message, bytes in
            firstFrames.append(frameJSON(from: side.other, bytes: bytes, message: message, lost: false))
            return bytes
        }
        first.start()
        _ = first.run { side, message in side == .b && message.type == .chunk }
        for side in [SessionPair.Side.a, .b] {
            let sent = first.sent.filter { $0.from == side }
            let arrived = first.delivered.filter { $0.to == side.other }.count
            for lost in sent.dropFirst(arrived) {
                firstFrames.append(frameJSON(from: side, bytes: lost.message.encoded(), message: lost.message, lost: true))
            }
        }
        first.drop()

        // Session 2, a minute later: nothing left to sync but the recording, resumed.
        let second = SessionPair(a: phone.session(now: 60_000), b: mac.session(now: 60_000), now: 60_000)
        var secondFrames: [JSONValue] = []
        second.transform = { side, message, bytes in
            secondFrames.append(frameJSON(from: side.other, bytes: bytes, message: message, lost: false))
            return bytes
        }
        second.start()
        _ = second.run()
        let stored = try mac.replica.recordingFile(id: id)?.state
        precondition(stored == .present, "the transcript ends with the recording stored")

        return .object([
            ("description", .string("Generated by Tests/LifeSyncTests/SessionTranscriptTests.swift from the real session machines (fixed seeds and clock). A phone dials a mac; each holds one entry the other lacks, and the phone holds a 10-byte recording sent in 4-byte chunks. Session 1 pushes, pulls, relays the recording's metadata and starts its transfer; it is cut after the mac took the first chunk (frames marked lost were sent and never arrived). Session 2 finds the replicas in sync and resumes the transfer at byte 4. Each BATCH carries its sender's seal over its changes (PROTOCOL.md §5.2.5). Keys and signatures here are deterministic stand-ins of the real sizes (ECDSA signatures differ on every run): seal.json and recording_signature.json hold ones that verify.")),
            ("phone", nodeJSON(phone.replica)),
            ("mac", nodeJSON(mac.replica)),
            ("recording", .object([("id", .string(id)), ("data", .string(Hex.encode(recordingBytes))), ("chunk_size", .number(Double(chunkSize)))])),
            ("sessions", .array([
                .object([("name", .string("first")), ("frames", .array(firstFrames))]),
                .object([("name", .string("resumed")), ("frames", .array(secondFrames))]),
            ])),
        ])
    }

    /// The dialler (`a`) is the phone.
    static func frameJSON(from side: SessionPair.Side, bytes: [UInt8], message: Message, lost: Bool) -> JSONValue {
        var members: [(String, JSONValue)] = [("from", .string(side == .a ? "phone" : "mac")), ("hex", .string(Hex.encode(bytes))),
                                              ("message", MessageJSON.json(message))]
        if lost { members.append(("lost", .bool(true))) }
        return .object(members)
    }

    static func nodeJSON(_ replica: Replica) -> JSONValue {
        .object([("node_id", .string(replica.identity.nodeID)), ("incarnation", .string(replica.identity.incarnation))])
    }
}
