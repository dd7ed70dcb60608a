/// Appends protocol primitives in network byte order (PROTOCOL.md §2).
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    // Each integer goes in as one append of its big-endian bytes: a byte at a time checked the
    // array's capacity and uniqueness eight times a u64 (a sixth of a write's digest).
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }

    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }

    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }

    /// `str16`: a u16 byte length, then UTF-8. Callers keep strings under 65,536 bytes.
    mutating func string(_ s: String) {
        let count = s.utf8.count
        precondition(count <= Int(UInt16.max), "str16 longer than 65535 bytes")
        u16(UInt16(count))
        // Native strings hand over their bytes in place: no array per string (several per change).
        if s.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil { bytes.append(contentsOf: s.utf8) }
    }

    /// `bytes32`: a u32 byte length, then the bytes.
    mutating func blob(_ b: [UInt8]) { blob(b[...]) }

    mutating func blob(_ b: ArraySlice<UInt8>) {
        u32(UInt32(b.count))
        bytes.append(contentsOf: b)
    }

    /// Exactly `count` raw bytes.
    mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    /// A digest's 32 bytes.
    mutating func digest(_ d: SHA256.Digest) { d.append(to: &bytes) }

    /// `count` zero bytes to be overwritten in place; returns where they start.
    mutating func reserve(_ count: Int) -> Int {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        return start
    }

    /// The finished frame: its leading u32 `length` (written as 0 first) set to what follows it,
    /// plus `trailing` bytes the caller appends itself. Patched in place and handed over, so the
    /// writer keeps no second reference that would make the caller's next write copy 1 MiB.
    mutating func finishFrame(trailing: Int = 0) -> [UInt8] {
        let length = bytes.count + trailing - Framing.headerSize
        precondition(length <= Framing.maximumFrameLength, "frame larger than the protocol maximum")
        for index in 0..<4 { bytes[index] = UInt8(truncatingIfNeeded: length >> (24 - 8 * index)) }
        var frame: [UInt8] = []
        swap(&frame, &bytes)
        return frame
    }
}
