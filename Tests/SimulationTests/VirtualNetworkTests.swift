import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// The network every multi-node test and the simulator run on: what it promises about order,
/// closes, crashes, resets, partitions and dials, checked with a raw endpoint that records what
/// reaches it and with real cores.
@Suite struct VirtualNetworkTests {
    /// A raw participant that keeps what arrives, with the time.
    final class Recorder: VirtualEndpoint {
        var arrivals: [(time: Int64, end: Int, bytes: [UInt8])] = []
        var closes: [(time: Int64, end: Int)] = []
        unowned let network: VirtualNetwork

        init(_ network: VirtualNetwork) { self.network = network }

        func received(end: Int, bytes: [UInt8]) { arrivals.append((network.now, end, bytes)) }
        func closed(end: Int) { closes.append((network.now, end)) }

        /// The frames that arrived, decoded.
        func messages() throws -> [Message] {
            var decoder = FrameDecoder()
            return try arrivals.flatMap { try decoder.feed($0.bytes) }.map { try Message.decode(type: $0.type, payload: $0.payload) }
        }
    }

    /// A network with fixed timing (and whatever else `configure` sets), a phone core on it (and
    /// a mac that dials it, if asked).
    static func network(latency: Int64 = 10, dialDelay: Int64 = 5, withMac: Bool = false,
                        configure: (inout VirtualNetwork.Configuration) -> Void = { _ in }) throws -> (VirtualNetwork, Recorder) {
        var configuration = VirtualNetwork.Configuration()
        configuration.latency = latency...latency
        configuration.dialDelay = dialDelay...dialDelay
        configure(&configuration)
        let network = VirtualNetwork(configuration: configuration, random: SeededRandom(seed: 3))
        let recorder = Recorder(network)
        network.attach("raw", endpoint: recorder, key: Self.key("raw"))
        network.start("phone", key: Self.key("phone"), core: try core(.phone, seed: 1))
        if withMac { network.start("mac", key: Self.key("mac"), core: try core(.mac, seed: 2, peers: ["phone"])) }
        return (network, recorder)
    }

