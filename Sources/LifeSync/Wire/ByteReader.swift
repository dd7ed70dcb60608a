/// Reads protocol primitives from a frame's payload, refusing to read past its end. What each
/// read is for (`what`) is made into text only for an error: HOLDS and CAUGHT_UP carry a vector
/// of every origin, and a node of a 40-node mesh decodes thousands of them.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var remaining: Int { bytes.endIndex - index }

    private mutating func take(_ count: Int, _ what: @autoclosure () -> String) throws(WireError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw WireError(.malformed, "payload ends inside \(what())") }
        defer { index += count }
        return bytes[index..<(index + count)]
    }

    mutating func u8(_ what: @autoclosure () -> String) throws(WireError) -> UInt8 { try take(1, what()).first! }

    mutating func u16(_ what: @autoclosure () -> String) throws(WireError) -> UInt16 {
        try take(2, what()).reduce(0) { $0 << 8 | UInt16($1) }
    }

    mutating func u32(_ what: @autoclosure () -> String) throws(WireError) -> UInt32 {
        try take(4, what()).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func u64(_ what: @autoclosure () -> String) throws(WireError) -> UInt64 {
        try take(8, what()).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func string(_ what: @autoclosure () -> String) throws(WireError) -> String {
        let length = Int(try u16(what() + " length"))
        guard let s = String(validating: try take(length, what()), as: UTF8.self) else {
            throw WireError(.malformed, "\(what()) is not valid UTF-8")
        }
        return s
    }

    mutating func blob(_ what: @autoclosure () -> String, maximum: Int) throws(WireError) -> [UInt8] {
        Array(try blobSlice(what(), maximum: maximum))
    }

    /// `bytes32` as a slice of the payload, for data too large to copy (recording chunks).
    mutating func blobSlice(_ what: @autoclosure () -> String, maximum: Int) throws(WireError) -> ArraySlice<UInt8> {
        let length = Int(try u32(what() + " length"))
        guard length <= maximum else { throw WireError(.malformed, "\(what()) of \(length) bytes exceeds \(maximum)") }
        return try take(length, what())
    }

    mutating func raw(_ count: Int, _ what: @autoclosure () -> String) throws(WireError) -> [UInt8] { Array(try take(count, what())) }

    /// A digest's 32 bytes, read in place.
    mutating func digest(_ what: @autoclosure () -> String) throws(WireError) -> SHA256.Digest { SHA256.Digest(bytes: try take(32, what())) }

    /// A count of items that each take at least `minimumItemSize` bytes, checked against what is
    /// left before anything is allocated for them.
    mutating func count16(_ what: @autoclosure () -> String, minimumItemSize: Int) throws(WireError) -> Int {
        let n = Int(try u16(what()))
        guard n * minimumItemSize <= remaining else { throw WireError(.malformed, "\(what()) of \(n) cannot fit in the payload") }
        return n
    }

    mutating func count32(_ what: @autoclosure () -> String, minimumItemSize: Int) throws(WireError) -> Int {
        let n = Int(try u32(what()))
        guard n * minimumItemSize <= remaining else { throw WireError(.malformed, "\(what()) of \(n) cannot fit in the payload") }
        return n
    }

    func expectEnd(_ what: @autoclosure () -> String) throws(WireError) {
        guard remaining == 0 else { throw WireError(.malformed, "\(remaining) unexpected bytes after \(what())") }
    }
}
