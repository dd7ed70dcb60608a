import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// A paired device that writes under another device's origin (issue 25 §4, issue 29 §1), against
/// real `lifesync serve` processes: it sends the phone a write of the mac's incarnation at the
/// mac's next sequence number, sealed with its own key. Before seals, the phone stored it there and
/// the mac's real write at that number never arrived ("pending 0" on the mac). Now the phone
/// refuses it with ERROR forged_change, stores nothing of it, says so in `status`, and the mac's
/// real write arrives when the mac next syncs.
@Suite struct ForgedWriteTests {
    @Test func aWriteForgedUnderAnotherDevicesOriginIsRefusedAndTheRealOneArrives() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone"), mac = try group.node("mac", role: "mac")
        try phone.start()
        // The mac writes while it does not serve: its next number is taken by this write.
        let macStatus = try mac.status()
        let incarnation = try #require(macStatus["incarnation"] as? String)
        let honest = try mac.cli(["add", "--json", #"{"category": "note", "data": {"text": "the mac's own write"}}"#])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let next = UInt64(try #require((try mac.status()["vector"] as? [String: Any])?[incarnation] as? Int))

        // The buggy device: paired with the phone, it writes as the mac at that number.
        let store = try Replica(path: phone.db, clock: SystemClock(), random: SystemRandom())
        let hello = RawPeer.macHello()
        let buggy = try RawPeer.trusted(as: hello.nodeID, by: store, port: phone.port)
        buggy.send(Message.hello(hello).encoded())
        let forgedID = "phone_" + Identifier.uuidV4(random: SystemRandom())
        let time = Timestamp(millisecondsSince1970: 1_795_305_600_000).iso8601
        let payload = Array(#"{"data":{"text":"forged"},"device_id":"\#(mac.nodeID)","id":"\#(forgedID)","recorded_at":"\#(time)","source":"mac","timestamp":"\#(time)"}"#.utf8)
        let forged = EncodedChange(id: forgedID, stamp: VersionStamp(hlc: HLCTimestamp(milliseconds: 1_795_305_600_000, counter: 0), origin: incarnation,
                                                                     sequence: next, vector: VersionVector([(incarnation, next)]), deleted: false),
                                   payload: payload)
        let seals = try Seal.sealing([forged], as: hello.nodeID, signer: NodeKey.generate(nodeID: hello.nodeID))
        buggy.send(Message.encodedBatch(id: 1, origins: [OriginInfo(origin: incarnation, nodeID: mac.nodeID, role: .mac)], changes: [forged],
                                        through: VersionVector([(incarnation, next)]), seals: seals))
        let answer = buggy.readUntilClosed(seconds: 10)
        let errors = answer.messages.compactMap { message -> UInt16? in if case .error(let code, _) = message { return code }; return nil }
        #expect(errors == [ErrorCode.forgedChange.rawValue] && answer.closed, "\(answer.messages)")

        // The phone stored none of it, and says so; the mac's real write arrives.
        let got = try LifeSyncBinary.run(["get", "--db", phone.db, forgedID])
        #expect(got.status != 0, "the forged entry is stored: \(got.stdout)")
        let status = try LifeSyncBinary.run(["status", "--db", phone.db]).stdout
        #expect(status.contains("refused     1 forged batch(es)"), "\(status)")
        try mac.start(peers: [phone.address])
        try phone.waitFor([honest])
        #expect(eventually(timeout: 10) {
            let (a, b) = ((try? phone.status()["state_hash"]) as? String, (try? mac.status()["state_hash"]) as? String)
            return a != nil && a == b && ((try? mac.status()["pending"]) as? Int) == 0
        }, "the phone and the mac did not converge with nothing pending")
    }
}
