import Foundation
import Glibc
import LifeSyncRuntime
import Testing
import TestSupport

/// NDJSON of `count` entries with fresh IDs of `prefix`.
private func entries(_ prefix: String, count: Int, label: String) -> (ids: [String], text: String) {
    let ids = (0..<count).map { _ in newEntryID(prefix) }
    let lines = ids.enumerated().map { i, id in
        #"{"id": "\#(id)", "timestamp": "2026-11-22T\#(String(format: "%02d", (i / 60) % 24)):\#(String(format: "%02d", i % 60)):00Z", "category": "\#(label)", "data": {"text": "\#(label) \#(i)"}}"#
    }
    return (ids, lines.joined(separator: "\n") + "\n")
}

/// `lifesync import` into a node's file (the node may be serving).
@discardableResult
private func importEntries(_ node: ServeNode, _ prefix: String, count: Int, label: String) throws -> [String] {
    let batch = entries(prefix, count: count, label: label)
    let result = try LifeSyncBinary.run(["import", "-", "--db", node.db], input: batch.text, timeout: 60)
    try #require(result.status == 0, "import into \(node.name): \(result.stderr)")
    #expect(result.stdout == "imported \(count) entries\n")
    return batch.ids
}

func peerList(_ status: [String: Any]) -> [[String: Any]] { status["peers"] as? [[String: Any]] ?? [] }

// MARK: - Tests

@Suite(.serialized) struct ServeProcessTests {
    @Test(.timeLimit(.minutes(3)))
    func twoNodesConvergeAndKeepSyncingWhileServing() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        let phoneIDs = try importEntries(phone, "phone", count: 200, label: "phone")
        let macIDs = try importEntries(mac, "mac", count: 100, label: "mac")

        try phone.start()
        try mac.start(peers: [phone.address])
        var last: (Any?, Any?) = (nil, nil)
        let converged = try eventually(timeout: 20, interval: 0.2) {
            let a = try phone.status(), b = try mac.status()
            last = (a["entries"], b["entries"])
            return integer(a["entries"]) == 300 && integer(b["entries"]) == 300 && (a["state_hash"] as? String) == (b["state_hash"] as? String)
        }
        #expect(converged, "entries \(last); phone log:\n\(phone.allOutput)\nmac log:\n\(mac.allOutput)")
        for id in [phoneIDs[0], phoneIDs[199], macIDs[0], macIDs[99]] {
            #expect(try LifeSyncBinary.run(["get", id, "--db", mac.db]).status == 0)
            #expect(try LifeSyncBinary.run(["get", id, "--db", phone.db]).status == 0)
        }

