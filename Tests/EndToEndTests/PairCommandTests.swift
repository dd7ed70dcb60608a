import Dispatch
import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// `lifesync pair`: numeric comparison as a user does it, with a serving phone and a mac that
/// has never seen it. Nothing is trusted on either side until both users confirmed the code.
@Suite(.serialized) struct PairCommandTests {
    static func key(_ node: ServeNode) throws -> NodeKey { try NodeKey.load(from: NodeKey.path(forReplica: node.db)) }

    @Test(.timeLimit(.minutes(2)))
    func pairingByCodeTrustsBothSidesOnlyAfterBothConfirm() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac", paired: false)
        try PairingTests.add(mac, "written on the mac before pairing")
        try phone.start()

        // A code that is not the one of these two keys stops the pairing side: nothing trusted.
        let first = try LifeSyncBinary.run(["pair", phone.address, "--db", mac.db, "--code", "000 000", "--timeout", "5"])
        let code = PairingCode(try Self.key(mac).fingerprint, try Self.key(phone).fingerprint)
        let wrong = String(format: "%06d", (code.value + 1) % 1_000_000)
        #expect(first.stdout.contains("pairing code: \(code)"), "\(first.stdout)")
        if code.value != 0 { #expect(first.status == 1 && first.stderr.contains("nothing trusted"), "\(first.stderr)") }
        #expect((try PairingTests.peersJSON(mac)["trusted"] as? [Any])?.isEmpty == true)

        // The phone lists the mac with the same code; the mac waits for the phone's yes.
        let shown = eventually(timeout: 10) {
            ((try? PairingTests.peersJSON(phone))?["pending"] as? [[String: Any]])?.contains {
                $0["claimed_node_id"] as? String == mac.nodeID && $0["code"] as? String == code.description
            } == true
        }
        #expect(shown, "the phone does not show the mac with code \(code)\n\(phone.allOutput)")
        let pairing = DispatchGroup()
        nonisolated(unsafe) var result: LifeSyncBinary.Result?
        let arguments = ["pair", phone.address, "--db", mac.db, "--code", code.description, "--timeout", "30"]
        DispatchQueue.global().async(group: pairing) {
            result = try? LifeSyncBinary.run(arguments, timeout: 60)
        }
        usleep(1_500_000)
        #expect((try PairingTests.peersJSON(mac)["trusted"] as? [Any])?.isEmpty == true, "the mac trusted the phone before the phone's user confirmed")
        let mistyped = try LifeSyncBinary.run(["trust", "--accept", mac.nodeID, "--code", wrong, "--db", phone.db])
        #expect(mistyped.status == 1 && mistyped.stderr.contains("nothing trusted"), "\(mistyped.stderr)")
        let accepted = try LifeSyncBinary.run(["trust", "--accept", mac.nodeID, "--code", code.description, "--db", phone.db])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(pairing.wait(timeout: .now() + 60) == .success)
        #expect(result?.status == 0 && result?.stdout.contains("paired with \(phone.nodeID)") == true, "\(String(describing: result))")

        // Each side trusts the other's key; the mac dials the phone at the address it paired with.
        let macTrusts = try PairingTests.peersJSON(mac)["trusted"] as? [[String: Any]] ?? []
        let phoneKey = try Self.key(phone).fingerprint.hex
        #expect(macTrusts.first?["node_id"] as? String == phone.nodeID && macTrusts.first?["fingerprint"] as? String == phoneKey)
        #expect((macTrusts.first?["addresses"] as? [String]) == [phone.address])
        try mac.start(peers: [], listen: false)
        #expect(eventually(timeout: 20) { phone.entryCount == 1 }, "no sync after pairing\n\(phone.allOutput)\n\(mac.allOutput)")
    }
}
