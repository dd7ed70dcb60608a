import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// Signed recording metadata (PROTOCOL.md §5.9.7): the origin signs at attach, the signature
/// travels through relays, and a receiver refuses metadata its origin did not sign — so a relay
/// can substitute neither the bytes (their hash is signed) nor the metadata.
@Suite struct RecordingSignatureTests {
    static let phoneKey = ReplicaFixtures.signer
    static let relayKey: NodeKey = { try! NodeKey.generate(nodeID: "mac_00000000-0000-4000-8000-000000000001") }()

    /// A phone with one signed recording, and the change that carries it.
    static func phoneWithRecording(seed: UInt64 = 1) throws -> (phone: Replica, change: Change) {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: seed)
        let id = Identifier.make(role: .phone, random: SeededRandom(seed: seed + 100))
        let bytes = [UInt8](repeating: 3, count: 64)
        try phone.addRecording(Recording(id: id, fileName: id + ".m4a", size: 64, sha256: SHA256.hash(bytes), mediaType: "audio/mp4",
                                         entryID: nil, originNode: phone.identity.nodeID, createdAt: phone.now), signedBy: phoneKey)
        let change = try #require(try phone.changes(after: VersionVector()).first { $0.kind == .recording })
        return (phone, change)
    }

    static func apply(_ change: Change, to receiver: Replica, from sender: Replica) throws -> ApplyOutcome {
        try receiver.apply([change], through: try sender.replicaVector())
    }

    static func forgedError(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch ReplicaError.forged(let reason) { return reason } catch { return "unexpected: \(error)" }
    }

    // MARK: - The scheme

    @Test func theNodeKeySignsAndTheVerifierChecksEveryByte() throws {
        let message = Array("lifesync".utf8)
        let signature = try Self.phoneKey.sign(message)
        let verifier = ECDSAP256Verifier()
        #expect(signature.count == 64)
        #expect(Self.phoneKey.publicKey.count == 91)
        #expect(SHA256.hash(Self.phoneKey.publicKey) == Self.phoneKey.fingerprint)
        #expect(verifier.isValid(signature: signature, of: message, publicKey: Self.phoneKey.publicKey))
        for i in [0, 31, 32, 63] {
            var bad = signature
            bad[i] ^= 0x01
            #expect(!verifier.isValid(signature: bad, of: message, publicKey: Self.phoneKey.publicKey), "signature byte \(i)")
        }
        #expect(!verifier.isValid(signature: signature, of: Array("lifesynC".utf8), publicKey: Self.phoneKey.publicKey))
        #expect(!verifier.isValid(signature: signature, of: message, publicKey: Self.relayKey.publicKey))
    }

    @Test func malformedKeysAndSignaturesAreFalseNeverATrap() throws {
        let message = Array("m".utf8)
        let signature = try Self.phoneKey.sign(message)
        let key = Self.phoneKey.publicKey
        let verifier = ECDSAP256Verifier()
        var offCurve = key
        offCurve[90] ^= 0x01  // the point's last byte: no longer on P-256
        var otherAlgorithm = key
        otherAlgorithm[20] ^= 0x01  // inside the curve OID
        for bad in [[], Array(key.prefix(90)), key + [0], [UInt8](repeating: 0, count: 91), offCurve, otherAlgorithm] {
            #expect(!verifier.isValid(signature: signature, of: message, publicKey: bad))
        }
        for bad in [[], Array(signature.prefix(63)), [UInt8](repeating: 0, count: 64), [UInt8](repeating: 0xFF, count: 64)] {
            #expect(!verifier.isValid(signature: bad, of: message, publicKey: key))
        }
    }

    @Test func metadataFromTheWireMustCarryAKeyAndASignatureInLowercaseHex() throws {
        let (_, change) = try Self.phoneWithRecording()
        let recording = try #require(change.recording)
        let json = recording.json
        #expect(try Recording.validated(from: json) == recording)
        guard case .object(let members) = json else { Issue.record("metadata is an object"); return }
        for field in ["origin_key", "signature"] {
            do {
                _ = try Recording.validated(from: .object(members.filter { $0.0 != field }))
                Issue.record("metadata without \(field) was taken")
            } catch {
                #expect(error.field == field && error.reason.contains("required"), "\(error)")
            }
            let upper = members.map { $0.0 == field ? ($0.0, JSONValue.string(Hex.encode(field == "signature" ? recording.signature! : recording.originKey!).uppercased())) : $0 }
            #expect(throws: ValidationError.self) { try Recording.validated(from: .object(upper)) }
        }
    }

    // MARK: - What a receiver refuses

    @Test func aRelayCannotSwapTheHashUnderTheOriginsSignature() throws {
        let (phone, change) = try Self.phoneWithRecording()
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 2)
        var forged = change
        forged.recording!.sha256 = SHA256.hash([1, 2, 3])
        let reason = Self.forgedError { _ = try Self.apply(forged, to: mac, from: phone) }
        #expect(reason?.contains("not valid for the key it carries") == true, "\(reason ?? "accepted")")
        #expect(try mac.recordingStatuses().isEmpty, "nothing stored")
        #expect(try Self.apply(change, to: mac, from: phone).applied == 1, "the genuine metadata is taken")
    }

    @Test func aRelayReSigningInTheOriginsNameIsRefusedByAPinAndByAnEarlierBinding() throws {
        let (phone, change) = try Self.phoneWithRecording()
        var forged = change
        forged.recording!.sha256 = SHA256.hash([1, 2, 3])
        forged.recording = try forged.recording!.signed(by: Self.relayKey)
        // A receiver that trusts the phone knows its key.
        let pinned = try ReplicaFixtures.replica(role: .mac, seed: 3)
        try pinned.trust(TrustedPeer(nodeID: phone.identity.nodeID, role: .phone, fingerprint: Self.phoneKey.fingerprint, trustedAt: pinned.now))
        let reason = Self.forgedError { _ = try Self.apply(forged, to: pinned, from: phone) }
        #expect(reason?.contains("is trusted with key") == true, "\(reason ?? "accepted")")
        #expect(try pinned.recordingStatuses().isEmpty)
        // One that learned the phone's key from an earlier recording of it.
        let bound = try ReplicaFixtures.replica(role: .mac, seed: 4)
        _ = try Self.apply(change, to: bound, from: phone)
        let id = Identifier.make(role: .phone, random: SeededRandom(seed: 999))
        try phone.addRecording(Recording(id: id, fileName: id + ".m4a", size: 1, sha256: SHA256.hash([1]), mediaType: "audio/mp4",
                                         entryID: nil, originNode: phone.identity.nodeID, createdAt: phone.now), signedBy: Self.phoneKey)
        var second = try #require(try phone.changes(after: VersionVector()).first { $0.id == id })
        second.recording!.sha256 = SHA256.hash([2])
        second.recording = try second.recording!.signed(by: Self.relayKey)
        let secondReason = Self.forgedError { _ = try Self.apply(second, to: bound, from: phone) }
        #expect(try bound.recording(id: id) == nil)
        #expect(secondReason?.contains("another key than origin") == true, "\(secondReason ?? "accepted")")
    }

    @Test func signedMetadataNeverChangesAfterAttach() throws {
        let (phone, change) = try Self.phoneWithRecording()
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 5)
        _ = try Self.apply(change, to: mac, from: phone)
        // Signed by the origin's own key, other content, a later version written elsewhere (a
        // buggy origin, or its key in the wrong hands): still refused.
        let writer = "relay-incarnation"
        var altered = change
        altered.recording!.sha256 = SHA256.hash([9])
        altered.recording = try altered.recording!.signed(by: Self.phoneKey)
        let vector = change.stamp.vector.joined(with: VersionVector([(writer, 1)]))
        altered.stamp = VersionStamp(hlc: HLCTimestamp(rawValue: change.stamp.hlc.rawValue + (1 << 16)), origin: writer,
                                     sequence: 1, vector: vector, deleted: false)
        let through = try phone.replicaVector().joined(with: VersionVector([(writer, 1)]))
        let reason = Self.forgedError { _ = try mac.apply([altered], through: through) }
        #expect(reason?.contains("differs from the signed metadata held") == true, "\(reason ?? "accepted")")
        #expect(try mac.recording(id: change.id)?.recording.sha256 == change.recording!.sha256)
    }

    @Test func noPeerMayNameThisNodeAsTheOriginOfARecording() throws {
        let (phone, change) = try Self.phoneWithRecording()
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 6)
        var claimed = change
        claimed.recording!.originNode = mac.identity.nodeID
        claimed.recording = try claimed.recording!.signed(by: Self.relayKey)
        let reason = Self.forgedError { _ = try Self.apply(claimed, to: mac, from: phone) }
        // The mac's own key is bound since it took one: the relay's key is not it.
        #expect(reason?.contains("another key than origin \(mac.identity.nodeID)") == true, "\(reason ?? "accepted")")
    }

    // MARK: - Rows stored before recordings were signed

    @Test func unsignedRowsAreNotSentUntilTheirOriginSignsThem() throws {
        let (phone, change) = try Self.phoneWithRecording()
        try phone.database.run("UPDATE recordings SET origin_key = NULL, signature = NULL WHERE id = ?", [.text(change.id)])
        let before = try phone.encodedChanges(origin: phone.identity.incarnation, after: 0, limit: 100)
        #expect(before.first { $0.id == change.id }?.isDamaged == true, "an unsigned row is left out, not sent to be refused")
        #expect(try phone.adoptSigningKey(Self.phoneKey) == 1)
        #expect(try phone.adoptSigningKey(Self.phoneKey) == 0, "signed once")
        let after = try #require(try phone.recording(id: change.id)?.recording)
        #expect(after.hasValidSignature(ECDSAP256Verifier()))
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 7)
        let resent = try #require(try phone.changes(after: VersionVector()).first { $0.id == change.id })
        #expect(try Self.apply(resent, to: mac, from: phone).applied == 1)
    }
}

