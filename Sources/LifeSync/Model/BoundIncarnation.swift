/// Incarnations that name their node (PROTOCOL.md §2.3.1): which node may seal a write of an
/// origin is decided by the origin itself, not by whichever peer's seal for it arrived first.
/// Which key that node seals with is then the trust rule's (§5.2.5 rule 2), so a node that
/// replaces its key and is paired again still delivers its earlier writes.
///
/// A bound incarnation is an ordinary version-4 UUID whose 16 bytes are
///
///     mark (4: 15 1f e5 1c) ‖ nonce (3, version nibble in its last byte) ‖ tag (9, variant bits in its second byte)
///
/// where `tag` is the start of SHA-256("lifesync-incarnation\0" ‖ node ID ‖ nonce). An origin is
/// bound to a node exactly when that node's ID reproduces the tag; finding another node ID that
/// does costs about 2^70 hashes. The nonce keeps a node's successive incarnations apart (20
/// random bits: incarnations change only when a restored copy is detected).
///
/// Incarnations made by earlier versions carry no mark (a random UUID carries it by chance once
/// in 2^32); their owner is still the node whose seal first vouched for one of their writes.
extension Identifier {
    static let boundMark: [UInt8] = [0x15, 0x1F, 0xE5, 0x1C]

    /// A fresh incarnation bound to `nodeID`.
    package static func incarnation(boundTo nodeID: String, random: RandomSource) -> String {
        let draw = random.nextUInt64()
        return boundIncarnation(nodeID, nonce: (0..<3).map { UInt8(truncatingIfNeeded: draw >> (8 * UInt64($0))) })
    }

    /// True when `incarnation` carries the mark of a bound incarnation: only the node it names
    /// may seal its writes.
    package static func isBound(_ incarnation: String) -> Bool {
        uuidBytes(incarnation)?.prefix(4).elementsEqual(boundMark) ?? false
    }

    /// True when `incarnation` is bound to `nodeID`.
    package static func incarnation(_ incarnation: String, isBoundTo nodeID: String) -> Bool {
        guard let bytes = uuidBytes(incarnation), bytes.prefix(4).elementsEqual(boundMark) else { return false }
        return boundIncarnation(nodeID, nonce: Array(bytes[4..<7])) == incarnation
    }

    private static func boundIncarnation(_ nodeID: String, nonce: [UInt8]) -> String {
        var nonce = nonce
        nonce[2] = (nonce[2] & 0x0F) | 0x40  // UUID byte 6: the version nibble, set before hashing
        let hash = SHA256()
        hash.update(Array("lifesync-incarnation\0".utf8))
        hash.update(Array(nodeID.utf8))
        hash.update(nonce)
        return uuidV4(bytes: boundMark + nonce + hash.finalize().bytes.prefix(9))
    }

    /// The 16 bytes of a lowercase version-4 UUID; nil for anything else.
    private static func uuidBytes(_ text: String) -> [UInt8]? {
        guard isUUIDv4(Substring(text)) else { return nil }
        return Hex.decode(String(text.filter { $0 != "-" }))
    }
}
