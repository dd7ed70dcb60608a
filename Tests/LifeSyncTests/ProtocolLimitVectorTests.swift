import Foundation
@testable import LifeSync
import Testing
import TestSupport

/// `Protocol/vectors/limits.json` (format in its README): for every bound checked before reading,
/// a complete frame exactly at it (valid) and one just past it (refused with its code) — frames
/// whose only defect is the bound, so a decoder that skipped the check would decode them or
/// fail on something else.
@Suite struct ProtocolLimitVectorTests {
    struct LimitVector: CustomStringConvertible {
        var name: String
        var bytes: [UInt8]
        var sessionStart: Bool
        var summary: JSONValue?
        var error: String?
        var description: String { "limits:\(name)" }
    }

    /// `parts`: each part's `hex` repeated `times` (default 1); in copy i, each counter writes
    /// `start + i` over `width` bytes at `at`, as lowercase ASCII hex digits or big-endian bytes.
    static func expand(_ parts: [JSONValue]) throws -> [UInt8] {
        var out: [UInt8] = []
        for part in parts {
            guard case .string(let hex)? = part["hex"], let bytes = Hex.decode(hex) else { throw MessageJSON.FormatError("a part without hex") }
            let times = part["times"].flatMap { if case .number(let n) = $0 { return Int(n) }; return nil } ?? 1
            var counters: [(at: Int, width: Int, ascii: Bool, start: Int)] = []
            if case .array(let items)? = part["counters"] {
                for item in items {
                    guard case .number(let at)? = item["at"], case .number(let width)? = item["width"], case .string(let form)? = item["form"],
                          form == "ascii_hex" || form == "big_endian" else { throw MessageJSON.FormatError("a bad counter") }
                    let start = item["start"].flatMap { if case .number(let n) = $0 { return Int(n) }; return nil } ?? 0
                    guard Int(at) + Int(width) <= bytes.count else { throw MessageJSON.FormatError("a counter outside its part") }
                    counters.append((Int(at), Int(width), form == "ascii_hex", start))
                }
            }
            out.reserveCapacity(out.count + bytes.count * times)
            guard !counters.isEmpty else {
                if bytes.count == 1 { out += [UInt8](repeating: bytes[0], count: times) } else { for _ in 0..<times { out += bytes } }
                continue
            }
            for i in 0..<times {
                var copy = bytes
                for counter in counters {
                    var value = counter.start + i
                    for k in stride(from: counter.width - 1, through: 0, by: -1) {
                        copy[counter.at + k] = counter.ascii ? Array("0123456789abcdef".utf8)[value & 0xf] : UInt8(value & 0xff)
                        value >>= counter.ascii ? 4 : 8
                    }
                    precondition(value == 0, "a counter wider than its field")
                }
                out += copy
            }
        }
        return out
    }

    static func load() throws -> [LimitVector] {
        let url = ProtocolVectorTests.directory.appendingPathComponent("limits.json")
        guard case .array(let items)? = try JSONValue.parse(try String(contentsOf: url, encoding: .utf8))["vectors"] else {
            throw MessageJSON.FormatError("limits.json: no \"vectors\" array")
        }
        return try items.map { item in
            guard case .string(let name)? = item["name"], case .string? = item["description"] else { throw MessageJSON.FormatError("a vector lacks name or description") }
            let bytes: [UInt8]
            if case .string(let hex)? = item["hex"], let decoded = Hex.decode(hex) {
                bytes = decoded
            } else if case .array(let parts)? = item["parts"] {
                bytes = try expand(parts)
            } else {
                throw MessageJSON.FormatError("\(name): neither hex nor parts")
            }
            var error: String?
            if case .string(let code)? = item["error"] { error = code }
            return LimitVector(name: name, bytes: bytes, sessionStart: item["session_start"] == .bool(true), summary: item["summary"], error: error)
        }
    }

    /// What a valid limit vector's `summary` states about its one message.
    static func summary(_ message: Message) -> JSONValue {
        func number(_ n: Int) -> JSONValue { .number(Double(n)) }
        var members: [(String, JSONValue)] = [("type", .string(MessageJSON.name(of: message.type)))]
        switch message {
        case .hello(let hello): members.append(("vector_entries", number(hello.vector.entries.count)))
        case .caughtUp(let vector), .syncRequest(let vector): members.append(("vector_entries", number(vector.entries.count)))
        case .batch(let batch):
            members += [("origins", number(MessageJSON.originTable(of: batch).count)), ("changes", number(batch.changes.count)),
                        ("through_entries", number(batch.through.entries.count)),
                        ("largest_content_bytes", number(batch.changes.map(\.payload.count).max() ?? 0))]
        case .chunk(let chunk): members.append(("data_bytes", number(chunk.data.count)))
        case .offer(let offer): members.append(("chunk_size", number(Int(offer.chunkSize))))
        case .error(let code, let text), .failure(_, let code, let text):
            members += [("code", number(Int(code))), ("message_bytes", number(text.utf8.count))]
        case .want(let ids): members.append(("recording_ids", number(ids.count)))
        default: break
        }
        return .object(members)
    }

    /// The bytes as a session reads them, whole and in 64 KiB reads.
    static func read(_ vector: LimitVector, pieceSize: Int) -> Result<[Message], WireError> {
        var decoder = vector.sessionStart ? FrameDecoder(firstFrameMaximum: Message.Limits.maximumHandshakeFrameLength) : FrameDecoder()
        var messages: [Message] = []
        do {
            var start = 0
            while start < vector.bytes.count {
                let end = min(start + pieceSize, vector.bytes.count)
                for frame in try decoder.feed(vector.bytes[start..<end]) {
                    messages.append(try Message.decode(type: frame.type, payload: frame.payload))
                }
                start = end
            }
        } catch {
            return .failure(error)
        }
        guard decoder.bufferedCount == 0 else { return .failure(WireError(.internalError, "\(decoder.bufferedCount) bytes left over")) }
        return .success(messages)
    }

    @Test func everyLimitVectorIsValidAtItsLimitAndRefusedPastIt() throws {
        let vectors = try Self.load()
        #expect(vectors.count >= 24)
        for vector in vectors {
            #expect((vector.summary == nil) != (vector.error == nil), "\(vector): a summary or an error, not both")
            for pieceSize in [vector.bytes.count, 65_536] {
                switch Self.read(vector, pieceSize: pieceSize) {
                case .failure(let error):
                    #expect(error.code.description == vector.error, "\(vector): refused as \(error), expected \(vector.error ?? "success")")
                case .success(let messages):
                    guard let expected = vector.summary else {
                        Issue.record("\(vector): accepted, expected \(vector.error ?? "")")
                        continue
                    }
                    guard messages.count == 1, let message = messages.first else {
                        Issue.record("\(vector): \(messages.count) frames, expected 1")
                        continue
                    }
                    #expect(Self.summary(message) == expected, "\(vector): decoded as \(Self.summary(message).canonicalText)")
                    #expect(message.encoded() == vector.bytes, "\(vector): re-encoding differs")
                }
            }
        }
    }

    /// Each "past" vector has its "at" twin, so every bound is shown from both sides.
    @Test func everyPastVectorHasItsAtTwin() throws {
        let names = Set(try Self.load().map(\.name))
        for name in names where name.hasSuffix("_past_maximum") || name.hasSuffix("_past_ceiling") {
            let twin = name.replacingOccurrences(of: "_past_", with: "_at_")
            #expect(names.contains(twin), "\(name) has no \(twin)")
        }
    }
}