/// What a session does with forged metadata and with a peer of protocol version 1.
@Suite struct SignedSessionTests {
    /// A relay (a trusted, buggy or compromised phone) forwards a watch's recording with the
    /// hash swapped and re-signed: the mac refuses the batch with `invalid_change`, stores nothing
    /// of it, and would take no bytes for it (no metadata, no OFFER accepted).
    @Test func aBatchCarryingForgedMetadataIsRefusedAndNothingOfItStored() throws {
        let mac = try TestNode(.mac, seed: 81)
        let relay = FakePeer(facing: mac.session(), role: .phone, seed: 82)
        relay.hello(capabilities: [.seals, .receivesEntries, .recordings, .receivesRecordings])
        let watchKey = TestKeys.key(for: "watch_2b7d9a1e-5c3f-4e8a-9d6b-1f0e2a3c4b5d")
        try mac.replica.trust(TrustedPeer(nodeID: "watch_2b7d9a1e-5c3f-4e8a-9d6b-1f0e2a3c4b5d", role: .watch,
                                          fingerprint: watchKey.fingerprint, trustedAt: mac.replica.now))
        let id = Identifier.make(role: .watch, random: SeededRandom(seed: 83))
        let genuine = try Recording(id: id, fileName: id + ".m4a", size: 4, sha256: SHA256.hash([1, 2, 3, 4]), mediaType: "audio/mp4",
                                    entryID: nil, originNode: "watch_2b7d9a1e-5c3f-4e8a-9d6b-1f0e2a3c4b5d",
                                    createdAt: Timestamp(millisecondsSince1970: ReplicaFixtures.epoch)).signed(by: watchKey)
        var forged = genuine
        forged.sha256 = SHA256.hash([6, 6, 6, 6])
        forged = try forged.signed(by: RecordingSignatureTests.relayKey)
        let stamp = VersionStamp(hlc: HLCTimestamp(milliseconds: ReplicaFixtures.epoch, counter: 0), origin: relay.incarnation, sequence: 1,
                                 vector: VersionVector([(relay.incarnation, 1)]), deleted: false)
        relay.send(.batch(Batch(id: 1, origins: [], changes: [Change(id: id, stamp: stamp, recording: forged)],
                                through: VersionVector([(relay.incarnation, 1)]))))
        #expect(relay.errors == [.invalidChange], "\(relay.replies)")
        #expect(relay.closed)
        #expect(try mac.replica.recording(id: id) == nil)
        #expect(try mac.replica.replicaVector()[relay.incarnation] == 0, "the batch's watermark was not committed either")
    }

