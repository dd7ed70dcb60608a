import Foundation
@testable import LifeSync
import Testing
import TestSupport

/// Conformance of the wire codec with the published test vectors (`Protocol/vectors/`, format in
/// its README): every valid vector decodes to its "message" and re-encodes to the same bytes;
/// every malformed one is refused with its error code.
@Suite struct ProtocolVectorTests {
    /// One vector of a file.
    struct Vector: CustomStringConvertible {
        var file: String
        var name: String
        var bytes: [UInt8]
        var message: JSONValue?
        var error: String?

        var description: String { "\(file):\(name)" }
    }

    /// The outcome of reading a vector's bytes as a peer would.
    enum Outcome {
        case messages([Message], leftover: Int)
        case refused(WireError)
    }

    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/vectors")

    static let messageFiles = MessageType.allCases.map { MessageJSON.name(of: $0) }

    static func load(_ file: String) throws -> [Vector] {
        let url = directory.appendingPathComponent(file + ".json")
        let text = try String(contentsOf: url, encoding: .utf8)
        let document = try JSONValue.parse(text)
        guard case .array(let items)? = document["vectors"] else { throw MessageJSON.FormatError("\(file): no \"vectors\" array") }
        return try items.map { item in
            guard case .string(let name)? = item["name"], case .string(let hex)? = item["hex"],
                  case .string? = item["description"] else {
                throw MessageJSON.FormatError("\(file): a vector lacks name, description or hex")
            }
            guard hex == hex.lowercased(), let bytes = Hex.decode(hex), !hex.contains(" ") else {
                throw MessageJSON.FormatError("\(file):\(name): hex must be lowercase hex digits")
            }
            var error: String?
            if case .string(let code)? = item["error"] { error = code }
            return Vector(file: file, name: name, bytes: bytes, message: item["message"], error: error)
        }
    }

    /// Splits the bytes into frames with `FrameDecoder` and decodes each; the first refusal wins.
    static func read(_ bytes: [UInt8], byteByByte: Bool = false) -> Outcome {
        var decoder = FrameDecoder()
        var messages: [Message] = []
        do {
            let pieces: [[UInt8]] = byteByByte ? bytes.map { [$0] } : [bytes]
            for piece in pieces {
                for frame in try decoder.feed(piece) {
                    messages.append(try Message.decode(type: frame.type, payload: frame.payload))
                }
            }
        } catch {
            return .refused(error)
        }
        return .messages(messages, leftover: decoder.bufferedCount)
    }

    @Test(arguments: messageFiles)
    func validVectorsDecodeAndReencodeExactly(file: String) throws {
        let vectors = try Self.load(file)
        #expect(!vectors.isEmpty, "\(file).json has no vectors")
        for vector in vectors {
            #expect(vector.error == nil, "\(vector): a message file holds only valid vectors")
            guard let expected = vector.message else {
                Issue.record("\(vector): no \"message\"")
                continue
            }
            for byteByByte in [false, true] {
                guard case .messages(let messages, let leftover) = Self.read(vector.bytes, byteByByte: byteByByte) else {
                    Issue.record("\(vector): refused: \(Self.read(vector.bytes))")
                    continue
                }
                #expect(leftover == 0, "\(vector): \(leftover) bytes after the frame")
                guard messages.count == 1, let message = messages.first else {
                    Issue.record("\(vector): \(messages.count) frames, expected 1")
                    continue
                }
                #expect(MessageJSON.name(of: message.type) == file, "\(vector): a \(message.type) in \(file).json")
                #expect(MessageJSON.json(message) == expected, "\(vector): decoded \(MessageJSON.json(message).canonicalText)")
                #expect(message.encoded() == vector.bytes, "\(vector): re-encoding differs")
                let parsed = try MessageJSON.message(from: expected)
                #expect(parsed == message, "\(vector): the \"message\" JSON describes another message")
                #expect(parsed.encoded() == vector.bytes, "\(vector): encoding the \"message\" JSON differs")
            }
        }
    }

    @Test func malformedVectorsAreRefusedWithTheirCode() throws {
        let vectors = try Self.load("malformed")
        #expect(vectors.count >= 16)
        for vector in vectors {
            #expect(vector.message == nil, "\(vector): a malformed vector has no \"message\"")
            guard let code = vector.error else {
                Issue.record("\(vector): no \"error\"")
                continue
            }
            for byteByByte in [false, true] {
                switch Self.read(vector.bytes, byteByByte: byteByByte) {
                case .refused(let error):
                    #expect(error.code.description == code, "\(vector): refused as \(error), expected \(code)")
                case .messages(let messages, let leftover):
                    Issue.record("\(vector): accepted (\(messages.count) messages, \(leftover) bytes left), expected \(code)")
                }
            }
        }
    }