        // Writes by other commands while both serve: noticed and synced, deletes included.
        let added = try LifeSyncBinary.run(["add", "--db", mac.db, "--text", "written while serving"])
        try #require(added.status == 0, "\(added.stderr)")
        let newID = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(eventually(timeout: 10) { phone.scalar("SELECT count(*) FROM entries WHERE id = '\(newID)'") == 1 },
                "the phone never got \(newID)")
        let deleted = try LifeSyncBinary.run(["delete", phoneIDs[5], "--db", phone.db])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(eventually(timeout: 10) { mac.scalar("SELECT count(*) FROM tombstones WHERE id = '\(phoneIDs[5])'") == 1 })
        #expect(try eventually(timeout: 10, interval: 0.2) {
            try phone.status()["state_hash"] as? String == mac.status()["state_hash"] as? String
        })
        #expect(mac.entryCount == 300 && phone.entryCount == 300)

        // Both stop cleanly.
        for node in [mac, phone] {
            #expect(node.terminate() != nil, "\(node.name) did not stop on SIGTERM")
            #expect(node.termination == .exited(0))
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func threeNodesConvergeThroughTheRelay() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        let watch = try group.node("watch", role: "watch")
        let watchIDs = try importEntries(watch, "watch", count: 50, label: "mood")
        try importEntries(mac, "mac", count: 30, label: "mac")
        try importEntries(phone, "phone", count: 20, label: "phone")

        try phone.start()
        try mac.start(peers: [phone.address])
        try watch.start(peers: [phone.address], listen: false)
        let converged = try eventually(timeout: 25, interval: 0.2) {
            let a = try phone.status(), b = try mac.status()
            return integer(a["entries"]) == 100 && integer(b["entries"]) == 100 && (a["state_hash"] as? String) == (b["state_hash"] as? String)
        }
        #expect(converged, "phone:\n\(phone.allOutput)\nmac:\n\(mac.allOutput)\nwatch:\n\(watch.allOutput)")
        // The watch's entries went watch → phone → mac, keeping their origin; the watch receives none.
        let watchIncarnation = try #require(try watch.status()["incarnation"] as? String)
        #expect(integer((try mac.status()["vector"] as? [String: Any])?[watchIncarnation]) == 50)
        #expect(mac.scalar("SELECT count(*) FROM entries WHERE origin_no = (SELECT number FROM origins WHERE incarnation = '\(watchIncarnation)')") == 50)
        #expect(mac.scalar("SELECT count(*) FROM entries WHERE id IN ('\(watchIDs[0])', '\(watchIDs[49])')") == 2)
        #expect(watch.entryCount == 50)

        // A write on the mac reaches the phone; one on the watch reaches the mac.
        let onWatch = try LifeSyncBinary.run(["add", "--db", watch.db, "--category", "mood", "--text", "late"])
        try #require(onWatch.status == 0, "\(onWatch.stderr)")
        let lateID = onWatch.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(eventually(timeout: 10) { mac.scalar("SELECT count(*) FROM entries WHERE id = '\(lateID)'") == 1 })
        for node in [watch, mac, phone] { #expect(node.terminate() != nil && node.termination == .exited(0)) }
    }

    @Test(.timeLimit(.minutes(3)))
    func aNodeKilledMidSyncConvergesAfterRestartWithNothingLostOrDoubled() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let watch = try group.node("watch", role: "watch")
        let phone = try group.node("phone", role: "phone")
        let ids = try importEntries(watch, "watch", count: 20_000, label: "stream")
        let watchIncarnation = try #require(try watch.status()["incarnation"] as? String)
        let watermark = "SELECT seq FROM replica_vector WHERE origin = '\(watchIncarnation)'"

        try phone.start()
        try watch.start(peers: [phone.address], listen: false)

        // Kill the receiver while batches stream in.
        #expect(eventually(timeout: 20, interval: 0.005) { (phone.entryCount ?? 0) > 0 }, "nothing arrived:\n\(watch.allOutput)\n\(phone.allOutput)")
        phone.kill9()
        let atKill = try #require(phone.entryCount)
        #expect(atKill > 0 && atKill < 20_000, "the kill should land mid-stream (the phone held \(atKill))")
        // What was acknowledged is whole: batches commit all or nothing, the watermark never runs ahead of the rows.
        #expect(phone.scalar(watermark) == atKill, "watermark \(phone.scalar(watermark) ?? -1) vs \(atKill) rows")
        #expect(phone.scalar("SELECT count(DISTINCT id) FROM entries") == atKill)
        #expect(try SQLiteShell.run(phone.db, "PRAGMA integrity_check").stdout == "ok\n")

        // Restart it on the same address: the watch reconnects and resumes.
        try phone.start(samePort: true)
        #expect(eventually(timeout: 20, interval: 0.005) { (phone.entryCount ?? 0) > atKill })
        // Now kill the sender mid-stream too, and restart it.
        watch.kill9()
        let atSenderKill = phone.entryCount ?? 0
        #expect(atSenderKill < 20_000, "the sender should die mid-stream (the phone held \(atSenderKill))")
        // Restart it once the phone saw the old connection end (batches the dead watch had already
        // written to the socket are applied before that; see NodeCoreTests for the race otherwise).
        #expect(eventually(timeout: 5, interval: 0.01) { phone.stdout.contains("disconnected from \(NodeServer.defaultName(of: watch.nodeID)) (") })
        try watch.start(peers: [phone.address], listen: false)

        let done = eventually(timeout: 30, interval: 0.1) { phone.entryCount == 20_000 }
        #expect(done, "phone holds \(phone.entryCount ?? -1) of 20000 (killed at \(atKill), sender killed at \(atSenderKill))\nwatch:\n\(watch.allOutput.suffix(3000))\nphone:\n\(phone.allOutput.suffix(3000))")
        usleep(300_000)
        #expect(phone.terminate() != nil)
        #expect(watch.terminate() != nil)

        #expect(phone.scalar("SELECT count(*) FROM entries") == 20_000)
        #expect(phone.scalar("SELECT count(DISTINCT id) FROM entries") == 20_000)
        #expect(phone.scalar("SELECT count(DISTINCT origin_seq) FROM entries") == 20_000)
        #expect(phone.scalar("SELECT count(*) FROM tombstones") == 0)
        #expect(phone.scalar(watermark) == 20_000)
        let stored = try SQLiteShell.run(phone.db, "SELECT id FROM entries ORDER BY id").lines
        #expect(stored == ids.sorted(), "the phone's IDs differ from the imported ones")
        #expect(try SQLiteShell.run(phone.db, "PRAGMA integrity_check").stdout == "ok\n")
        #expect(try SQLiteShell.run(watch.db, "PRAGMA integrity_check").stdout == "ok\n")
        #expect(watch.entryCount == 20_000)
        // Each resumed session sent only what the phone lacked: every batch it received was new to it.
        var received = 0
        for line in phone.allOutput.split(separator: "\n") where line.contains("] received ") {
            let words = line.split(separator: " ")
            guard let at = words.firstIndex(of: "received"), at + 1 < words.count, let got = Int(words[at + 1]),
                  let appliedAt = words.firstIndex(of: "applied"), appliedAt > 0, let applied = Int(words[appliedAt - 1]) else {
                Issue.record("unexpected log line: \(line)")
                continue
            }
            #expect(got == applied, "the phone was sent changes it already held: \(line)\nphone:\n\(phone.allOutput)\nwatch:\n\(watch.allOutput)")
            received += got
        }
        #expect(received > 0 && received <= 20_000, "received \(received) in logged batches")
        let status = try phone.status()
        #expect(integer(status["entries"]) == 20_000)
        #expect(integer((status["vector"] as? [String: Any])?[watchIncarnation]) == 20_000)
    }

    @Test(.timeLimit(.minutes(3)))
    func sigtermStopsServeCleanlyWithinTwoSeconds() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        try phone.start()
        try mac.start(peers: [phone.address])
        #expect(eventually(timeout: 10) { mac.stdout.contains("in sync with") })

        // With a peer connected, and alone.
        for node in [phone, mac] {
            let took = node.terminate(timeout: 2)
            #expect(took != nil, "\(node.name) still ran 2 s after SIGTERM")
            #expect(node.termination == .exited(0), "\(node.name) ended with \(node.termination?.description ?? "nothing"): \(node.stderr)")
            let lines = node.stdout.split(separator: "\n")
            #expect(lines.last?.hasSuffix("stopped") == true, "\(node.name) printed:\n\(node.stdout)")
            #expect(!node.stderr.contains("Fatal error"))
        }
        // The mac noticed the phone leave before it was stopped itself.
        #expect(mac.stdout.contains("disconnected from \(NodeServer.defaultName(of: phone.nodeID)) (")
                || mac.stdout.contains("peer \(NodeServer.defaultName(of: phone.nodeID)) reported error"),
                "\(mac.stdout)")
        // A clean stop leaves a sound file.
        #expect(try SQLiteShell.run(phone.db, "PRAGMA integrity_check").stdout == "ok\n")
    }

    @Test(.timeLimit(.minutes(3)))
    func serveRefusesBadArguments() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let db = try group.node("phone", role: "phone").db

        expectRefused(try LifeSyncBinary.run(["serve", "--db", db, "--listen", "nonsense"], timeout: 10),
                      status: 1, mentioning: ["nonsense", "HOST:PORT"])
        expectRefused(try LifeSyncBinary.run(["serve", "--db", db, "--listen", "127.0.0.1:99999"], timeout: 10),
                      status: 1, mentioning: ["127.0.0.1:99999", "port"])
        expectRefused(try LifeSyncBinary.run(["serve", "--db", db, "--listen", ":7000"], timeout: 10),
                      status: 1, mentioning: ["host"])
        expectRefused(try LifeSyncBinary.run(["serve", "--db", db, "--peer", "nonsense"], timeout: 10),
                      status: 1, mentioning: ["nonsense"])

        // A port another program listens on.
        let held = try HeldPort()
        let busy = try LifeSyncBinary.run(["serve", "--db", db, "--listen", "127.0.0.1:\(held.port)"], timeout: 10)
        expectRefused(busy, status: 1, mentioning: ["cannot listen", "127.0.0.1:\(held.port)", "in use"])

        // Neither --listen nor --peer: a usage error.
        let nothing = try LifeSyncBinary.run(["serve", "--db", db], timeout: 10)
        expectRefused(nothing, status: 2, mentioning: ["--listen", "--peer"])
        #expect(nothing.stderr.contains("Usage: lifesync serve"))

        // Nothing was written by the refused runs.
        let status = try #require(try parseJSON(try LifeSyncBinary.run(["status", "--json", "--db", db]).stdout) as? [String: Any])
        #expect(peerList(status).isEmpty)
        #expect(integer(status["entries"]) == 0)
    }

    /// A second `serve` of the same replica would be the same node twice, knocking the first's
    /// connections off for ever: it is refused by name, and `status` tells whether a node serves
    /// the replica (a killed one no longer does: the kernel drops its lock).
    @Test(.timeLimit(.minutes(3)))
    func oneServePerReplicaAndStatusSaysWhetherItIsServed() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        #expect(try phone.status()["serving"] as? Bool == false)
        try phone.start()
        let pid = try #require(phone.process?.pid)
        let second = try LifeSyncBinary.run(["serve", "--db", phone.db, "--listen", "127.0.0.1:0"], timeout: 20)
        #expect(second.status == 1 && second.stderr.contains("already serving") && second.stderr.contains("process \(pid)"), "\(second.stderr)")
        #expect(try phone.status()["serving"] as? Bool == true)
        #expect(integer(try phone.status()["serving_pid"]) == Int(pid))
        let text = try LifeSyncBinary.run(["status", "--db", phone.db])
        #expect(text.stdout.contains("serving     yes (lifesync serve, process \(pid))"), "\(text.stdout)")
        phone.stop()  // kill -9
        #expect(eventually(timeout: 5) { (try? phone.status()["serving"] as? Bool) == false })
        try phone.start()  // a killed node's lock is gone
        #expect(phone.isRunning)
    }

    @Test(.timeLimit(.minutes(3)))
    func statusWhileServingShowsThePeers() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        try importEntries(phone, "phone", count: 40, label: "phone")
        try importEntries(mac, "mac", count: 15, label: "mac")
        try phone.start()
        try mac.start(peers: [phone.address])

        func peer(of node: ServeNode) throws -> [String: Any]? { peerList(try node.status()).first }
        let synced = try eventually(timeout: 20, interval: 0.2) {
            try peer(of: phone)?["state"] as? String == "synced" && peer(of: mac)?["state"] as? String == "synced"
        }
        #expect(synced, "phone:\n\(phone.allOutput)\nmac:\n\(mac.allOutput)")

        let onPhone = try #require(try peer(of: phone))
        #expect(peerList(try phone.status()).count == 1)
        #expect(onPhone["node_id"] as? String == mac.nodeID)
        #expect(onPhone["role"] as? String == "mac")
        #expect(onPhone["direction"] as? String == "inbound")
        #expect(integer(onPhone["entries_sent"]) == 40)
        #expect(integer(onPhone["entries_received"]) == 15)
        #expect(integer(onPhone["pending"]) == 0)
        #expect(onPhone["last_sync"] is String)

        let onMac = try #require(try peer(of: mac))
        #expect(onMac["node_id"] as? String == phone.nodeID)
        #expect(onMac["role"] as? String == "phone")
        #expect(onMac["direction"] as? String == "outbound")
        #expect(onMac["address"] as? String == phone.address)
        #expect(integer(onMac["entries_sent"]) == 15)
        #expect(integer(onMac["entries_received"]) == 40)
        #expect(integer(onMac["pending"]) == 0)

        // A write the peer lacks shows as pending while the peer is away, and the state says so.
        #expect(phone.terminate() != nil)
        #expect(eventually(timeout: 5) { (try? peer(of: mac)?["state"] as? String) == "disconnected" })
        let added = try LifeSyncBinary.run(["add", "--db", mac.db, "--text", "while the phone is away"])
        #expect(added.status == 0)
        #expect(eventually(timeout: 5) { (try? integer(peer(of: mac)?["pending"])) == 1 })
        let macStatus = try mac.status()
        #expect(integer(macStatus["pending"]) == 1)
        // The phone comes back (same address): the state returns to synced, pending to 0.
        try phone.start(samePort: true)
        #expect(eventually(timeout: 15, interval: 0.2) {
            (try? peer(of: mac)).flatMap { $0 }.map { $0["state"] as? String == "synced" && integer($0["pending"]) == 0 } ?? false
        }, "mac:\n\(mac.allOutput)")
        #expect(phone.entryCount == 56)
        // The counts go on from the first session: 15 + the one written while the phone was away.
        let again = try #require(try peer(of: mac))
        #expect(integer(again["entries_sent"]) == 16, "\(again)")
        #expect(integer(again["entries_received"]) == 40, "\(again)")
    }
}
