@testable import LifeSync
import Testing
import TestSupport

/// What a node does with trusted peers' addresses and LAN announcements (NodeCore+Discovery,
/// NodeCore+TrustedDialers): trusted → dialled; a wrong key → refused; unknown → listed, never
/// dialled; garbage → refused once, nothing stored; discovery off → nothing at all.
@Suite struct NodeCoreDiscoveryTests {
    static let macID = "mac_7c9e6679-7425-40de-944b-e07fc1f90ae7"
    static let macKey = SHA256.hash(Array("mac key".utf8))

    static func node(discovery: Bool = true, peers: [String] = [], replica: Replica? = nil) throws -> (Replica, NodeCore) {
        let phone = try replica ?? ReplicaFixtures.replica(role: .phone, seed: 7)
        var configuration = NodeConfiguration(peers: peers)
        configuration.dialTrustedPeers = true
        configuration.discovery = discovery
        return (phone, NodeCore(replica: phone, configuration: configuration, random: SeededRandom(seed: 1), now: 0))
    }

    static func trustMac(_ replica: Replica, addresses: [String] = []) throws {
        try replica.trust(TrustedPeer(nodeID: macID, role: .mac, fingerprint: macKey, addresses: addresses, trustedAt: replica.now))
    }

    static func packet(_ nodeID: String = macID, key: SHA256.Digest = macKey, port: UInt16 = 7002) -> ArraySlice<UInt8> {
        Announcement(nodeID: nodeID, fingerprint: key, port: port, instance: 9).encoded()[...]
    }

    static func dials(_ actions: [NodeAction]) -> [String] {
        actions.compactMap { if case .connect(_, let address) = $0 { address } else { nil } }
    }

