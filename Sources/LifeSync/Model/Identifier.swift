/// Identifiers of the form `{role}_{uuid-v4}`, lowercase, e.g.
/// `watch_550e8400-e29b-41d4-a716-446655440000`. Used for nodes, entries and recordings.
///
/// The prefix says which kind of device created the thing (for people reading logs); the UUID's
/// 122 random bits make collisions between offline devices negligible (LifeAdmin §1.2).
package enum Identifier {
    /// A new identifier for something created on a device of `role`.
    package static func make(role: Role, random: RandomSource) -> String {
        role.rawValue + "_" + uuidV4(random: random)
    }

    /// A lowercase RFC 4122 version-4 UUID drawn from `random`.
    package static func uuidV4(random: RandomSource) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        let a = random.nextUInt64(), b = random.nextUInt64()
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i)))
        }
        return uuidV4(bytes: bytes)
    }

    /// The first 16 of `bytes` as a lowercase UUID, with the version-4 and RFC 4122 variant bits
    /// set so that every replica's ID rule accepts it.
    static func uuidV4(bytes source: some Collection<UInt8>) -> String {
        var bytes = Array(source.prefix(16))
        precondition(bytes.count == 16, "a UUID takes 16 bytes")
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True for a lowercase `8-4-4-4-12` hex UUID with version 4 and the RFC 4122 variant.
    package static func isUUIDv4(_ text: Substring) -> Bool {
        var copy = text
        return copy.withUTF8 { isUUIDv4($0) }
    }

    /// The same test over UTF-8 bytes.
    static func isUUIDv4(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard utf8.count == 36 else { return false }
        var i = 0
        for b in utf8 {
            switch i {
            case 8, 13, 18, 23:
                if b != UInt8(ascii: "-") { return false }
            case 14:
                if b != UInt8(ascii: "4") { return false }
            case 19:
                if !(b == UInt8(ascii: "8") || b == UInt8(ascii: "9") || b == UInt8(ascii: "a") || b == UInt8(ascii: "b")) { return false }
            default:
                if !((b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66)) { return false }
            }
            i += 1
        }
        return true
    }

    /// The role of a well-formed identifier, or nil when `text` is not `{role}_{uuid-v4}`.
    package static func role(of text: String) -> Role? {
        guard let underscore = text.firstIndex(of: "_"),
              let role = Role(rawValue: String(text[..<underscore])),
              isUUIDv4(text[text.index(after: underscore)...]) else { return nil }
        return role
    }

    package static func isValid(_ text: String) -> Bool { role(of: text) != nil }

    /// `phone_ce2c2334-37fe-…` → `phone_ce2c2334`: enough to tell a household's devices apart.
    package static func short(_ nodeID: String) -> String {
        guard let underscore = nodeID.firstIndex(of: "_") else { return String(nodeID.prefix(16)) }
        return String(nodeID[...underscore]) + nodeID[nodeID.index(after: underscore)...].prefix(8)
    }
}
