import Foundation
import LifeSync
import Testing
import TestSupport

/// The trust store and the pairing string: a key names one node, untrusting takes effect, the
/// untrusted keys that tried are kept for the user but bounded, and a pairing string is read
/// strictly.
@Suite struct TrustStoreTests {
    static func key(_ n: UInt8) -> SHA256.Digest { SHA256.hash([n]) }
    static let macID = "mac_7c9e6679-7425-40de-944b-e07fc1f90ae7"
    static let watchID = "watch_550e8400-e29b-41d4-a716-446655440000"

    @Test func aTrustedKeyNamesItsNodeAndUntrustingForgetsIt() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 1)
        #expect(try phone.trustedPeer(fingerprint: Self.key(1)) == nil)
        let mac = TrustedPeer(nodeID: Self.macID, role: .mac, fingerprint: Self.key(1), addresses: ["192.168.1.20:7002"], trustedAt: phone.now)
        try phone.trust(mac)
        #expect(try phone.trustedPeer(fingerprint: Self.key(1)) == mac)
        #expect(try phone.trustedPeers() == [mac])
        // Another key for the same node replaces the pin only when the user says so, naming both
        // keys otherwise; the key replaced is then untrusted.
        var renewed = mac
        renewed.fingerprint = Self.key(2)
        do {
            try phone.trust(renewed)
            Issue.record("a second key for a trusted node ID replaced the pin silently")
        } catch {
            #expect("\(error)".contains(Self.key(1).hex.prefix(16)) && "\(error)".contains(Self.key(2).hex.prefix(16))
                    && "\(error)".contains("--replace"), "\(error)")
        }
        #expect(try phone.trustedPeer(fingerprint: Self.key(1)) == mac)
        try phone.trust(renewed, replacing: true)
        #expect(try phone.trustedPeer(fingerprint: Self.key(1)) == nil)
        #expect(try phone.revocation(of: Self.key(1))?.nodeID == Self.macID)
        #expect(try phone.trustedPeer(fingerprint: Self.key(2))?.nodeID == Self.macID)
        #expect(try phone.untrust(nodeID: Self.macID))
        #expect(try phone.trustedPeer(fingerprint: Self.key(2)) == nil)
        #expect(try !phone.untrust(nodeID: Self.macID))
    }

    /// An old pairing string (replayed, or left in a script) must not undo an untrust, and the
    /// untrusted key is not offered again as pending; the user can still trust it on purpose.
    @Test func anUntrustedKeyIsRefusedUntilTrustedAgainOnPurpose() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 2)
        let pairing = PairingString(nodeID: Self.macID, fingerprint: Self.key(3), addresses: ["10.0.0.2:7002"])
        try phone.trust(pairing.peer(trustedAt: phone.now))
        #expect(try phone.untrust(nodeID: Self.macID))
        #expect(try phone.revocation(of: Self.key(3))?.nodeID == Self.macID)
        do {
            try phone.trust(pairing.peer(trustedAt: phone.now))
            Issue.record("a replayed pairing string re-trusted an untrusted key")
        } catch {
            #expect("\(error)".contains("was untrusted") && "\(error)".contains("--again"), "\(error)")
        }
        #expect(try phone.trustedPeers().isEmpty)
        try phone.notePending(fingerprint: Self.key(3), claimedNodeID: Self.macID, claimedRole: .mac, address: "10.0.0.2:50000")
        #expect(try phone.pendingPeers().isEmpty, "an untrusted key is not offered for acceptance")
        // Another key for the same node is a new pairing, not a replay.
        try phone.notePending(fingerprint: Self.key(4), claimedNodeID: Self.macID, claimedRole: .mac, address: "10.0.0.2:50001")
        #expect(try phone.pendingPeers().count == 1)
        try phone.trust(pairing.peer(trustedAt: phone.now), again: true)
        #expect(try phone.trustedPeer(fingerprint: Self.key(3))?.nodeID == Self.macID)
        #expect(try phone.revocation(of: Self.key(3)) == nil, "trusting again clears the revocation")
    }

    @Test func oneKeyCannotNameTwoNodesNorThisNode() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 2)
        try phone.trust(TrustedPeer(nodeID: Self.macID, role: .mac, fingerprint: Self.key(3), trustedAt: phone.now))
        #expect(throws: ReplicaError.self) {
            try phone.trust(TrustedPeer(nodeID: Self.watchID, role: .watch, fingerprint: Self.key(3), trustedAt: phone.now))
        }
        #expect(throws: ReplicaError.self) {
            try phone.trust(TrustedPeer(nodeID: phone.identity.nodeID, role: .phone, fingerprint: Self.key(4), trustedAt: phone.now))
        }
        // This node's own key under another node's ID: one fingerprint names one node.
        do {
            try phone.trust(TrustedPeer(nodeID: Self.watchID, role: .watch, fingerprint: Self.key(5), trustedAt: phone.now), ownKey: Self.key(5))
            Issue.record("this node's own key was trusted as another node")
        } catch {
            #expect("\(error)".contains("this node's own key"), "\(error)")
        }
        #expect(try phone.trustedPeers().map(\.nodeID) == [Self.macID])
    }

    @Test func pendingKeysAreCountedBoundedAndAcceptedByTheirClaim() throws {
        let clock = ManualClock(milliseconds: ReplicaFixtures.epoch)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 3, clock: clock)
        try phone.notePending(fingerprint: Self.key(9), claimedNodeID: nil, claimedRole: nil, address: "10.0.0.9:51000")
        clock.advance(by: 1_000)
        try phone.notePending(fingerprint: Self.key(9), claimedNodeID: Self.watchID, claimedRole: .watch, address: "10.0.0.9:51001")
        let first = try #require(try phone.pendingPeers().first)
        #expect(first.attempts == 2 && first.claimedNodeID == Self.watchID && first.address == "10.0.0.9:51001")
        #expect(first.lastSeen.millisecondsSince1970 - first.firstSeen.millisecondsSince1970 == 1_000)
        // A claim that is not a node ID is not kept.
        try phone.notePending(fingerprint: Self.key(10), claimedNodeID: "'; DROP TABLE entries; --", claimedRole: .mac, address: "10.0.0.10:1")
        #expect(try phone.pendingPeers().first { $0.fingerprint == Self.key(10) }?.claimedNodeID == nil)
        // A flood of fresh keys that claim nothing keeps only the most recent
        // `anonymousPendingLimit` of them, and cannot push out a device waiting to be paired.
        for n in 0..<200 {
            clock.advance(by: 10)
            try phone.notePending(fingerprint: SHA256.hash([0xF0, UInt8(n)]), claimedNodeID: nil, claimedRole: nil, address: "10.0.1.\(n):1")
        }
        var pending = try phone.pendingPeers()
        #expect(pending.count == Replica.anonymousPendingLimit + 1)
        #expect(pending.first?.fingerprint == SHA256.hash([0xF0, 199]))
        #expect(pending.contains { $0.fingerprint == Self.key(9) }, "the claimed key waiting to be paired was pushed out")
        // Keys claiming node IDs are bounded by `pendingLimit`, and one host holds at most
        // `pendingPerHost` of them, whatever it claims.
        for n in 0..<40 {
            clock.advance(by: 10)
            try phone.notePending(fingerprint: SHA256.hash([0xF1, UInt8(n)]), claimedNodeID: Identifier.make(role: .mac, random: SeededRandom(seed: UInt64(n))),
                                  claimedRole: .mac, address: "10.0.2.1:\(n)")
        }
        pending = try phone.pendingPeers()
        #expect(pending.filter { $0.address.hasPrefix("10.0.2.1:") }.count == Replica.pendingPerHost)
        #expect(pending.contains { $0.fingerprint == Self.key(9) }, "one host's claims pushed out another's")
        for n in 0..<40 {
            clock.advance(by: 10)
            try phone.notePending(fingerprint: SHA256.hash([0xF2, UInt8(n)]), claimedNodeID: Identifier.make(role: .mac, random: SeededRandom(seed: 100 + UInt64(n))),
                                  claimedRole: .mac, address: "10.0.3.\(n):1")
        }
        pending = try phone.pendingPeers()
        #expect(pending.filter { $0.claimedNodeID != nil }.count == Replica.pendingLimit)
        #expect(!pending.contains { $0.fingerprint == Self.key(9) }, "past pendingLimit claims, the least recently seen goes")
        // Accepting goes by the claim; the key then is trusted and no longer pending.
        clock.advance(by: 10)
        try phone.notePending(fingerprint: Self.key(9), claimedNodeID: Self.watchID, claimedRole: .watch, address: "10.0.0.9:51002")
        #expect(try phone.acceptPending(nodeID: Self.macID, fingerprint: Self.key(9)) == nil)
        #expect(try phone.acceptPending(nodeID: Self.watchID, fingerprint: Self.key(8)) == nil, "only the key compared is accepted")
        let accepted = try #require(try phone.acceptPending(nodeID: Self.watchID, fingerprint: Self.key(9)))
        #expect(accepted.role == .watch && accepted.fingerprint == Self.key(9))
        #expect(try phone.trustedPeer(fingerprint: Self.key(9))?.nodeID == Self.watchID)
        #expect(try !phone.pendingPeers().contains { $0.fingerprint == Self.key(9) })
    }

    @Test func aPairingStringRoundTripsAndIsReadStrictly() throws {
        let pairing = PairingString(nodeID: Self.macID, fingerprint: Self.key(5), addresses: ["192.168.1.20:7002", "[fe80::1]:7002"])
        let text = pairing.description
        #expect(text.hasPrefix("lifesync://mac_7c9e6679-7425-40de-944b-e07fc1f90ae7?key="))
        #expect(try PairingString(parsing: "  " + text + "\n") == pairing)
        #expect(pairing.peer(trustedAt: Timestamp(millisecondsSince1970: 0)).role == .mac)
        let hex = Self.key(5).hex
        let refused: [(String, String)] = [
            ("http://\(Self.macID)?key=\(hex)", "does not start"),
            ("lifesync://\(Self.macID)", "no ?key="),
            ("lifesync://mac_not-a-uuid?key=\(hex)", "not a node ID"),
            ("lifesync://\(Self.macID)?key=\(hex.uppercased())", "64 lowercase hex"),
            ("lifesync://\(Self.macID)?key=\(hex.dropLast())", "64 lowercase hex"),
            ("lifesync://\(Self.macID)?key=\(hex)&key=\(hex)", "key twice"),
            ("lifesync://\(Self.macID)?addr=1.2.3.4:5", "no key"),
            ("lifesync://\(Self.macID)?key=\(hex)&addr=1.2.3.4", "host:port"),
            ("lifesync://\(Self.macID)?key=\(hex)&addr=1.2.3.4:0", "host:port"),
            ("lifesync://\(Self.macID)?key=\(hex)&addr=evil host:7", "host:port"),
            ("lifesync://\(Self.macID)?key=\(hex)&addr=a:1&addr=a:1", "twice"),
            ("lifesync://\(Self.macID)?key=\(hex)&fp=1", "unknown part"),
            ("lifesync://\(Self.macID)?key=\(hex)" + String(repeating: "&addr=h:1", count: 120), "longer than"),
            ("lifesync://\(Self.macID)?key=\(hex)" + (1...9).map { "&addr=h\($0):1" }.joined(), "more than 8"),
        ]
        for (text, reason) in refused {
            do {
                _ = try PairingString(parsing: text)
                Issue.record("accepted \(text)")
            } catch let error as ValidationError {
                #expect(error.reason.contains(reason), "\(text): \(error.reason)")
            }
        }
    }
}

