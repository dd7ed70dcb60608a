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

    /// A frame that straddles reads is buffered whole; once cut, the buffer does not stay:
    /// an idle node keeps no batch's worth of memory for each of its peers.
    @Test func aLargeFrameCutLeavesNoBufferBehind() throws {
        let payload = [UInt8](repeating: 0x5A, count: 1 << 20)
        let length = UInt32(payload.count + 1)
        let frame = [UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
                     UInt8(truncatingIfNeeded: length), 0x02] + payload
        var decoder = FrameDecoder()
        var cut = 0
        for start in stride(from: 0, to: frame.count, by: 65_536) {
            let frames = try decoder.feed(frame[start..<min(frame.count, start + 65_536)])
            for decoded in frames {
                #expect(decoded.type == 0x02 && decoded.payload.elementsEqual(payload))
                cut += 1
            }
        }
        #expect(cut == 1)
        #expect(decoder.bufferedCount == 0)
        #expect(decoder.heldCapacity <= 64 << 10, "kept \(decoder.heldCapacity) bytes after the frame was cut")
        // A small frame that straddles reads keeps its buffer, for the next.
        _ = try decoder.feed([0, 0, 0, 3])
        #expect(try decoder.feed([0x05, 1, 2]).count == 1)
        #expect(decoder.heldCapacity > 0)
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
