/// The six-digit code two devices show while they pair (PROTOCOL.md §1.2), compared by their
/// users as Bluetooth's numeric comparison is: it is derived from both keys, so a device in the
/// middle, which must present its own key to each side, makes the two screens show different
/// codes. Both users confirm on their own device; trust is recorded only on each side's yes.
///
/// ```swift
/// PairingCode(mine, theirs).text   // "482 915", the same on both devices
/// ```
package struct PairingCode: Equatable, Sendable, CustomStringConvertible {
    /// 0 … 999 999.
    package let value: UInt32

    /// The same code whichever side computes it: the two fingerprints are taken in byte order.
    package init(_ a: SHA256.Digest, _ b: SHA256.Digest) {
        let (low, high) = a.bytes.lexicographicallyPrecedes(b.bytes) ? (a, b) : (b, a)
        let digest = SHA256.hash(Array("lifesync-pairing-code".utf8) + [0] + low.bytes + high.bytes).bytes
        let word = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        value = word % 1_000_000
        assert(value < 1_000_000, "six digits")
    }

    /// Six digits, in two groups of three ("004 217").
    package var description: String {
        let digits = String(value)
        let padded = String(repeating: "0", count: 6 - digits.count) + digits
        return padded.prefix(3) + " " + padded.suffix(3)
    }

    /// Whether `typed` (spaces and dashes ignored) is this code.
    package func matches(_ typed: String) -> Bool {
        let digits = typed.filter { $0 != " " && $0 != "-" }
        return digits.count == 6 && digits.allSatisfy(\.isASCII) && UInt32(digits) == value
    }
}