/// `Protocol/vectors/pairing.json`: pairing strings another implementation must read the same way.
@Suite struct PairingVectorTests {
    @Test func everyPairingVectorParsesOrIsRefusedAsItSays() throws {
        let url = ProtocolVectorTests.directory.appendingPathComponent("pairing.json")
        let document = try JSONValue.parse(try String(contentsOf: url, encoding: .utf8))
        guard case .array(let vectors)? = document["vectors"] else { Issue.record("no vectors"); return }
        var counts = (valid: 0, invalid: 0)
        for vector in vectors {
            guard case .string(let name)? = vector["name"], case .string(let text)? = vector["text"], case .bool(let valid)? = vector["valid"] else {
                Issue.record("a vector lacks name, text or valid"); continue
            }
            let parsed = try? PairingString(parsing: text)
            #expect((parsed != nil) == valid, "\(name)")
            guard valid, let parsed else { counts.invalid += 1; continue }
            counts.valid += 1
            #expect(vector["node_id"] == .string(parsed.nodeID), "\(name)")
            #expect(vector["role"] == .string(parsed.role.rawValue), "\(name)")
            #expect(vector["fingerprint"] == .string(parsed.fingerprint.hex), "\(name)")
            #expect(vector["addresses"] == .array(parsed.addresses.map(JSONValue.string)), "\(name)")
            #expect(parsed.description == text, "\(name): written back exactly")
        }
        #expect(counts.valid >= 2 && counts.invalid >= 10)
    }

