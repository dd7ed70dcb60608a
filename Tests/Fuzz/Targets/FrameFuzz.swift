// libFuzzer target `frame`: the frame splitter and the message decoder/encoder.
//
// Input: one control byte, then the byte stream as it would arrive on a connection.
// The control byte picks where the stream is cut in two for the second decoder; its lowest bit
// makes every decoder a stranger's (first frame a HELLO of at most 64 KiB, judged by its header).
//
// Oracles (any of them traps):
//  - the splitter gives the same outcome fed whole, cut in two, and one byte at a time
//    (same frames and leftover when it succeeds, same error code when it fails);
//  - every message that decodes re-encodes (`Message.encoded()`) to one frame that decodes
//    again to the same message (up to the batch origin table, which the encoder rebuilds),
//    and encoding is a fixed point: encode(decode(encode(m))) == encode(m), byte for byte.
//
// Compiled as one module with all of Sources/LifeSync (see Tests/Fuzz/run.sh); `FuzzMain.swift` calls `fuzzFrame`.

typealias RawFrame = (type: UInt8, payload: [UInt8])

/// Feeds `pieces` in order; the frames it produced (copied) and the first error, if any.
private func split(_ pieces: [ArraySlice<UInt8>], stranger: Bool) -> (frames: [RawFrame], error: WireError?, buffered: Int) {
    var decoder = stranger ? FrameDecoder(firstFrameMaximum: Message.Limits.maximumUntrustedFrameLength, firstFrameType: MessageType.hello.rawValue)
                           : FrameDecoder()
    var frames: [RawFrame] = []
    for piece in pieces {
        do {
            for frame in try decoder.feed(piece) { frames.append((frame.type, Array(frame.payload))) }
        } catch {
            return (frames, error, decoder.bufferedCount)
        }
    }
    return (frames, nil, decoder.bufferedCount)
}

private func same(_ a: [RawFrame], _ b: [RawFrame]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { $0.type == $1.type && $0.payload == $1.payload }
}

private func hex(_ bytes: some Collection<UInt8>, limit: Int = 160) -> String {
    Hex.encode(Array(bytes.prefix(limit))) + (bytes.count > limit ? "…(\(bytes.count) bytes)" : "")
}

private func short(_ value: Any) -> String {
    let text = String(describing: value)
    return text.count > 1500 ? String(text.prefix(1500)) + "…" : text
}

/// A batch compared up to its origin table: the decoder keeps the table's entries that carry a
/// node ID, in wire order, including ones nobody references (PROTOCOL.md §5.2 tolerates them);
/// the encoder writes exactly the referenced origins, sorted. Compare the referenced ones.
private func normalized(_ message: Message) -> Message {
    guard case .batch(var batch) = message else { return message }
    var referenced = Set<String>()
    for change in batch.changes {
        referenced.insert(change.stamp.origin)
        for entry in change.stamp.vector.entries { referenced.insert(entry.origin) }
    }
    for entry in batch.through.entries { referenced.insert(entry.origin) }
    batch.origins = batch.origins.filter { referenced.contains($0.origin) }.sorted { $0.origin < $1.origin }
    return .batch(batch)
}

private func decodeSingleFrame(_ bytes: [UInt8], _ what: String) -> Message {
    var decoder = FrameDecoder()
    let frames: [(type: UInt8, payload: ArraySlice<UInt8>)]
    do { frames = try decoder.feed(bytes) } catch {
        fatalError("FUZZ: \(what) is refused by the frame splitter: \(error); frame \(hex(bytes))")
    }
    guard frames.count == 1, decoder.bufferedCount == 0 else {
        fatalError("FUZZ: \(what) split into \(frames.count) frames with \(decoder.bufferedCount) bytes left; frame \(hex(bytes))")
    }
    do { return try Message.decode(type: frames[0].type, payload: frames[0].payload) } catch {
        fatalError("FUZZ: \(what) does not decode: \(error); frame \(hex(bytes))")
    }
}

private func roundTrip(_ first: Message, original: RawFrame) {
    let encoded = first.encoded()
    let second = decodeSingleFrame(encoded, "the re-encoded \(first.type)")
    guard normalized(second) == normalized(first) else {
        fatalError("FUZZ: \(first.type) changes in an encode/decode round trip\n  original frame: type \(original.type) payload \(hex(original.payload))\n  decoded:    \(short(first))\n  re-decoded: \(short(second))\n  re-encoded: \(hex(encoded))")
    }
    let again = second.encoded()
    guard again == encoded else {
        fatalError("FUZZ: encoding of \(first.type) is not a fixed point\n  first:  \(hex(encoded, limit: 400))\n  second: \(hex(again, limit: 400))")
    }
}

func fuzzFrame(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let control = Int(data[0])
    let stream = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let cut = stream.count * control / 255

    let stranger = control & 1 == 1
    let whole = split([stream[...]], stranger: stranger)
    let halves = split([stream[..<cut], stream[cut...]], stranger: stranger)
    if stranger, let first = whole.frames.first, first.type != MessageType.hello.rawValue || first.payload.count + 1 > Message.Limits.maximumUntrustedFrameLength {
        fatalError("FUZZ: a stranger's decoder gave a first frame of type \(first.type), \(first.payload.count + 1) bytes")
    }
    var best = halves
    if stream.count <= 8192 {
        let bytewise = split(stream.indices.map { stream[$0...$0] }, stranger: stranger)
        if bytewise.error?.code != whole.error?.code || (whole.error == nil && (!same(bytewise.frames, whole.frames) || bytewise.buffered != whole.buffered)) {
            fatalError("FUZZ: frame splitter: whole \(whole.frames.count) frames/\(whole.buffered) left/\(String(describing: whole.error)), byte by byte \(bytewise.frames.count)/\(bytewise.buffered)/\(String(describing: bytewise.error))")
        }
        // Byte by byte hands out every frame before a framing error.
        best = bytewise
    }
    if halves.error?.code != whole.error?.code || (whole.error == nil && (!same(halves.frames, whole.frames) || halves.buffered != whole.buffered)) {
        fatalError("FUZZ: frame splitter: whole \(whole.frames.count) frames/\(whole.buffered) left/\(String(describing: whole.error)), cut at \(cut): \(halves.frames.count)/\(halves.buffered)/\(String(describing: halves.error))")
    }
    if whole.error == nil { best = whole }

    for frame in best.frames {
        guard let message = try? Message.decode(type: frame.type, payload: frame.payload[...]) else { continue }
        roundTrip(message, original: frame)
    }
    return 0
}
