import Foundation
import Glibc
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// Pairing as a user does it, with real `serve` processes: unknown nodes exchange nothing and
/// are listed as pending; accepting one makes it sync without a restart; a node's ID with
/// another key is refused; untrusting a peer ends its session.
@Suite(.serialized) struct PairingTests {
    static func add(_ node: ServeNode, _ text: String) throws {
        let result = try LifeSyncBinary.run(["add", "--db", node.db, "--category", "note", "--text", text])
        #expect(result.status == 0, "\(result.stderr)")
    }

    static func peersJSON(_ node: ServeNode) throws -> [String: Any] {
        let result = try LifeSyncBinary.run(["peers", "--json", "--db", node.db])
        guard result.status == 0, let object = try parseJSON(result.stdout) as? [String: Any] else { throw ServeError("peers: \(result.stderr)") }
        return object
    }

    @Test(.timeLimit(.minutes(2)))
    func anUnknownNodeExchangesNothingIsListedAsPendingAndSyncsOnceAccepted() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let stranger = try group.node("stranger", role: "mac", paired: false)
        try Self.add(phone, "the phone's secret")
        try Self.add(stranger, "the stranger's note")
        // The stranger trusts the phone (it was given the phone's pairing string); the phone does
        // not know the stranger.
        try ServeGroup.pair(phone, trustedBy: stranger)
        try phone.start()
        try stranger.start(peers: [phone.address], listen: false)
        let pending = eventually(timeout: 10) {
            ((try? Self.peersJSON(phone))?["pending"] as? [[String: Any]])?.contains { $0["claimed_node_id"] as? String == stranger.nodeID } == true
        }
        #expect(pending, "the stranger is not listed as pending\n\(phone.allOutput)")
        usleep(500_000)
        #expect(phone.entryCount == 1 && stranger.entryCount == 1, "entries moved between unpaired nodes")
        #expect(phone.stdout.contains("is not trusted") && phone.stdout.contains("lifesync trust --accept \(stranger.nodeID)"), "\(phone.stdout)")
        #expect(phone.scalar("SELECT count(*) FROM peers") == 0, "the stranger left a peer row")

        // Not without comparing: the code (or the key) the other device shows.
        let blind = try LifeSyncBinary.run(["trust", "--accept", stranger.nodeID, "--db", phone.db])
        #expect(blind.status != 0 && blind.stderr.contains("compare before trusting"), "\(blind.stderr)")
        // A wrong code is counted and trusts nothing.
        let wrong = try LifeSyncBinary.run(["trust", "--accept", stranger.nodeID, "--code", "000000", "--db", phone.db])
        #expect(wrong.status != 0 && wrong.stderr.contains("1 of 3 wrong codes"), "\(wrong.stderr)")
        let listed = try Self.peersJSON(phone)["pending"] as? [[String: Any]] ?? []
        let claim = try #require(listed.first { $0["claimed_node_id"] as? String == stranger.nodeID })
        #expect(claim["wrong_codes"] as? Int == 1)
        // The user compares the code both devices show for the two keys and accepts it on the
        // phone: the running nodes sync, no restart.
        let code = try #require(claim["code"] as? String)
        let strangerPeers = try Self.peersJSON(stranger)["trusted"] as? [[String: Any]] ?? []
        #expect(strangerPeers.first { $0["node_id"] as? String == phone.nodeID }?["code"] as? String == code, "the other device shows the same code")
        let accepted = try LifeSyncBinary.run(["trust", "--accept", stranger.nodeID, "--code", code, "--db", phone.db])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(eventually(timeout: 20) { phone.entryCount == 2 && stranger.entryCount == 2 },
                "no sync after accepting\n\(phone.allOutput)\n\(stranger.allOutput)")
    }

    /// `trust` with a pairing string carrying `addr=` makes the address a dial target: two nodes
    /// already serving, neither given --peer, pair and sync, no restart. Loopback listeners
    /// announce nothing on any network.
    @Test(.timeLimit(.minutes(2)))
    func aTrustedPeersAddressIsDialledWithoutPeerWhileServing() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac", paired: false)
        try Self.add(phone, "from the phone")
        try Self.add(mac, "from the mac")
        try phone.start()
        try mac.start()
        try ServeGroup.pair(mac, trustedBy: phone)
        let id = try LifeSyncBinary.run(["id", "--db", phone.db, "--addr", phone.address])
        let trust = try LifeSyncBinary.run(["trust", id.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "--db", mac.db])
        #expect(trust.status == 0 && trust.stdout.contains("at \(phone.address)"), "\(trust.stdout)\(trust.stderr)")
        #expect(eventually(timeout: 15) { phone.entryCount == 2 && mac.entryCount == 2 },
                "no sync through the trusted address\n\(phone.allOutput)\n\(mac.allOutput)")
        #expect(mac.stdout.contains("connected to \(phone.address)"), "\(mac.stdout)")
        for node in [phone, mac] {
            #expect(node.stdout.contains("LAN discovery off: listening on loopback only") && !node.stdout.contains("announcing on"), "\(node.stdout)")
        }
        let peers = try Self.peersJSON(mac)
        #expect((peers["discovered"] as? [Any])?.isEmpty == true, "\(peers)")

        // Restarted with no --peer, the mac dials the stored address again at once.
        mac.stop()
        try Self.add(phone, "while the mac was away")
        try mac.start()
        #expect(eventually(timeout: 15) { mac.entryCount == 3 }, "no sync after a restart without --peer\n\(mac.allOutput)")
    }

    @Test(.timeLimit(.minutes(2)))
    func aTrustedNodeIDWithAnotherKeyIsRefused() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        try phone.start()
        let impostor = try RawPeer(port: phone.port, key: try NodeKey.generate(nodeID: mac.nodeID))
        impostor.send(Message.hello(Hello(nodeID: mac.nodeID, role: .mac, incarnation: Identifier.uuidV4(random: SystemRandom()),
                                          capabilities: [.seals, .receivesEntries], clock: .zero, vector: VersionVector())).encoded())
        let answer = impostor.readUntilClosed(seconds: 5)
        #expect(answer.closed)
        guard case .error(let code, _) = answer.messages.first else { Issue.record("no ERROR: \(answer.messages)"); return }
        #expect(code == ErrorCode.notTrusted.rawValue)
        #expect(!answer.messages.contains { if case .batch = $0 { return true }; return false })
        #expect(phone.scalar("SELECT count(*) FROM peers") == 0)
    }

    @Test(.timeLimit(.minutes(2)))
    func untrustingAPeerEndsItsSessionAndNothingMoreSyncs() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        try Self.add(mac, "before")
        try phone.start()
        try mac.start(peers: [phone.address], listen: false)
        #expect(eventually(timeout: 15) { phone.entryCount == 1 }, "paired nodes did not sync\n\(phone.allOutput)")
        let untrust = try LifeSyncBinary.run(["untrust", mac.nodeID, "--db", phone.db])
        #expect(untrust.status == 0, "\(untrust.stderr)")
        #expect(eventually(timeout: 5) { phone.stdout.contains("no longer trusted") }, "\(phone.stdout)")
        try Self.add(mac, "after")
        usleep(3_000_000)
        #expect(phone.entryCount == 1, "an untrusted peer's write arrived")
        #expect(mac.isRunning && phone.isRunning)
    }
}