    /// A mac's HELLO, for the raw endpoint to open a session with.
    static func hello() throws -> [UInt8] {
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 77)
        return Message.hello(Hello(nodeID: mac.identity.nodeID, role: .mac, incarnation: mac.identity.incarnation,
                                   capabilities: [.seals, .receivesEntries], clock: mac.currentClock, vector: try mac.replicaVector())).encoded()
    }

    /// The key each host proves: its node's own (`TestKeys`, which its replica seals with).
    /// Any other host proves a key of its own that nobody trusts.
    static func key(_ name: String) -> SHA256.Digest {
        let hosts: [String: (Role, UInt64)] = ["phone": (.phone, 1), "mac": (.mac, 2), "raw": (.mac, 77)]
        guard let (role, seed) = hosts[name], let replica = try? ReplicaFixtures.replica(role: role, seed: seed) else {
            return SHA256.hash(Array(name.utf8))
        }
        return TestKeys.key(for: replica.identity.nodeID).fingerprint
    }

    /// Who trusts whom: the phone (seed 1), the mac (seed 2) and the raw endpoint (the mac of
    /// seed 77 whose HELLO it sends), each under its host's key.
    static func trusted() throws -> [TrustedPeer] {
        try [("phone", Role.phone, UInt64(1)), ("mac", .mac, 2), ("raw", .mac, 77)].map { name, role, seed in
            TrustedPeer(nodeID: try ReplicaFixtures.replica(role: role, seed: seed).identity.nodeID, role: role, fingerprint: key(name),
                        trustedAt: Timestamp(millisecondsSince1970: 0))
        }
    }

    /// A replica that trusts the others.
    static func paired(_ replica: Replica) throws -> Replica {
        for peer in try trusted() where peer.nodeID != replica.identity.nodeID { try replica.trust(peer) }
        return replica
    }

    static func core(_ role: Role, seed: UInt64, peers: [String] = []) throws -> NodeCore {
        NodeCore(replica: try paired(ReplicaFixtures.replica(role: role, seed: seed)), configuration: NodeConfiguration(peers: peers),
                 random: SeededRandom(seed: seed), now: 0)
    }

    @Test func bytesArriveInOrderAfterTheLatencyAndACloseAfterThem() throws {
        let (network, recorder) = try Self.network()
        let end = try #require(network.connect("raw", to: "phone"))
        network.send(try Self.hello(), from: end)
        network.run(until: 100)
        // The phone answers the HELLO when it arrives (10): its own is here one latency later.
        let hello = try #require(recorder.arrivals.first)
        #expect(hello.time == 20)
        guard case .hello = try recorder.messages().first else { Issue.record("no HELLO first"); return }
        // Bytes that are no frame: the phone answers with an ERROR and closes; the close comes last.
        let before = recorder.arrivals.count
        network.send([0xFF, 0xFF, 0xFF, 0xFF, 0x01], from: end)
        network.run(until: 200)
        #expect(recorder.arrivals.count > before)
        let close = try #require(recorder.closes.first)
        #expect(close.end == end)
        #expect(recorder.arrivals.allSatisfy { $0.time <= close.time }, "bytes after the close")
        #expect(try recorder.messages().contains { if case .error = $0 { return true }; return false })
        #expect(network.openConnections(of: "phone").isEmpty)
        #expect(network.violations.isEmpty, "\(network.violations)")
    }

    @Test func aCrashDropsWhatWasInFlightUnlessTheKernelStillSendsIt() throws {
        for keep in [false, true] {
            let (network, recorder) = try Self.network()
            let end = try #require(network.connect("raw", to: "phone"))
            network.send(try Self.hello(), from: end)
            // The phone's HELLO is on its way (sent at 10, due at 20) when the phone dies at 15.
            network.run(until: 15)
            network.crash("phone", keepSentBytes: keep)
            network.run(until: 100)
            #expect(recorder.arrivals.isEmpty == !keep, "keepSentBytes \(keep): \(recorder.arrivals.count) arrivals")
            let close = try #require(recorder.closes.first)
            #expect(close.time == (keep ? 26 : 25), "close at \(close.time)")
            #expect(!network.isUp("phone"))
            #expect(network.connect("raw", to: "phone") == nil, "connected to a dead process")
        }
    }

    @Test func aResetLosesWhatIsInFlightAndBothEndsHearOfIt() throws {
        let (network, recorder) = try Self.network(withMac: true)
        network.run(until: 1_000)
        let ends = network.openConnections(of: "phone")
        #expect(ends.count == 1 && network.openConnections(of: "mac").count == 1)
        let end = try #require(network.connect("raw", to: "phone"))
        network.send(try Self.hello(), from: end)
        network.run(until: 1_015)
        network.resetConnections { _, _ in true }
        network.run(until: 1_100)
        #expect(recorder.arrivals.isEmpty, "the HELLO in flight arrived after the reset")
        #expect(recorder.closes.map(\.time) == [1_025])
        #expect(network.faultCounts["reset"] == 2)
        #expect(network.violations.isEmpty, "\(network.violations)")
    }

    @Test func partitionsFailDialsUntilHealedAndHoldTrafficAcrossThem() throws {
        let (network, _) = try Self.network()
        network.isolate("phone", from: ["phone", "mac", "raw"])
        #expect(network.connect("raw", to: "phone") == nil)
        network.start("mac", key: Self.key("mac"), core: try Self.core(.mac, seed: 2, peers: ["phone"]))
        network.run(until: 50)
        #expect(network.failedDials.map(\.host) == ["mac"])
        #expect(network.openConnections(of: "phone").isEmpty)
        network.heal("phone")
        #expect(network.connect("raw", to: "phone") != nil)

        // One way blocked: bytes on an open connection wait for the partition's hold.
        let (held, recorder) = try Self.network()
        held.configuration.partitionHold = 5_000
        held.block(from: "phone", to: "raw")
        // A dial needs both directions.
        #expect(held.connect("raw", to: "phone") == nil)
        held.heal()
        let end = try #require(held.connect("raw", to: "phone"))
        held.block(from: "phone", to: "raw")
        held.send(try Self.hello(), from: end)
        held.run(until: 4_000)
        #expect(recorder.arrivals.isEmpty)
        held.run(until: 6_000)
        // Sent at 10 into the partition: held for 5 s.
        #expect(recorder.arrivals.first?.time == 5_010)
    }

    @Test func aDialStartedByAProcessThatDiedCompletesForNobody() throws {
        let (network, _) = try Self.network(dialDelay: 100)
        network.start("mac", key: Self.key("mac"), core: try Self.core(.mac, seed: 2, peers: ["phone"]))  // dials at 0, done at 100
        network.run(until: 50)
        network.crash("mac")
        network.run(until: 60)
        network.start("mac", key: Self.key("mac"), core: try Self.core(.mac, seed: 2, peers: ["phone"]))  // dials at 60, done at 160
        network.run(until: 150)
        #expect(network.openConnections(of: "phone").isEmpty, "the dead process's dial connected")
        network.run(until: 200)
        #expect(network.openConnections(of: "phone").count == 1)
        #expect(network.violations.isEmpty, "\(network.violations)")
    }

    @Test func coresThatMisbehaveOnTheNetworkAreReported() throws {
        let (network, _) = try Self.network(withMac: true)
        network.run(until: 1_000)
        let phoneEnd = try #require(network.openConnections(of: "phone").first)
        network.perform([.send(connection: phoneEnd, bytes: [1, 2, 3])], on: "mac")
        network.perform([.send(connection: 999, bytes: [1])], on: "mac")
        network.perform([.connect(peer: 7, address: "phone"), .connect(peer: 7, address: "phone")], on: "mac")
        #expect(network.violations.count == 3, "\(network.violations)")
        #expect(network.violations.contains { $0.contains("which is phone's") })
        #expect(network.violations.contains { $0.contains("never existed") })
        #expect(network.violations.contains { $0.contains("while a dial was in progress") })
    }

    @Test func aRunThatNeverSettlesIsStoppedAndReported() throws {
        var configuration = VirtualNetwork.Configuration()
        configuration.eventLimit = 1_000
        let network = VirtualNetwork(configuration: configuration, random: SeededRandom(seed: 1))
        func again() { network.schedule(at: network.now) { again() } }
        again()
        network.run(until: 10)
        #expect(network.violations.count == 1 && network.violations[0].contains("did not settle"), "\(network.violations)")
        #expect(network.now == 10)
    }

    @Test func theSameSeedGivesTheSameTrace() throws {
        func trace(seed: UInt64) throws -> [String] {
            var configuration = VirtualNetwork.Configuration()
            configuration.faults = true
            configuration.duplicationPerMille = 100
            let network = VirtualNetwork(configuration: configuration, random: SeededRandom(seed: seed))
            var lines: [String] = []
            network.tracer = { time, line, _ in lines.append("\(time) \(line)") }
            let phone = try Self.paired(ReplicaFixtures.replica(role: .phone, seed: 1))
            for i in 0..<50 { try phone.add(json: ReplicaFixtures.entryJSON(text: "n\(i)")) }
            network.start("phone", key: Self.key("phone"), core: NodeCore(replica: phone, configuration: NodeConfiguration(peers: []), random: SeededRandom(seed: 1), now: 0))
            network.start("mac", key: Self.key("mac"), core: try Self.core(.mac, seed: 2, peers: ["phone"]))
            network.run(until: 5_000)
            return lines
        }
        let a = try trace(seed: 9), b = try trace(seed: 9), c = try trace(seed: 10)
        #expect(a.count > 10)
        #expect(a == b)
        #expect(a != c)
    }
}
