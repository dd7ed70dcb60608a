import Foundation
import Testing
import TestSupport

/// `status` and `recordings` claim nothing live that nothing serves (issue 14): a killed peer
/// is not "synced", two watches are not "synced, pending 0", a peer no longer trusted has no
/// pending count, and a download a killed node left half-done is not "transferring".
@Suite(.serialized) struct StatusTruthTests {
    @Test(.timeLimit(.minutes(3)))
    func aKilledOrStoppedNodeShowsItsPeersDisconnectedWithWhatWasLastSeen() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        try phone.start()
        try mac.start(peers: [phone.address])
        let synced = eventually(timeout: 20, interval: 0.2) {
            (try? peerList(mac.status()).first?["state"] as? String) == "synced" && (try? peerList(phone.status()).first?["state"] as? String) == "synced"
        }
        try #require(synced, "phone:\n\(phone.allOutput)\nmac:\n\(mac.allOutput)")

        mac.stop()  // kill -9: the row still says synced, status must not
        #expect(eventually(timeout: 5) { (try? mac.status()["serving"] as? Bool) == false })
        let onMac = try #require(peerList(try mac.status()).first)
        #expect(onMac["state"] as? String == "disconnected")
        #expect(onMac["last_seen_state"] as? String == "synced")
        #expect(onMac["last_seen"] is String)
        let text = try LifeSyncBinary.run(["status", "--db", mac.db])
        #expect(text.stdout.contains("disconnected (last seen synced "), "\(text.stdout)")
        #expect(!text.stdout.contains(" synced, "), "\(text.stdout)")

        // A clean shutdown writes it down itself.
        #expect(phone.terminate() != nil)
        #expect(phone.scalar("SELECT count(*) FROM peers WHERE state = 'disconnected'") == 1)
        #expect(phone.scalar("SELECT count(*) FROM peers") == 1)

        // A peer no longer trusted has no pending count, whatever we wrote since.
        #expect(try LifeSyncBinary.run(["add", "--db", phone.db, "--text", "after"]).status == 0)
        #expect(integer(peerList(try phone.status()).first?["pending"]) == 1)
        #expect(try LifeSyncBinary.run(["untrust", mac.nodeID, "--db", phone.db]).status == 0)
        #expect(peerList(try phone.status()).first?["pending"] is NSNull)
        #expect(try LifeSyncBinary.run(["status", "--db", phone.db]).stdout.contains(", pending ") == false)
    }

    @Test(.timeLimit(.minutes(3)))
    func twoWatchesHaveNothingToExchange() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let first = try group.node("watch1", role: "watch")
        let second = try group.node("watch2", role: "watch")
        try first.start()
        try second.start(peers: [first.address])
        #expect(eventually(timeout: 20, interval: 0.2) { (try? peerList(second.status()).first?["node_id"] as? String) == first.nodeID },
                "\(second.allOutput)")
        let row = try #require(peerList(try second.status()).first)
        #expect(row["state"] as? String == "nothing_to_exchange")
        #expect(row["pending"] is NSNull)
        let text = try LifeSyncBinary.run(["status", "--db", second.db]).stdout
        #expect(text.contains("nothing to exchange (watch ↔ watch)") && !text.contains("pending 0"), "\(text)")
    }

    /// A download left half-done says interrupted (as last seen) while nothing serves.
    @Test func aPartialDownloadIsInterruptedWhileNothingServes() throws {
        let group = ServeGroup()
        let phone = try group.node("phone", role: "phone")
        let source = group.directory.file("voice.m4a")
        #expect(FileManager.default.createFile(atPath: source, contents: Data(repeating: 7, count: 1_000)))
        let attached = try LifeSyncBinary.run(["attach", source, "--db", phone.db])
        try #require(attached.status == 0, "\(attached.stderr)")
        // As a receiver killed at 44 % leaves it.
        #expect(try SQLiteShell.run(phone.db, "UPDATE recording_files SET state = 'partial', received = 440").status == 0)
        let listed = try LifeSyncBinary.run(["recordings", "--db", phone.db]).stdout
        #expect(listed.contains("interrupted (44% as last seen; resumes when served)") && !listed.contains("transferring"), "\(listed)")
        let status = try LifeSyncBinary.run(["status", "--db", phone.db]).stdout
        #expect(status.contains("interrupted at 44% (as last seen; resumes when served)"), "\(status)")
    }
}
