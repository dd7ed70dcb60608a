import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// `Protocol/vectors/seal.json` (PROTOCOL.md §5.2.5): a BATCH sealed with a real ECDSA key, the
/// write digests and the signed message an implementation must compute from it, and altered
/// copies a receiver must refuse. ECDSA signs with a fresh nonce, so the file is written only on
/// demand (`LIFESYNC_WRITE_VECTORS=1`); every run checks what it holds against the reference
/// decoder, digest, verifier and a receiving session that pins the origin's key.
@Suite struct SealVectorTests {
    static let file = ProtocolVectorTests.directory.appendingPathComponent("seal.json")
    static let origin = "5b0c2d1e-3f4a-4b5c-8d6e-7f8091a2b3c4"
    static let owner = "phone_6f1c2a3b-4d5e-4f60-8a71-92b3c4d5e6f7"
    static let stranger = "mac_7c9e6679-7425-40de-944b-e07fc1f90ae7"
    static let receiverSeed: UInt64 = 4_242

    /// Three writes of the phone's origin: a new entry, a partial edit of it, a delete of another.
    static func changes() -> [EncodedChange] {
        func entry(_ id: String, _ text: String) -> [UInt8] {
            Array(#"{"category":"note","data":{"text":"\#(text)"},"device_id":"\#(owner)","id":"\#(id)","recorded_at":"2026-11-22T08:30:05.250Z","source":"iphone","timestamp":"2026-11-22T08:30:00.000Z"}"#.utf8)
        }
        let a = "phone_9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f", b = "phone_1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
        func stamp(_ seq: UInt64, _ ms: Int64, deleted: Bool = false) -> VersionStamp {
            VersionStamp(hlc: HLCTimestamp(milliseconds: ms, counter: 0), origin: origin, sequence: seq, vector: VersionVector([(origin, seq)]), deleted: deleted)
        }
        return [EncodedChange(id: a, stamp: stamp(1, 1_795_335_005_250), payload: entry(a, "Calm morning")),
                EncodedChange(id: b, stamp: stamp(2, 1_795_335_006_000, deleted: true), payload: []),
                EncodedChange(id: a, stamp: stamp(3, 1_795_335_007_000), payload: entry(a, "Calm morning, then rain"), fields: FieldMask([.text]))]
    }

    static func frame(_ changes: [EncodedChange], seals: [Seal], owner: String = owner) -> [UInt8] {
        Message.encodedBatch(id: 1, origins: [OriginInfo(origin: origin, nodeID: owner, role: Identifier.role(of: owner)!)], changes: changes,
                             through: VersionVector([(origin, 3)]), seals: seals)
    }

    /// Incarnations bound to a node (PROTOCOL.md §2.3.1): node IDs and nonces, each giving one
    /// incarnation that no other node is bound to.
    static let boundExamples: [(String, [UInt8])] = [
        (owner, [0x00, 0x00, 0x40]),
        (stranger, [0xA7, 0x3C, 0x4E]),
    ]

    /// A random source whose next draw gives `nonce` as a bound incarnation's bytes 4–6.
    final class FixedNonce: RandomSource {
        let draw: UInt64
        init(_ nonce: [UInt8]) { draw = nonce.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) } }
        func nextUInt64() -> UInt64 { draw }
    }

    @Test func theBoundIncarnationVectorsHold() throws {
        let document = try JSONValue.parse(try String(contentsOf: Self.file, encoding: .utf8))
        guard case .array(let examples)? = document["bound_incarnation"], examples.count == Self.boundExamples.count else {
            Issue.record("seal.json lacks its \(Self.boundExamples.count) bound_incarnation examples")
            return
        }
        let nodes = examples.compactMap { example -> String? in
            guard case .string(let nodeID)? = example["node_id"] else { return nil }
            return nodeID
        }
        #expect(nodes.count == examples.count)
        for (example, nodeID) in zip(examples, nodes) {
            guard case .string(let nonceHex)? = example["nonce_hex"], let nonce = Hex.decode(nonceHex),
                  case .string(let incarnation)? = example["incarnation"] else { Issue.record("a bound_incarnation example lacks a field"); continue }
            #expect(Identifier.incarnation(boundTo: nodeID, random: FixedNonce(nonce)) == incarnation)
            #expect(Identifier.isBound(incarnation) && Identifier.incarnation(incarnation, isBoundTo: nodeID))
            for other in nodes where other != nodeID {
                #expect(!Identifier.incarnation(incarnation, isBoundTo: other), "\(incarnation) is bound to one node only")
            }
        }
        #expect(!Identifier.isBound(Self.origin), "the sealed frames' origin predates keys: it carries no mark")
    }

    /// The vectors, signed now with fresh keys.
    static func generate() throws -> JSONValue {
        let key = try NodeKey.generate(nodeID: owner), other = try NodeKey.generate(nodeID: stranger)
        let changes = changes()
        let seal = try Seal.sealing(changes, as: owner, signer: key)
        var altered = changes
        altered[2].payload = Array(String(decoding: altered[2].payload, as: UTF8.self).replacingOccurrences(of: "rain", with: "snow").utf8)
        let partial = try Seal.sealing(Array(changes.prefix(2)), as: owner, signer: key)
        var badKey = Array(frame(changes, seals: seal))
        func refused(_ name: String, _ description: String, _ bytes: [UInt8], _ error: String) -> JSONValue {
            .object([("name", .string(name)), ("description", .string(description)), ("hex", .string(Hex.encode(bytes))), ("error", .string(error))])
        }
        // The key length field of the one seal: 91 → 90, the frame otherwise intact.
        let keyLength = badKey.count - 64 - (4 + 3 * 40) - 91 - 2
        badKey[keyLength + 1] = 90
        return .object([
            ("description", .string("Sealed BATCH frames (PROTOCOL.md §5.2.5), checked by Tests/LifeSyncTests/SealVectorTests.swift. The receiver pins `fingerprint` for `owner` (the trust store of §1.2). `valid` verifies with real ECDSA P-256; `digests` are the write digests of its changes in order, `message_hex` the bytes its one seal signs. Each refused vector differs from it in one way. `bound_incarnation`: incarnations bound to a node (§2.3.1), each from its node ID and nonce. ECDSA signatures differ on every signing: regenerate with LIFESYNC_WRITE_VECTORS=1, never by hand.")),
            ("owner", .string(owner)),
            ("fingerprint", .string(key.fingerprint.hex)),
            ("bound_incarnation", .array(Self.boundExamples.map { nodeID, nonce in
                .object([("node_id", .string(nodeID)), ("nonce_hex", .string(Hex.encode(nonce))),
                         ("incarnation", .string(Identifier.incarnation(boundTo: nodeID, random: FixedNonce(nonce))))])
            })),
            ("valid", .object([
                ("name", .string("seal_valid")),
                ("hex", .string(Hex.encode(frame(changes, seals: seal)))),
                ("digests", .array(changes.map { .string($0.digest.hex) })),
                ("message_hex", .string(Hex.encode(seal[0].message))),
            ])),
            ("refused", .array([
                refused("seal_altered_content", "the third change's text altered after sealing: its digest is not the member's", frame(altered, seals: seal), "forged_change"),
                refused("seal_missing", "the same changes with no seal section", frame(changes, seals: []), "forged_change"),
                refused("seal_not_member", "the seal names writes 1 and 2 only; write 3 travels unvouched", frame(changes, seals: partial), "forged_change"),
                refused("seal_other_key", "sealed as the owner, with a key that is not its pin", frame(changes, seals: try Seal.sealing(changes, as: owner, signer: other)), "forged_change"),
                refused("seal_other_node", "sealed by another node, whose own key it is, over the owner's origin, after the receiver took seal_valid (whose seal makes the owner the origin's)", frame(changes, seals: try Seal.sealing(changes, as: stranger, signer: other)), "forged_change"),
                refused("seal_key_length", "the seal's key length says 90 (a P-256 key is 91 bytes)", badKey, "malformed"),
            ])),
        ])
    }

    /// What a receiver that pins `fingerprint` for `owner` answers to `bytes` from the owner.
    /// `first`: a frame the receiver takes before (its writes are counted in `stored`).
    static func receive(_ bytes: [UInt8], pin fingerprint: SHA256.Digest, after first: [UInt8]? = nil) throws -> (acked: Bool, error: ErrorCode?, stored: Int) {
        let mac = try ReplicaFixtures.replica(role: .mac, seed: receiverSeed)
        try mac.trust(TrustedPeer(nodeID: owner, role: .phone, fingerprint: fingerprint, trustedAt: mac.now))
        let session = SyncSession(replica: mac, configuration: .init(), now: 0)
        _ = session.start(now: 0)
        var actions = session.receive(Message.hello(Hello(nodeID: owner, role: .phone, incarnation: origin, capabilities: [.seals, .receivesEntries],
                                                          clock: .zero, vector: VersionVector())).encoded(), now: 1)
        var ackCount = 0
        if let first {
            for case .send(let frame) in session.receive(first, now: 2) where frame.count > 4 && frame[4] == MessageType.ack.rawValue { ackCount += 1 }
            guard ackCount == 1 else { return (false, nil, -1) }
        }
        actions += session.receive(bytes, now: 3)
        var acked = false, error: ErrorCode?
        for case .send(let frame) in actions {
            var decoder = FrameDecoder()
            for decoded in try decoder.feed(frame) {
                switch try Message.decode(type: decoded.type, payload: decoded.payload) {
                case .ack: acked = true
                case .error(let code, _): error = ErrorCode(rawValue: code)
                default: break
                }
            }
        }
        return (acked, error, try mac.liveEntryCount())
    }

    @Test func theSealVectorsHold() throws {
        if ProcessInfo.processInfo.environment["LIFESYNC_WRITE_VECTORS"] == "1" {
            try (try Self.generate()).canonicalText.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let document = try JSONValue.parse(try String(contentsOf: Self.file, encoding: .utf8))
        guard case .string(let pinHex)? = document["fingerprint"], let pin = SHA256.Digest(hex: pinHex),
              case .string(let validHex)? = document["valid"]?["hex"], let valid = Hex.decode(validHex),
              case .array(let digests)? = document["valid"]?["digests"], case .string(let messageHex)? = document["valid"]?["message_hex"],
              case .array(let refused)? = document["refused"] else {
            Issue.record("seal.json lacks fingerprint, valid or refused")
            return
        }
        // The valid frame: what it decodes to, its digests, the signed bytes, the signature.
        guard case .batch(let batch)? = SessionPair.decode(valid) else { Issue.record("seal_valid is not one BATCH"); return }
        #expect(batch.changes.map(\.encoded) == Self.changes(), "seal_valid carries the three writes of the generator")
        #expect(batch.changes.map { JSONValue.string($0.digest.hex) } == digests)
        let seal = try #require(batch.seals.first)
        #expect(batch.seals.count == 1 && Hex.encode(seal.message) == messageHex)
        #expect(SHA256.hash(seal.publicKey) == pin && seal.hasValidSignature(ECDSAP256Verifier()))
        let accepted = try Self.receive(valid, pin: pin)
        #expect(accepted.acked && accepted.error == nil && accepted.stored == 1, "\(accepted)")
        // Each refused frame: the error it names, and nothing stored.
        #expect(refused.count == 6)
        for vector in refused {
            guard case .string(let name)? = vector["name"], case .string(let hex)? = vector["hex"], let bytes = Hex.decode(hex),
                  case .string(let error)? = vector["error"] else { Issue.record("a refused vector lacks name, hex or error"); continue }
            let afterValid = name == "seal_other_node"
            let outcome = try Self.receive(bytes, pin: pin, after: afterValid ? valid : nil)
            #expect(!outcome.acked && outcome.error?.description == error && outcome.stored == (afterValid ? 1 : 0), "\(name): \(outcome)")
        }
    }
}