    static func events(_ actions: [NodeAction]) -> [NodeEvent] {
        actions.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    @Test func aTrustedPeersAddressesAreDialledWithoutAPeerOption() throws {
        let (phone, core) = try Self.node()
        try Self.trustMac(phone, addresses: ["10.0.0.2:7002", "10.0.0.3:7002"])
        #expect(Self.dials(core.start(now: 0)) == ["10.0.0.2:7002"])
        // A failed attempt moves on to the next address.
        _ = core.connectFailed(peer: 0, reason: "refused", now: 10)
        let later = (1...20).flatMap { core.tick(now: Int64($0) * 100) }
        #expect(Self.dials(later) == ["10.0.0.3:7002"])
    }

    @Test func dialTrustedPeersOffKeepsTheSimulatorsBehaviour() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 7)
        try Self.trustMac(phone, addresses: ["10.0.0.2:7002"])
        let core = NodeCore(replica: phone, configuration: NodeConfiguration(peers: ["mac"]), random: SeededRandom(seed: 1), now: 0)
        #expect(Self.dials(core.start(now: 0)) == ["mac"])
    }

    @Test func aConfiguredPeerAtATrustedAddressIsDialledOnce() throws {
        let (phone, core) = try Self.node(peers: ["10.0.0.2:7002"])
        try Self.trustMac(phone, addresses: ["10.0.0.2:7002", "10.0.0.3:7002"])
        let actions = core.start(now: 0) + (1...50).flatMap { core.tick(now: Int64($0) * 100) }
        #expect(Self.dials(actions) == ["10.0.0.2:7002"])
    }

    @Test func aTrustedAnnouncerIsDialledWhereItWasHeardAndRemembered() throws {
        let (phone, core) = try Self.node()
        try Self.trustMac(phone, addresses: ["192.168.9.9:7002"])
        #expect(Self.dials(core.start(now: 0)) == ["192.168.9.9:7002"])
        _ = core.connectFailed(peer: 0, reason: "no route", now: 50)
        let heard = core.discovered(packet: Self.packet(), from: "10.77.2.1", now: 100)
        #expect(Self.dials(heard) == ["10.77.2.1:7002"], "the heard address is tried at once, before the backoff ends")
        #expect(Self.events(heard).contains(.discovered(peer: Self.macID, address: "10.77.2.1:7002", trusted: true)))
        #expect(try phone.trustedPeers().first?.addresses == ["10.77.2.1:7002", "192.168.9.9:7002"], "stored first, for a restart")
        // Heard again unchanged (every 30 s): no write, no line, no dial.
        #expect(core.discovered(packet: Self.packet(), from: "10.77.2.1", now: 30_100).isEmpty)
        #expect(try phone.discoveredPeers().isEmpty, "a trusted node is not listed as discovered")
    }

    /// Announcements are public (the node ID and fingerprint they carry prove nothing): forged
    /// ones from nine hosts neither drop the addresses the user gave nor one a handshake proved;
    /// they hold only the two heard slots, each costing one failed dial in turn with the real ones.
    @Test func forgedAnnouncementsCannotEvictGivenOrVerifiedAddresses() throws {
        let (phone, core) = try Self.node()
        let given = (1...8).map { "192.168.9.\($0):7002" }
        try Self.trustMac(phone, addresses: given)
        _ = core.start(now: 0)
        _ = core.connectFailed(peer: 0, reason: "no route", now: 50)
        // The real mac moved: heard at 10.77.2.1 and a dial there proved its key.
        let heard = core.discovered(packet: Self.packet(), from: "10.77.2.1", now: 100)
        #expect(Self.dials(heard) == ["10.77.2.1:7002"])
        _ = core.connected(connection: 1, peer: 0, peerKey: Self.macKey, now: 150)
        #expect(try phone.trustedPeers().first?.addresses.first == "10.77.2.1:7002")
        // Nine forgers announce the mac's ID and key, each well after the last (no address hold).
        for n in 1...9 {
            let t = 200 + Int64(n) * (NodeCore.discoveryAddressHold + 1_000)
            _ = core.discovered(packet: Self.packet(), from: "10.66.0.\(n)", now: t)
        }
        let addresses = try #require(try phone.trustedPeers().first?.addresses)
        #expect(addresses.count == Replica.heardLimit + 1 + given.count, "\(addresses)")
        #expect(Set(given).isSubset(of: addresses), "a given address was evicted: \(addresses)")
        #expect(addresses.contains("10.77.2.1:7002"), "the verified address was evicted: \(addresses)")
        #expect(addresses.filter { $0.hasPrefix("10.66.") } == ["10.66.0.9:7002", "10.66.0.8:7002"], "\(addresses)")
        // Trusting the node again with its pairing string keeps what a handshake proved.
        try Self.trustMac(phone, addresses: given)
        #expect(try phone.trustedPeers().first?.addresses.contains("10.77.2.1:7002") == true)
    }

    /// A node on two interfaces of one network is heard at both addresses: the first holds while
    /// it is still heard, so neither the store nor the dialler flaps between them.
    @Test func oneRunHeardAtTwoAddressesKeepsTheFirstWhileItIsHeard() throws {
        let (phone, core) = try Self.node()
        try Self.trustMac(phone)
        _ = core.start(now: 0)
        #expect(Self.dials(core.discovered(packet: Self.packet(), from: "10.77.1.1", now: 10)) == ["10.77.1.1:7002"])
        _ = core.connectFailed(peer: 0, reason: "refused", now: 20)
        for round in 1...4 {
            let t = Int64(round) * Announcement.interval
            #expect(core.discovered(packet: Self.packet(), from: "10.77.1.1", now: t).isEmpty)
            #expect(core.discovered(packet: Self.packet(), from: "10.77.2.1", now: t + 5).isEmpty, "round \(round)")
        }
        #expect(try phone.trustedPeers().first?.addresses == ["10.77.1.1:7002"])
        // The first address falls silent: the other one takes over once the hold has passed.
        let later = 4 * Announcement.interval + NodeCore.discoveryAddressHold + 10
        #expect(Self.dials(core.discovered(packet: Self.packet(), from: "10.77.2.1", now: later)) == ["10.77.2.1:7002"])
        #expect(try phone.trustedPeers().first?.addresses == ["10.77.2.1:7002", "10.77.1.1:7002"])
    }

    @Test func anAnnouncementWithAnotherKeyThanThePinIsRefusedAndNeverDialled() throws {
        let (phone, core) = try Self.node()
        try Self.trustMac(phone)
        _ = core.start(now: 0)
        let forged = core.discovered(packet: Self.packet(key: SHA256.hash(Array("impostor".utf8))), from: "10.0.0.66", now: 10)
        #expect(Self.dials(forged).isEmpty)
        guard case .discoveryRefused(let from, let reason)? = Self.events(forged).first else { Issue.record("not refused: \(forged)"); return }
        #expect(from == "10.0.0.66" && reason.contains("not the key trusted"))
        #expect(core.discovered(packet: Self.packet(key: SHA256.hash(Array("impostor".utf8))), from: "10.0.0.66", now: 20).isEmpty, "logged once a minute")
        #expect(try phone.trustedPeers().first?.addresses == [] && phone.discoveredPeers().isEmpty, "nothing stored")
        // The trusted key announcing under another node ID is refused too.
        let renamed = core.discovered(packet: Self.packet("mac_0f8fad5b-d9cb-469f-a165-70867728950e"), from: "10.0.0.67", now: 30)
        #expect(Self.dials(renamed).isEmpty && Self.events(renamed).count == 1)
        #expect(try phone.discoveredPeers().isEmpty)
    }

    @Test func anUnknownAnnouncerIsListedButNeverDialledAndTheListIsBounded() throws {
        let (phone, core) = try Self.node()
        _ = core.start(now: 0)
        let stranger = "mac_0f8fad5b-d9cb-469f-a165-70867728950e"
        let heard = core.discovered(packet: Self.packet(stranger), from: "10.0.0.5", now: 10)
        #expect(Self.dials(heard).isEmpty)
        #expect(Self.events(heard) == [.discovered(peer: stranger, address: "10.0.0.5:7002", trusted: false)])
        #expect(try phone.discoveredPeers().map(\.address) == ["10.0.0.5:7002"])
        #expect(try phone.discoveredPeers().first?.pairing.description == "lifesync://\(stranger)?key=\(Self.macKey.hex)&addr=10.0.0.5:7002")
        #expect(core.discovered(packet: Self.packet(stranger), from: "10.0.0.5", now: 30_010).isEmpty, "unchanged: not written again")
        let random = SeededRandom(seed: 5)
        for i in 0..<40 {
            _ = core.discovered(packet: Self.packet(Identifier.make(role: .watch, random: random), key: SHA256.hash([UInt8(i)])), from: "10.0.1.\(i)", now: 100 + Int64(i))
        }
        #expect(try phone.discoveredPeers().count == Replica.discoveredLimit)
        // Trusting a discovered node takes it off the list.
        let newest = try #require(try phone.discoveredPeers().first)
        try phone.trust(newest.pairing.peer(trustedAt: phone.now))
        #expect(try !phone.discoveredPeers().contains { $0.nodeID == newest.nodeID })
    }

    @Test func garbageIsRefusedOnceAMinutePerSenderAndStoresNothing() throws {
        let (phone, core) = try Self.node()
        _ = core.start(now: 0)
        let first = core.discovered(packet: [0x47, 0x45, 0x54, 0x20][...], from: "10.0.0.8", now: 10)
        guard case .discoveryRefused(let from, let reason)? = Self.events(first).first else { Issue.record("not refused: \(first)"); return }
        #expect(from == "10.0.0.8" && reason.contains("4 bytes"))
        #expect(core.discovered(packet: [UInt8](repeating: 0xFF, count: 2000)[...], from: "10.0.0.8", now: 20).isEmpty)
        #expect(Self.events(core.discovered(packet: [][...], from: "10.0.0.8", now: 60_011)).count == 1, "a minute later, one more line")
        #expect(try phone.discoveredPeers().isEmpty && phone.pendingPeers().isEmpty)
        // The node goes on: a well-formed announcer is still heard.
        #expect(Self.events(core.discovered(packet: Self.packet(), from: "10.0.0.8", now: 60_012)).count == 1)
    }

    @Test func withDiscoveryOffAnnouncementsAreIgnored() throws {
        let (phone, core) = try Self.node(discovery: false)
        try Self.trustMac(phone)
        _ = core.start(now: 0)
        #expect(core.discovered(packet: Self.packet(), from: "10.0.0.2", now: 10).isEmpty)
        #expect(core.discovered(packet: [1, 2, 3][...], from: "10.0.0.2", now: 10).isEmpty)
        #expect(try phone.trustedPeers().first?.addresses == [] && phone.discoveredPeers().isEmpty)
    }

    /// Another process trusts and untrusts (the trust store is the replica file): a running node
    /// dials the new peer at its next poll, and stops dialling it once untrusted.
    @Test func trustChangesMadeElsewhereAreFollowedWithinAPoll() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("phone.sqlite")
        let (_, core) = try Self.node(replica: try ReplicaFixtures.replica(role: .phone, seed: 7, path: path))
        let other = try Replica(path: path, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 8))
        #expect(Self.dials(core.start(now: 0)).isEmpty)
        try Self.trustMac(other, addresses: ["10.0.0.2:7002"])
        let picked = (1...4).flatMap { core.tick(now: Int64($0) * 250) }
        #expect(Self.dials(picked) == ["10.0.0.2:7002"], "dialled within a second of the trust")
        try other.untrust(nodeID: Self.macID)
        _ = (5...8).flatMap { core.tick(now: Int64($0) * 250) }
        #expect(core.connectFailed(peer: 0, reason: "refused", now: 2_100).isEmpty)
        let after = (9...200).flatMap { core.tick(now: Int64($0) * 250) }
        #expect(Self.dials(after).isEmpty, "an untrusted node is not dialled again")
        #expect(core.nextDeadline.map { $0 > 200 * 250 } ?? true, "and nothing waits on it")
    }
}
