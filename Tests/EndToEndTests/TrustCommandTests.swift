import Foundation
import Testing
import TestSupport

/// `lifesync trust` as a user types it: a pin is not moved by accident, and a node's own key is
/// not trusted as another node.
@Suite(.serialized) struct TrustCommandTests {
    static func id(_ db: String) throws -> [String: Any] {
        let result = try LifeSyncBinary.run(["id", "--json", "--db", db])
        guard result.status == 0, let object = try parseJSON(result.stdout) as? [String: Any] else { throw ServeError("id: \(result.stderr)") }
        return object
    }

    @Test func aTrustedNodeIDIsRePinnedOnlyWithReplaceAndTheOldKeyIsUntrusted() throws {
        let folder = TemporaryDirectory("lifesync-trust")
        let phone = folder.file("phone.sqlite"), mac = folder.file("mac.sqlite"), reset = folder.file("reset.sqlite")
        for (db, role) in [(phone, "phone"), (mac, "mac")] {
            #expect(try LifeSyncBinary.run(["init", "--role", role, "--db", db]).status == 0)
        }
        let macID = try Self.id(mac)
        #expect(try LifeSyncBinary.run(["trust", macID["pairing"] as! String, "--db", phone]).status == 0)
        // The same node ID under another key: the mac's file copied without its key (a reset
        // device, or one claiming the mac's ID).
        try FileManager.default.copyItem(atPath: mac, toPath: reset)
        let other = try Self.id(reset)
        #expect(other["node_id"] as? String == macID["node_id"] as? String && other["fingerprint"] as? String != macID["fingerprint"] as? String)
        let refused = try LifeSyncBinary.run(["trust", other["pairing"] as! String, "--db", phone])
        let old = String((macID["fingerprint"] as! String).prefix(16)), new = String((other["fingerprint"] as! String).prefix(16))
        #expect(refused.status != 0 && refused.stderr.contains(old) && refused.stderr.contains(new) && refused.stderr.contains("--replace"), "\(refused.stderr)")
        var peers = try parseJSON(try LifeSyncBinary.run(["peers", "--json", "--db", phone]).stdout) as? [String: Any]
        #expect((peers?["trusted"] as? [[String: Any]])?.first?["fingerprint"] as? String == macID["fingerprint"] as? String, "the pin moved")

        let replaced = try LifeSyncBinary.run(["trust", other["pairing"] as! String, "--replace", "--db", phone])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        peers = try parseJSON(try LifeSyncBinary.run(["peers", "--json", "--db", phone]).stdout) as? [String: Any]
        #expect((peers?["trusted"] as? [[String: Any]])?.first?["fingerprint"] as? String == other["fingerprint"] as? String)
        // The key replaced is untrusted: its pairing string alone does not bring it back.
        let back = try LifeSyncBinary.run(["trust", macID["pairing"] as! String, "--replace", "--db", phone])
        #expect(back.status != 0 && back.stderr.contains("--again"), "\(back.stderr)")
    }

    @Test func aNodesOwnKeyIsNotTrustedAsAnotherNode() throws {
        let folder = TemporaryDirectory("lifesync-trust-own")
        let phone = folder.file("phone.sqlite")
        #expect(try LifeSyncBinary.run(["init", "--role", "phone", "--db", phone]).status == 0)
        let own = try Self.id(phone)
        let forged = "lifesync://mac_7c9e6679-7425-40de-944b-e07fc1f90ae7?key=\(own["fingerprint"] as! String)"
        let refused = try LifeSyncBinary.run(["trust", forged, "--db", phone])
        #expect(refused.status != 0 && refused.stderr.contains("this node's own key"), "\(refused.stderr)")
        let peers = try parseJSON(try LifeSyncBinary.run(["peers", "--json", "--db", phone]).stdout) as? [String: Any]
        #expect((peers?["trusted"] as? [[String: Any]])?.isEmpty == true)
    }
}
