import LifeSync
import Testing

/// The frame decoder cuts whole frames out of reads that split them anywhere: from the bytes
/// it was given when nothing is pending, from its own buffer when a frame straddles reads.
@Suite struct FrameDecoderTests {
    static let frames: [(type: UInt8, payload: [UInt8])] = [
        (0x05, Array(0..<8)), (0x02, (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }), (0x06, []), (0x12, Array(repeating: 0xAB, count: 70_000)),
    ]
    static let stream: [UInt8] = frames.flatMap { frame -> [UInt8] in
        let length = UInt32(frame.payload.count + 1)
        return [UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length), frame.type] + frame.payload
    }

    /// Feeds `stream` in pieces of the given sizes (the last piece takes the rest) and collects
    /// the frames as copies, since each feed may reuse what the one before returned.
    static func decode(pieces sizes: [Int]) throws -> [(type: UInt8, payload: [UInt8])] {
        var decoder = FrameDecoder()
        var out: [(UInt8, [UInt8])] = []
        var offset = 0
        for size in sizes + [stream.count] where offset < stream.count {
            let end = min(stream.count, offset + size)
            out += try decoder.feed(stream[offset..<end]).map { ($0.type, Array($0.payload)) }
            offset = end
        }
        #expect(decoder.bufferedCount == 0)
        return out
    }

    static func same(_ decoded: [(type: UInt8, payload: [UInt8])]) -> Bool {
        decoded.count == frames.count && zip(decoded, frames).allSatisfy { $0.type == $1.type && $0.payload == $1.payload }
    }

    @Test func wholeStreamAtOnce() throws {
        #expect(Self.same(try Self.decode(pieces: [])))
    }

    @Test func everySplitPointOfTheSmallFrames() throws {
        for cut in 1..<3100 { #expect(Self.same(try Self.decode(pieces: [cut])), "split at \(cut)") }
    }

    @Test func irregularReads() throws {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<50 {
            var sizes: [Int] = []
            for _ in 0..<40 {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                sizes.append(1 + Int(seed >> 33) % 9000)
            }
            #expect(Self.same(try Self.decode(pieces: sizes)))
        }
    }

    @Test func aLengthOverTheMaximumIsRefusedFromItsFourBytes() {
        var decoder = FrameDecoder()
        let length = UInt32(Framing.maximumFrameLength + 1)
        let header: [UInt8] = [UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
        #expect(throws: WireError.self) { try decoder.feed(header) }
    }
}