    /// PROTOCOL.md §1.2's worked example, the same from either side, and the typed forms taken.
    @Test func thePairingCodeIsTheSpecsFromEitherSide() {
        let a = SHA256.hash(Array("test".utf8)), b = SHA256.hash(Array("abc".utf8))
        #expect(PairingCode(a, b).description == "264 434")
        #expect(PairingCode(b, a) == PairingCode(a, b))
        #expect(PairingCode(a, b).matches("264434") && PairingCode(a, b).matches("264 434") && PairingCode(a, b).matches("264-434"))
        #expect(!PairingCode(a, b).matches("264435") && !PairingCode(a, b).matches("26443") && !PairingCode(a, b).matches("２６４４３４"))
        #expect(PairingCode(a, a) != PairingCode(a, b))
    }

    /// Codes are not tried until one fits: wrong ones are counted, and at `wrongCodeLimit` the
    /// keys claiming that ID are forgotten.
    @Test func wrongPairingCodesAreCountedAndEndTheClaim() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 4)
        try phone.notePending(fingerprint: TrustStoreTests.key(7), claimedNodeID: TrustStoreTests.macID, claimedRole: .mac, address: "10.0.0.7:1")
        #expect(try phone.noteWrongCode(nodeID: TrustStoreTests.macID) == (1, false))
        #expect(try phone.pendingPeers().first?.wrongCodes == 1)
        #expect(try phone.noteWrongCode(nodeID: TrustStoreTests.macID) == (2, false))
        #expect(try phone.noteWrongCode(nodeID: TrustStoreTests.macID) == (3, true))
        #expect(try phone.pendingPeers().isEmpty)
    }
}
