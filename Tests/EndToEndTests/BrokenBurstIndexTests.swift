import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// A peer that breaks off a sync before its CAUGHT_UP leaves what it sent in the text index's
/// backlog (Replica+TextIndex): a real `serve` indexes it at its first idle turn (NodeServer's
/// `giveMemoryBack`), not only at the next sync or local write. Searches see the backlog either
/// way; this is about the index and the kept counts being in step again without another sync.
@Suite struct BrokenBurstIndexTests {
    @Test func anIdleNodeIndexesWhatABrokenSessionLeft() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        try phone.start()
        let store = try Replica(path: phone.db, clock: SystemClock(), random: SystemRandom())
        func backlog() throws -> Int64? {
            try store.database.firstRow("""
                SELECT count(*) FROM entries WHERE feed_seq > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_index_from')
                """, [], { $0.int64(0) })
        }

        // A mac sends one sealed write of its own and goes, with no CAUGHT_UP.
        let hello = RawPeer.macHello()
        let key = try NodeKey.generate(nodeID: hello.nodeID)
        try store.trust(TrustedPeer(nodeID: hello.nodeID, role: .mac, fingerprint: key.fingerprint, trustedAt: store.now))
        let id = "mac_" + Identifier.uuidV4(random: SystemRandom())
        do {
            let mac = try RawPeer(port: phone.port, key: key)
            mac.send(Message.hello(hello).encoded())
            let time = Timestamp(millisecondsSince1970: 1_795_305_600_000).iso8601
            let payload = Array(#"{"data":{"text":"Left mid-sync"},"device_id":"\#(hello.nodeID)","id":"\#(id)","recorded_at":"\#(time)","source":"mac","timestamp":"\#(time)"}"#.utf8)
            let write = EncodedChange(id: id, stamp: VersionStamp(hlc: HLCTimestamp(milliseconds: 1_795_305_600_000, counter: 0), origin: hello.incarnation,
                                                                  sequence: 1, vector: VersionVector([(hello.incarnation, 1)]), deleted: false),
                                      payload: payload)
            mac.send(Message.encodedBatch(id: 1, origins: [OriginInfo(origin: hello.incarnation, nodeID: hello.nodeID, role: .mac)], changes: [write],
                                          through: VersionVector([(hello.incarnation, 1)]), seals: try Seal.sealing([write], as: hello.nodeID, signer: key)))
            let acked = mac.read(seconds: 5).contains { if case .ack = $0 { return true }; return false }
            #expect(acked, "the phone did not take the write")
        }  // the connection closes here

        #expect((try? store.entry(id: id)) != nil)
        #expect(eventually(timeout: 15) { (try? backlog()) == 0 }, "the idle phone left the broken session's write unindexed")
        #expect(try LifeSyncBinary.run(["list", "--db", phone.db, "--search", "mid-sync"]).stdout.contains("Left mid-sync"))
    }
}
