/// What a node tells its local network about itself (PROTOCOL.md §1.3): its node ID and role, the
/// fingerprint of its key, the TCP port it listens on, and an instance number drawn at each start
/// (so a restart is noticed). It proves nothing: a receiver dials an announcer only when the node
/// ID is trusted and the fingerprint is the one pinned for it, and the TLS handshake proves the
/// rest. One UDP datagram, 49 + n bytes, n the node ID's length:
///
///     "LSDA" | version u8 = 1 | role u8 | port u16 | fingerprint 32 | instance u64 | n u8 | node ID n
///
/// ```swift
/// let bytes = Announcement(nodeID: id, fingerprint: key, port: 7002, instance: 42).encoded()
/// let heard = try Announcement(decoding: bytes[...])   // or AnnouncementError, by name
/// ```
public struct Announcement: Equatable, Sendable {
    /// The UDP port nodes announce to and listen on (Syncthing's local discovery uses 21027).
    public static let port: UInt16 = 21047
    /// How often a node announces itself, ms (and at start, and when an interface appears).
    public static let interval: Int64 = 30_000
    public static let magic: [UInt8] = Array("LSDA".utf8)
    public static let version: UInt8 = 1
    /// Bytes before the node ID: magic 4, version 1, role 1, port 2, fingerprint 32, instance 8, length 1.
    public static let headerSize = 49
    /// The longest node ID an announcement carries (real ones are 40–42 bytes).
    public static let maximumNodeIDLength = 64
    /// The largest well-formed announcement; anything larger is refused before it is looked at.
    public static let maximumSize = headerSize + maximumNodeIDLength

    public var nodeID: String
    package var fingerprint: SHA256.Digest
    /// The TCP port the announcer accepts peers on (1–65535); its address is the datagram's source.
    public var port: UInt16
    /// Drawn at random when the node starts: a new value means the announcer restarted.
    public var instance: UInt64

    package init(nodeID: String, fingerprint: SHA256.Digest, port: UInt16, instance: UInt64) {
        precondition(Identifier.isValid(nodeID) && nodeID.utf8.count <= Self.maximumNodeIDLength, "an announcement names a valid node ID")
        precondition(port > 0, "an announcement names the port the node listens on")
        self.nodeID = nodeID
        self.fingerprint = fingerprint
        self.port = port
        self.instance = instance
    }

    public var role: Role { Identifier.role(of: nodeID)! }

    /// The datagram.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.headerSize + nodeID.utf8.count)
        writer.raw(Self.magic)
        writer.u8(Self.version)
        writer.u8(role.wireCode)
        writer.u16(port)
        writer.digest(fingerprint)
        writer.u64(instance)
        writer.u8(UInt8(nodeID.utf8.count))
        writer.raw(Array(nodeID.utf8))
        return writer.bytes
    }

    /// Reads a datagram, accepting only the exact shape above: every size is checked before
    /// anything is read or allocated, and the first defect is named.
    public init(decoding bytes: ArraySlice<UInt8>) throws(AnnouncementError) {
        guard bytes.count <= Self.maximumSize else { throw .tooLarge(bytes.count) }
        guard bytes.count >= Self.headerSize else { throw .tooShort(bytes.count) }
        let b = Array(bytes)
        guard Array(b[0..<4]) == Self.magic else { throw .badMagic }
        guard b[4] == Self.version else { throw .unsupportedVersion(b[4]) }
        guard let role = Role(wireCode: b[5]) else { throw .unknownRole(b[5]) }
        let port = UInt16(b[6]) << 8 | UInt16(b[7])
        guard port > 0 else { throw .portZero }
        let instance = b[40..<48].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let length = Int(b[48])
        guard length > 0, length <= Self.maximumNodeIDLength else { throw .nodeIDLength(length) }
        guard b.count == Self.headerSize + length else { throw .sizeMismatch(expected: Self.headerSize + length, actual: b.count) }
        guard let nodeID = String(validating: b[Self.headerSize...], as: UTF8.self), let named = Identifier.role(of: nodeID),
              nodeID.utf8.count == length else { throw .badNodeID }
        guard named == role else { throw .roleMismatch(code: role, nodeID: named) }
        self.init(nodeID: nodeID, fingerprint: SHA256.Digest(bytes: Array(b[8..<40])), port: port, instance: instance)
    }
}

/// Why a datagram on the discovery port is not an announcement (PROTOCOL.md §1.3).
public enum AnnouncementError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLarge(Int)
    case tooShort(Int)
    case badMagic
    case unsupportedVersion(UInt8)
    case unknownRole(UInt8)
    case portZero
    case nodeIDLength(Int)
    /// The node ID's length byte and the datagram's size disagree (truncated, or bytes after it).
    case sizeMismatch(expected: Int, actual: Int)
    case badNodeID
    case roleMismatch(code: Role, nodeID: Role)

    /// The snake_case name the test vectors use (`Protocol/vectors/discovery.json`).
    public var name: String {
        switch self {
        case .tooLarge: return "too_large"
        case .tooShort: return "too_short"
        case .badMagic: return "bad_magic"
        case .unsupportedVersion: return "unsupported_version"
        case .unknownRole: return "unknown_role"
        case .portZero: return "port_zero"
        case .nodeIDLength: return "node_id_length"
        case .sizeMismatch: return "size_mismatch"
        case .badNodeID: return "bad_node_id"
        case .roleMismatch: return "role_mismatch"
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let n): return "\(n) bytes, more than the \(Announcement.maximumSize) of an announcement"
        case .tooShort(let n): return "\(n) bytes, fewer than the \(Announcement.headerSize) of an announcement's header"
        case .badMagic: return "not an announcement (no LSDA magic)"
        case .unsupportedVersion(let v): return "announcement version \(v) (this node speaks \(Announcement.version))"
        case .unknownRole(let code): return "unknown role code \(code)"
        case .portZero: return "port 0"
        case .nodeIDLength(let n): return "node ID length \(n) (1–\(Announcement.maximumNodeIDLength))"
        case .sizeMismatch(let expected, let actual): return "\(actual) bytes where its node ID length makes \(expected)"
        case .badNodeID: return "the node ID is not {role}_{uuid-v4}"
        case .roleMismatch(let code, let nodeID): return "role code says \(code.rawValue), node ID says \(nodeID.rawValue)"
        }
    }
}
