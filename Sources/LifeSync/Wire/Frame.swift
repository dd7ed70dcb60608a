/// Message type codes (PROTOCOL.md §4).
package enum MessageType: UInt8, CaseIterable, Sendable {
    case hello = 0x01
    case batch = 0x02
    case ack = 0x03
    case caughtUp = 0x04
    case ping = 0x05
    case pong = 0x06
    case error = 0x07
    case syncRequest = 0x08
    case history = 0x0A
    case holds = 0x0B
    case offer = 0x10
    case accept = 0x11
    case chunk = 0x12
    case confirm = 0x13
    case failure = 0x14
    case want = 0x15
}

/// Framing constants (PROTOCOL.md §3).
package enum Framing {
    /// Bytes in the length prefix.
    package static let headerSize = 4
    /// The largest `length` accepted: type byte plus payload. 8 MiB leaves room for a 4 MiB
    /// recording chunk or a 1 MiB batch with its overhead, and caps what a peer can make us buffer.
    package static let maximumFrameLength = 8 * 1024 * 1024

    /// `length` (u32, big-endian) = 1 + payload size, then the type byte, then the payload.
    package static func frame(_ type: MessageType, _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count + 1 <= maximumFrameLength, "frame larger than the protocol maximum")
        var writer = ByteWriter(capacity: payload.count + 5)
        writer.u32(UInt32(payload.count + 1))
        writer.u8(type.rawValue)
        writer.raw(payload)
        return writer.bytes
    }
}

/// Splits a byte stream into frames. Feed it what the socket delivered; it returns whole frames
/// and keeps the rest. A length over the maximum is refused as soon as its four bytes arrive,
/// before any of the payload is buffered.
package struct FrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0
    /// The bound on the first frame (a session's first frame is the peer's HELLO, so a peer we
    /// know nothing of yet cannot make us buffer a full 8 MiB); later frames may take the maximum.
    private let firstFrameMaximum: Int
    /// The type the first frame must have, judged by its header alone, before its payload is
    /// buffered (a peer whose key is not trusted sends a HELLO or nothing); nil: any.
    private let firstFrameType: UInt8?
    private var framesCut = 0

    package init(firstFrameMaximum: Int = Framing.maximumFrameLength, firstFrameType: UInt8? = nil) {
        precondition(firstFrameMaximum >= 1 && firstFrameMaximum <= Framing.maximumFrameLength)
        self.firstFrameMaximum = firstFrameMaximum
        self.firstFrameType = firstFrameType
    }

    /// The most buffer kept between reads once every frame in it was cut.
    static let keptCapacity = 64 << 10

    /// Bytes the decoder holds for the next read: its buffer's capacity.
    package var heldCapacity: Int { buffer.capacity }

    /// Bytes received but not yet part of a whole frame.
    package var bufferedCount: Int { buffer.count - start }

    /// How many bytes the unfinished frame still lacks (nil: none is started, or its header is
    /// not in yet).
    package var unfinishedFrameRemaining: Int? {
        guard buffer.count - start >= Framing.headerSize else { return nil }
        let length = buffer[start..<(start + 4)].reduce(0) { $0 << 8 | Int($1) }
        return max(0, Framing.headerSize + length - (buffer.count - start))
    }

    /// The returned payloads are slices of the decoder's buffer, or of `bytes` itself: let them
    /// go before the next `feed`, and that buffer is reused in place (no allocation, no copy of
    /// a 1 MiB chunk or a 2 MiB batch).
    package mutating func feed(_ bytes: ArraySlice<UInt8>) throws(WireError) -> [(type: UInt8, payload: ArraySlice<UInt8>)] {
        if start > 0 {
            // The frames handed out last time are gone by now: move the unread tail (less than
            // one read) to the front, in place.
            buffer.removeSubrange(0..<start)
            start = 0
        }
        guard buffer.isEmpty else {
            buffer.append(contentsOf: bytes)
            var next = start
            let frames = try cut(buffer[...], from: &next)
            start = next
            // A batch or chunk that straddled reads grew the buffer to its size; once it is all
            // cut, the buffer goes (with the frames handed out, which hold it until then) rather
            // than keep up to 8 MiB for each connection of an idle node (a node of 40 idled at
            // 37.2 MiB instead of 38.1).
            if start == buffer.count, buffer.capacity > FrameDecoder.keptCapacity { (buffer, start) = ([], 0) }
            return frames
        }
        // Nothing pending: the frames are cut from `bytes` where they lie, and only an unfinished
        // one is kept. Copying every read into the buffer first cost a pass over all the bytes,
        // out of cache for a 4 MiB read.
        var next = bytes.startIndex
        let frames = try cut(bytes, from: &next)
        buffer.append(contentsOf: bytes[next...])
        return frames
    }

    /// The whole frames of `bytes` from `index` on; `index` ends at the first byte not used.
    private mutating func cut(_ bytes: ArraySlice<UInt8>, from index: inout Int) throws(WireError) -> [(type: UInt8, payload: ArraySlice<UInt8>)] {
        var frames: [(UInt8, ArraySlice<UInt8>)] = []
        while bytes.endIndex - index >= Framing.headerSize {
            let length = bytes[index..<(index + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard length >= 1 else { throw WireError(.malformed, "frame length 0 (a frame has at least its type byte)") }
            let maximum = framesCut == 0 ? firstFrameMaximum : Framing.maximumFrameLength
            guard length <= maximum else {
                throw WireError(.frameTooLarge, "frame length \(length) exceeds the maximum \(maximum)"
                                + (framesCut == 0 && maximum < Framing.maximumFrameLength ? " for a first frame (HELLO)" : ""))
            }
            if framesCut == 0, let wanted = firstFrameType, bytes.endIndex - index > Framing.headerSize,
               bytes[index + Framing.headerSize] != wanted {
                throw WireError(.unexpectedMessage, "the first frame has type \(bytes[index + Framing.headerSize]), not \(wanted) (HELLO)")
            }
            guard bytes.endIndex - index >= Framing.headerSize + length else { break }
            let typeIndex = index + Framing.headerSize
            frames.append((bytes[typeIndex], bytes[(typeIndex + 1)..<(typeIndex + length)]))
            index = typeIndex + length
            framesCut += 1
        }
        return frames
    }

    package mutating func feed(_ bytes: [UInt8]) throws(WireError) -> [(type: UInt8, payload: ArraySlice<UInt8>)] {
        try feed(bytes[...])
    }
}