    @Test func everyMessageTypeHasAVector() throws {
        var covered = Set<UInt8>()
        for file in Self.messageFiles {
            for vector in try Self.load(file) {
                if case .messages(let messages, _) = Self.read(vector.bytes) {
                    for message in messages { covered.insert(message.type.rawValue) }
                }
            }
        }
        for type in MessageType.allCases {
            #expect(covered.contains(type.rawValue), "no valid vector for \(type) (0x\(Hex.encode([type.rawValue])))")
        }
    }

    @Test func theRequiredMalformedCasesAreCovered() throws {
        let codes = Dictionary(try Self.load("malformed").map { ($0.name, $0.error ?? "") }, uniquingKeysWith: { a, _ in a })
        let required: [String: String] = [
            "frame_length_over_maximum": "frame_too_large",
            "frame_length_zero": "malformed",
            "truncated_payload": "malformed",
            "unknown_type": "unknown_type",
            "hello_wrong_magic": "bad_handshake",
            "hello_bad_role_code": "malformed",
            "hello_node_id_not_matching_role": "malformed",
            "hello_vector_not_ascending": "malformed",
            "hello_vector_seq_zero": "malformed",
            "batch_origin_index_out_of_table": "malformed",
            "batch_entry_latitude_91": "invalid_change",
            "batch_entry_id_differs": "invalid_change",
            "ping_trailing_bytes": "malformed",
            "batch_delete_carrying_entry": "malformed",
            "offer_chunk_size_zero": "malformed",
            "batch_unknown_flag_bits": "malformed",
            "batch_partial_delete": "malformed",
            "batch_partial_recording": "malformed",
            "batch_duplicate_change_write": "invalid_change",
        ]
        for (name, code) in required.sorted(by: { $0.key < $1.key }) {
            #expect(codes[name] == code, "malformed.json: \(name) should expect \(code)")
        }
    }

