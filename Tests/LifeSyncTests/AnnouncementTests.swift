import LifeSync
import Testing
import TestSupport

/// The LAN discovery packet (PROTOCOL.md §1.3): it round-trips, and every shape but the exact one
/// is refused with the defect named, before anything is allocated for it.
@Suite struct AnnouncementTests {
    static let macID = "mac_7c9e6679-7425-40de-944b-e07fc1f90ae7"
    static let watchID = "watch_550e8400-e29b-41d4-a716-446655440000"
    static let key = SHA256.hash(Array("key".utf8))

    static func sample(_ nodeID: String = macID) -> Announcement {
        Announcement(nodeID: nodeID, fingerprint: key, port: 7002, instance: 0x0102_0304_0506_0708)
    }

    @Test func anAnnouncementRoundTripsAtItsDocumentedSize() throws {
        for nodeID in [Self.macID, Self.watchID] {
            let bytes = Self.sample(nodeID).encoded()
            #expect(bytes.count == Announcement.headerSize + nodeID.utf8.count)
            #expect(Array(bytes[0..<4]) == Array("LSDA".utf8))
            #expect(try Announcement(decoding: bytes[...]) == Self.sample(nodeID))
            // A slice that does not start at index 0 (as the runtime's receive buffer gives) reads the same.
            let padded = [0xAA] + bytes
            #expect(try Announcement(decoding: padded[1...]) == Self.sample(nodeID))
        }
        #expect(Announcement.maximumSize == 113)
        #expect(Self.sample().role == .mac)
    }

    /// One defect each; the error names it.
    @Test func everyMalformedShapeIsRefusedByName() {
        let good = Self.sample().encoded()
        func patched(_ index: Int, _ value: UInt8) -> [UInt8] { var b = good; b[index] = value; return b }
        let cases: [(String, [UInt8], AnnouncementError)] = [
            ("empty", [], .tooShort(0)),
            ("header only, cut", Array(good.prefix(48)), .tooShort(48)),
            ("oversized", good + [UInt8](repeating: 0, count: 200), .tooLarge(good.count + 200)),
            ("magic", patched(0, 0x58), .badMagic),
            ("version 2", patched(4, 2), .unsupportedVersion(2)),
            ("version 0", patched(4, 0), .unsupportedVersion(0)),
            ("role 0", patched(5, 0), .unknownRole(0)),
            ("role 4", patched(5, 4), .unknownRole(4)),
            ("port 0", { var b = good; b[6] = 0; b[7] = 0; return b }(), .portZero),
            ("node ID length 0", patched(48, 0), .nodeIDLength(0)),
            ("node ID length 65", patched(48, 65), .nodeIDLength(65)),
            ("node ID cut", Array(good.dropLast()), .sizeMismatch(expected: good.count, actual: good.count - 1)),
            ("trailing byte", good + [0], .sizeMismatch(expected: good.count, actual: good.count + 1)),
            ("length says less", patched(48, UInt8(Self.macID.utf8.count - 1)), .sizeMismatch(expected: good.count - 1, actual: good.count)),
            ("node ID not a UUID", patched(good.count - 1, 0x7A), .badNodeID),
            ("node ID not UTF-8", patched(good.count - 1, 0xFF), .badNodeID),
            ("role code says watch", patched(5, 1), .roleMismatch(code: .watch, nodeID: .mac)),
        ]
        for (what, bytes, expected) in cases {
            #expect(throws: expected, "\(what)") { try Announcement(decoding: bytes[...]) }
            #expect(!expected.description.isEmpty && !expected.name.isEmpty)
        }
    }
}