    @Test func aPeerOfProtocolVersionOneIsRefusedWithTheVersionNamed() throws {
        let phone = try TestNode(.phone, seed: 84)
        let old = FakePeer(facing: phone.session(), role: .mac, seed: 85)
        old.send(.hello(Hello(minimumVersion: 1, maximumVersion: 1, nodeID: old.nodeID, role: .mac, incarnation: old.incarnation,
                              capabilities: [.seals, .receivesEntries], clock: .zero, vector: VersionVector())))
        #expect(old.errors == [.versionUnsupported])
        let text = old.replies.compactMap { if case .error(_, let message) = $0 { return message }; return nil }.first ?? ""
        #expect(text.contains("protocol version 1 is not supported") && text.contains("version 2"), "\(text)")
        #expect(old.closed)
    }
}

/// `Protocol/vectors/recording_signature.json`: what another implementation checks its signing
/// and verifying against.
@Suite struct RecordingSignatureVectorTests {
    @Test func theVectorsVerifyAsTheySay() throws {
        let url = ProtocolVectorTests.directory.appendingPathComponent("recording_signature.json")
        let document = try JSONValue.parse(try String(contentsOf: url, encoding: .utf8))
        guard case .array(let vectors)? = document["vectors"] else { Issue.record("no vectors"); return }
        #expect(vectors.count >= 5)
        var valid = 0
        for vector in vectors {
            guard case .string(let name)? = vector["name"], let metadata = vector["metadata"], case .bool(let expected)? = vector["valid"] else {
                Issue.record("a vector lacks name, metadata or valid"); continue
            }
            let recording = try? Recording.validated(from: metadata)
            let verifies = recording?.hasValidSignature(ECDSAP256Verifier()) ?? false
            #expect(verifies == expected, "\(name)")
            guard expected, let recording else {
                if case .string(let error)? = vector["error"] { #expect(error == "invalid_change", "\(name)") } else { Issue.record("\(name): no error") }
                continue
            }
            valid += 1
            guard case .string(let message)? = vector["message_hex"], case .string(let fingerprint)? = vector["fingerprint"] else {
                Issue.record("\(name): a valid vector carries message_hex and fingerprint"); continue
            }
            #expect(Hex.encode(RecordingSignature.message(for: recording)) == message, "\(name): the signed bytes")
            #expect(SHA256.hash(recording.originKey!).hex == fingerprint, "\(name): the pin")
            #expect(recording.json.canonicalText == metadata.canonicalText, "\(name): re-encodes exactly")
        }
        #expect(valid >= 1)
    }
}