    @Test func vectorNamesAreUniqueAndFilesAreListed() throws {
        var names = Set<String>()
        for file in Self.messageFiles + ["malformed", "discovery"] {
            for vector in try Self.load(file) {
                #expect(names.insert(vector.name).inserted, "\(vector): the name is used twice")
            }
        }
        for vector in try ProtocolLimitVectorTests.load() {
            #expect(names.insert(vector.name).inserted, "\(vector): the name is used twice")
        }
        let present = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".json") }
        // The other files have tests of their own: RecordingSignatureTests, ProtocolLimitVectorTests,
        // SessionTranscriptTests, SealVectorTests.
        #expect(Set(present) == Set((Self.messageFiles + ["malformed", "discovery", "recording_signature", "pairing", "limits",
                                                          "session_transcript", "seal"]).map { $0 + ".json" }))
    }

    /// The session does not encode a BATCH from `Change` values: it reads each entry's canonical
    /// JSON from the replica's columns. Stored and read back that way, every batch vector must
    /// still come out byte for byte.
    @Test func theSessionSendingPathWritesTheBatchVectorsExactly() throws {
        for vector in try Self.load("batch") {
            guard case .messages(let messages, _) = Self.read(vector.bytes), case .batch(let batch)? = messages.first else {
                Issue.record("\(vector): not a BATCH")
                continue
            }
            let replica = try ReplicaFixtures.replica(role: .mac, seed: 404)
            try replica.apply(batch.changes, through: batch.through)
            var encoded: [EncodedChange] = []
            for change in batch.changes {
                let rows = try replica.encodedChanges(origin: change.stamp.origin, after: change.stamp.sequence - 1, limit: 1)
                guard let row = rows.first, row.id == change.id else {
                    Issue.record("\(vector): \(change.id) did not read back")
                    continue
                }
                encoded.append(row)
            }
            let bytes = Message.encodedBatch(id: batch.id, origins: batch.origins, changes: encoded, through: batch.through)
            #expect(bytes == vector.bytes, "\(vector): the replica path encodes differently")
        }
    }

    /// The partial-change vector is what §5.2.1 and §8 say: two edits of one entry in one batch,
    /// each with flags bit 1 and its mask, merging to the phone's text and tags and the mac's
    /// category. The same bytes with the mask 0xFF decode as a change of every field, which the
    /// reference writes without bit 1.
    @Test func thePartialChangeVectorCarriesMasksThatMergePerField() throws {
        let vector = try #require(try Self.load("batch").first { $0.name == "batch_partial_changes" })
        guard case .messages(let messages, _) = Self.read(vector.bytes), case .batch(let batch)? = messages.first else {
            Issue.record("\(vector): not a BATCH")
            return
        }
        #expect(batch.changes.map(\.fields) == [FieldMask(bits: 0x90), FieldMask(bits: 0x08)])
        #expect(Set(batch.changes.map(\.id)).count == 1, "one entry, two writes")
        let result = FieldMerge.merge(batch.changes.map { EntryWrite(stamp: $0.stamp, fields: $0.fields, entry: $0.entry) })
        let content = try #require(result.content)
        let phone = try #require(batch.changes.first?.entry), mac = try #require(batch.changes.last?.entry)
        #expect(content.data.text == phone.data.text && content.data.tags == phone.data.tags && content.category == mac.category)
        #expect(result.kept.count == 1 && result.losses.isEmpty, "both writes win a field, neither loses one")

        // flags 0x02, then the mask: the first change's record starts after the origin table.
        var widened = vector.bytes
        let flags = try #require(Self.firstChangeFlagsOffset(widened))
        #expect(widened[flags] == 0x02 && widened[flags + 1] == 0x90)
        widened[flags + 1] = 0xFF
        guard case .messages(let all, _) = Self.read(widened), case .batch(let whole)? = all.first else {
            Issue.record("flags bit 1 with the mask 0xFF is refused")
            return
        }
        #expect(whole.changes.first?.fields == .all)
        var narrowed = widened
        narrowed.remove(at: flags + 1)
        narrowed[flags] = 0x00
        narrowed.replaceSubrange(0..<4, with: Self.u32(narrowed.count - 4))
        #expect(Message.batch(whole).encoded() == narrowed, "a change of every field is written without bit 1")
    }

    /// The offset of the first change's flags byte in a one-frame BATCH (§5.2: batch_id, the
    /// origin table, change_count, then kind and flags).
    static func firstChangeFlagsOffset(_ frame: [UInt8]) -> Int? {
        func u16(_ at: Int) -> Int? { at + 1 < frame.count ? Int(frame[at]) << 8 | Int(frame[at + 1]) : nil }
        var at = 5 + 8
        guard let origins = u16(at) else { return nil }
        at += 2
        for _ in 0..<origins {
            for _ in 0..<2 {
                guard let length = u16(at) else { return nil }
                at += 2 + length
            }
            at += 1
        }
        at += 4 + 1
        return at < frame.count ? at : nil
    }

    static func u32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    /// The sender builds CHUNK frames in one buffer (the file read straight into the frame):
    /// byte for byte the vectors. And the vectors tell one story: each chunk's digest is the
    /// SHA-256 of the file up to its end, the last one the OFFER's whole-file hash.
    @Test func chunkFramesBuiltInPlaceMatchTheVectorsAndCarryRunningDigests() throws {
        var file: [UInt8] = []
        var lastDigest: SHA256.Digest?
        for vector in try Self.load("chunk") {
            guard case .messages(let messages, _) = Self.read(vector.bytes), case .chunk(let chunk)? = messages.first else {
                Issue.record("\(vector): not a CHUNK")
                continue
            }
            let frame = Chunk.frame(recordingID: chunk.recordingID, offset: chunk.offset, count: chunk.data.count) { data in
                data.copyBytes(from: chunk.data)
                return chunk.sha256.bytes
            }
            #expect(frame == vector.bytes, "\(vector): the in-place frame differs")
            #expect(chunk.offset == UInt64(file.count), "\(vector): chunks are not consecutive")
            file += chunk.data
            #expect(chunk.sha256 == SHA256.hash(file), "\(vector): not the running digest of the file so far")
            lastDigest = chunk.sha256
        }
        guard case .messages(let offers, _) = Self.read(try #require(try Self.load("offer").first).bytes),
              case .offer(let offer)? = offers.first else { Issue.record("no OFFER vector"); return }
        #expect(offer.size == UInt64(file.count) && offer.sha256 == lastDigest)
    }

    /// The one-line hex frames quoted in PROTOCOL.md (§10) are real: each decodes to one message
    /// that re-encodes to the same bytes.
    @Test func hexFramesQuotedInTheSpecDecode() throws {
        let spec = try String(contentsOf: Self.directory.deletingLastPathComponent().appendingPathComponent("PROTOCOL.md"), encoding: .utf8)
        let quoted = spec.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
            .filter { $0.count >= 18 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }
        #expect(quoted.count >= 4)
        for hex in quoted {
            let bytes = try #require(Hex.decode(hex))
            guard case .messages(let messages, let leftover) = Self.read(bytes), messages.count == 1, leftover == 0 else {
                Issue.record("PROTOCOL.md quotes \(hex.prefix(40))…, which is not one valid frame")
                continue
            }
            #expect(messages[0].encoded() == bytes)
        }
    }

    /// Frames arriving together in one read decode one after another (the worked exchange of
    /// PROTOCOL.md §10 is built from these vectors).
    @Test func concatenatedVectorsDecodeInOrder() throws {
        var stream: [UInt8] = []
        var expected: [JSONValue] = []
        for file in Self.messageFiles {
            for vector in try Self.load(file) {
                stream += vector.bytes
                expected.append(vector.message ?? .null)
            }
        }
        guard case .messages(let messages, let leftover) = Self.read(stream) else {
            Issue.record("the concatenated vectors were refused")
            return
        }
        #expect(leftover == 0)
        #expect(messages.map(MessageJSON.json) == expected)
    }
}
