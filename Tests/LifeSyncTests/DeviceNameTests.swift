import LifeSync
import Testing
import TestSupport

/// Device names: what a name may be, and whose name shows for a node (the user's over the
/// announced one), kept in the replica.
@Suite struct DeviceNameTests {
    static let watchID = "watch_550e8400-e29b-41d4-a716-446655440000"

    @Test func aNameIsOneToSixtyFourCharactersWithoutControlCharacters() throws {
        #expect(try DeviceName.validated("  Kitchen iPad ") == "Kitchen iPad")
        #expect(try DeviceName.validated("Anna’s ⌚️ 👩‍💻") == "Anna’s ⌚️ 👩‍💻", "emoji with joiners are names")
        #expect(try DeviceName.validated(String(repeating: "é", count: 64)).count == 64)
        let refusals: [(String, String)] = [
            ("", "must not be empty"), ("   ", "must not be empty"),
            (String(repeating: "x", count: 65), "at most 64 characters, this one has 65"),
            ("Kitchen\niPad", "control characters (found U+000A at character 8)"),
            ("tab\there", "U+0009"), ("\u{1B}[31mred", "U+001B"), ("evil\u{202E}txt", "U+202E"),
        ]
        for (text, reason) in refusals {
            #expect(throws: ValidationError.self, "\(text.debugDescription)") { try DeviceName.validated(text, field: "--name") }
            do { _ = try DeviceName.validated(text, field: "--name") } catch {
                #expect(error.field == "--name" && error.reason.contains(reason), "\(text.debugDescription): \(error)")
            }
        }
    }

    @Test func theUsersLocalNameWinsOverTheAnnouncedOneUntilForgotten() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 1)
        #expect(try phone.ownName() == nil && phone.peerName(for: Self.watchID) == nil)
        try phone.setOwnName("Kitchen iPad")
        #expect(try phone.ownName() == "Kitchen iPad")
        #expect(try phone.peerName(for: phone.identity.nodeID) == "Kitchen iPad")

        try phone.recordPeerName("Running watch", for: Self.watchID)
        #expect(try phone.peerName(for: Self.watchID) == "Running watch")
        try phone.setLocalPeerName("Anna's watch", for: Self.watchID)
        try phone.recordPeerName("Renamed watch", for: Self.watchID)
        #expect(try phone.peerName(for: Self.watchID) == "Anna's watch", "the user's name wins over a later announcement")
        let both = try #require(try phone.deviceNames()[Self.watchID])
        #expect(both.announced == "Renamed watch" && both.local == "Anna's watch")
        try phone.setLocalPeerName(nil, for: Self.watchID)
        #expect(try phone.peerName(for: Self.watchID) == "Renamed watch")
        #expect(try phone.sqliteRow("SELECT announced_name, local_name FROM device_names WHERE node_id = '\(Self.watchID)'")
                == "Renamed watch|")
    }

    /// Names travel in HELLO (PROTOCOL.md §5.1): each side learns the other's, a name the user
    /// gave the peer locally still wins, and a name breaking the rules is ignored, not fatal.
    @Test func namesTravelInTheHandshake() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 31), mac = try ReplicaFixtures.replica(role: .mac, seed: 32)
        try phone.setOwnName("Kitchen iPhone")
        try mac.setOwnName("Study Mac")
        try mac.setLocalPeerName("Anna's phone", for: phone.identity.nodeID)
        let pair = SessionPair(phone, mac)
        pair.start()
        #expect(pair.run())
        #expect(try phone.peerName(for: mac.identity.nodeID) == "Study Mac")
        #expect(try mac.peerName(for: phone.identity.nodeID) == "Anna's phone", "the user's own name for it wins")
        #expect(try mac.deviceNames()[phone.identity.nodeID]?.announced == "Kitchen iPhone")
        // A HELLO with a name that breaks the rules opens all the same, and names nobody.
        let watch = try ReplicaFixtures.replica(role: .mac, seed: 33)
        let session = SyncSession(replica: watch, configuration: .init(), now: 0)
        _ = session.start(now: 0)
        let hello = Hello(nodeID: Self.watchID, role: .watch, incarnation: "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e", capabilities: [.seals, .receivesEntries],
                          clock: .zero, vector: VersionVector(), name: "bell\u{7}")
        _ = session.receive(Message.hello(hello).encoded(), now: 1)
        #expect(session.state == .open)
        #expect(try watch.peerName(for: Self.watchID) == nil)
    }

    @Test func badNamesAndNodeIDsAreRefusedNamingTheProblem() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 2)
        for (attempt, expected) in [
            ({ try phone.setOwnName("") }, "name: a device name must not be empty"),
            ({ try phone.recordPeerName("a\u{7}b", for: Self.watchID) }, "announced name: a device name must not hold control characters"),
            ({ try phone.setLocalPeerName("Mine", for: phone.identity.nodeID) }, "is this node; name it with lifesync name"),
            ({ try phone.setLocalPeerName("Mine", for: "kitchen") }, "NODE_ID: 'kitchen' is not a node ID"),
        ] as [(() throws -> Void, String)] {
            do {
                try attempt()
                Issue.record("accepted; expected \(expected)")
            } catch ReplicaError.invalid(let error) {
                #expect(error.description.contains(expected), "\(error)")
            }
        }
        #expect(try phone.deviceNames().isEmpty, "nothing was written")
    }
}

private extension Replica {
    /// One row, its columns joined by `|` (NULL as empty).
    func sqliteRow(_ sql: String) throws -> String? {
        try database.firstRow(sql) { row in (0..<2).map { row.optionalString($0) ?? "" }.joined(separator: "|") }
    }
}
