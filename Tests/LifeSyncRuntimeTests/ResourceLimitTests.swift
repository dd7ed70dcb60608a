import Foundation
import Glibc
import LifeSync
@testable import LifeSyncRuntime
import Testing
import TestSupport

/// What a hostile peer can make a node hold (`NodeServer.Limits`): output queued for a peer that
/// never reads, connections beyond the caps, and a listener that cannot accept for want of
/// descriptors. Small limits, so the tests stay quick; every loop bounded in count and time.
@Suite(.serialized) struct ResourceLimitTests {
    /// A well-behaved mac that writes one entry and dials `phone`: the phone must get it.
    static func expectAGoodPeerSyncs(_ cluster: LoopbackCluster, phone: Replica, entries: Int = 1,
                                     sourceLocation: SourceLocation = #_sourceLocation) throws {
        try cluster.create("mac", role: .mac)
        let mac = try cluster.open("mac")
        try mac.add(json: try JSONValue.parse(#"{"category": "note", "data": {"text": "good peer"}}"#))
        try cluster.start("mac", listen: nil, peers: [cluster.address("phone")])
        let synced = waitUntil(timeout: 20) { (try? phone.liveEntryCount()) == entries }
        #expect(synced, "the good peer did not sync\nphone:\n\(cluster.log("phone").joined(separator: "\n"))\nmac:\n\(cluster.log("mac").joined(separator: "\n"))",
                sourceLocation: sourceLocation)
    }

    // MARK: output for a peer that never reads

    /// The limits cover the bounds of its waits (a flood of 30 s at most, then 10, 20 and 20 s):
    /// one minute did not, and a loaded CI machine ran past it.
    @Test(.timeLimit(.minutes(2)))
    func aPeerThatFloodsPingsAndNeverReadsCannotMakeTheNodeQueueMoreThanTheBound() throws {
        var limits = NodeServer.Limits()
        limits.maximumQueuedOutput = 256 << 10
        limits.readSize = 64 << 10
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let phone = try cluster.open("phone")
        let node = try cluster.start("phone", limits: limits)

        let flooder = try RawPeer.helloed(trustedBy: phone, port: cluster.port("phone"))
        let sent = RawPeer.floodPings([flooder], bytesEach: 8 << 20)[0]
        #expect(waitUntil(timeout: 10) { node.server.statistics.pausedConnections == 1 },
                "the node never stopped reading from the flooder (\(sent) bytes sent): \(node.server.statistics)\n\(cluster.log("phone").joined(separator: "\n"))")
        usleep(200_000)
        let bound = limits.maximumQueuedOutput + limits.readSize + 64 * 1024
        let statistics = node.server.statistics
        #expect(statistics.largestQueuedOutput <= bound, "queued \(statistics.largestQueuedOutput) bytes for one peer; bound \(bound) (\(sent) bytes of PINGs sent)")
        #expect(statistics.queuedOutputBytes <= bound)
        #expect(cluster.log("phone").contains { $0.contains("not reading from it until that drains") })

        // The node keeps serving others meanwhile.
        try Self.expectAGoodPeerSyncs(cluster, phone: phone)

        // Once the flooder reads, its output drains below half and the node reads from it again.
        var resumed = false
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let drainDeadline = Date().addingTimeInterval(20)
        for _ in 0..<1_000_000 {
            if Date() >= drainDeadline { break }
            _ = recv(flooder.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            let now = node.server.statistics
            if now.pausedConnections == 0 && now.queuedOutputBytes < limits.maximumQueuedOutput / 2 {
                resumed = true
                break
            }
            usleep(200)
        }
        #expect(resumed, "reading never resumed: \(node.server.statistics)")
    }

    /// Several paired peers flooding PINGs and reading nothing: each within its own bound, and
    /// all of them together within the total (four such peers held 238 MiB).
    @Test(.timeLimit(.minutes(2)))  // a flood of 30 s at most, then waits of 20 and 20 s
    func peersThatFloodPingsTogetherStayWithinTheTotalOutputBudget() throws {
        var limits = NodeServer.Limits()
        limits.maximumQueuedOutput = 4 << 20
        limits.maximumTotalQueuedOutput = 1 << 20
        limits.readSize = 64 << 10
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let phone = try cluster.open("phone")
        let node = try cluster.start("phone", limits: limits)
        let flooders = try (0..<4).map { _ in try RawPeer.helloed(trustedBy: phone, port: cluster.port("phone")) }
        let sent = RawPeer.floodPings(flooders, bytesEach: 12 << 20)
        // However busy the machine, the node pauses a flooder once the total is spent.
        #expect(waitUntil(timeout: 20) { node.server.statistics.pausedConnections >= 1 }, "\(node.server.statistics)")
        let statistics = node.server.statistics
        let bound = limits.maximumTotalQueuedOutput + flooders.count * (limits.readSize + 64 * 1024)
        #expect(statistics.queuedOutputBytes <= bound, "queued \(statistics.queuedOutputBytes) bytes for all; bound \(bound) (\(sent) sent)")
        try Self.expectAGoodPeerSyncs(cluster, phone: phone)
    }

    // MARK: connection caps

    /// Opens `count` connections that are closed by the node at once; returns how many were.
    /// `count` strangers that connect over plain TCP and say nothing, kept open.
    static func idleStrangers(_ count: Int, port: UInt16) throws -> [RawPeer] {
        try (0..<count).map { _ in try RawPeer(port: port, tls: false) }
    }

    /// Strangers fill every slot (idle TCP, or a finished TLS handshake and nothing after):
    /// each newcomer takes the oldest one's place, the node never holds more than its cap, and
    /// a paired peer gets in and syncs though no stranger ever left (128 idle connections locked
    /// every paired peer out for 9-10 s, again and again).
    @Test(.timeLimit(.minutes(3)))
    func strangersFillingTheTotalCapGiveWayToAPairedPeer() throws {
        var limits = NodeServer.Limits()
        limits.maximumConnections = 4
        limits.maximumConnectionsPerAddress = 16
        limits.preAuthenticationTimeout = 60_000  // only making room is tested here
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let phone = try cluster.open("phone")
        let node = try cluster.start("phone", limits: limits)
        let port = cluster.port("phone")

        let first = try (0..<4).map { _ in try RawPeer(port: port) }
        #expect(waitUntil(timeout: 10) { node.server.statistics.connections == 4 }, "\(node.server.statistics)")
        let later = try Self.idleStrangers(10, port: port)
        #expect(waitUntil(timeout: 10) { node.server.statistics.refusedConnections >= 10 }, "\(node.server.statistics)")
        #expect(node.server.statistics.connections <= 4)
        for peer in first { #expect(peer.readUntilClosed(seconds: 5).closed, "the oldest strangers gave way") }
        let lines = cluster.log("phone").filter { $0.contains("refused connection") }
        #expect(!lines.isEmpty && lines.count < 10, "the refusals are not rate-limited: \(lines)")
        #expect(lines.first?.contains("made room for a newer connection") == true, "\(lines)")

        try Self.expectAGoodPeerSyncs(cluster, phone: phone)
        #expect(later.count == 10)
    }

    /// The same at the per-address cap: strangers from the paired peer's own address give way.
    @Test(.timeLimit(.minutes(3)))
    func strangersAtThePerAddressCapGiveWayToAPairedPeer() throws {
        var limits = NodeServer.Limits()
        limits.maximumConnections = 64
        limits.maximumConnectionsPerAddress = 3
        limits.preAuthenticationTimeout = 60_000
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let phone = try cluster.open("phone")
        let node = try cluster.start("phone", limits: limits)
        let port = cluster.port("phone")

        let held = try Self.idleStrangers(3, port: port)
        #expect(waitUntil(timeout: 10) { node.server.statistics.connections == 3 }, "\(node.server.statistics)")
        let more = try Self.idleStrangers(5, port: port)
        #expect(waitUntil(timeout: 10) { node.server.statistics.refusedConnections >= 5 }, "\(node.server.statistics)")
        #expect(node.server.statistics.connections <= 3)
        try Self.expectAGoodPeerSyncs(cluster, phone: phone)
        #expect(held.count + more.count == 8)
    }

    /// Paired nodes on one machine (the same address) are not held to the cap per address: it
    /// counts only connections not yet proven a paired peer's (20 nodes on one machine had 8 to
    /// 16 peers each, not 19).
    @Test(.timeLimit(.minutes(3)))
    func pairedPeersFromOneAddressAreNotHeldToThePerAddressCap() throws {
        var limits = NodeServer.Limits()
        limits.maximumConnectionsPerAddress = 2
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let phone = try cluster.open("phone")
        let node = try cluster.start("phone", limits: limits)
        let paired = try (0..<4).map { _ in try RawPeer.helloed(trustedBy: phone, port: cluster.port("phone")) }
        #expect(waitUntil(timeout: 10) { node.server.statistics.connections == 4 }, "\(node.server.statistics)")
        usleep(300_000)
        #expect(node.server.statistics.connections == 4 && node.server.statistics.refusedConnections == 0, "\(node.server.statistics)")
        #expect(paired.count == 4)
    }

    /// A stranger that connects and says nothing, or stops after the TLS handshake, holds its
    /// slot for the pre-authentication budget only.
    @Test(.timeLimit(.minutes(3)))
    func anUnprovenConnectionIsDroppedAfterItsBudget() throws {
        var limits = NodeServer.Limits()
        limits.preAuthenticationTimeout = 500
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let node = try cluster.start("phone", limits: limits)
        let port = cluster.port("phone")
        let silent = try RawPeer(port: port, tls: false)
        let handshaken = try RawPeer(port: port)
        #expect(silent.readUntilClosed(seconds: 10).closed)
        #expect(handshaken.readUntilClosed(seconds: 10).closed)
        #expect(waitUntil(timeout: 5) { node.server.statistics.connections == 0 }, "\(node.server.statistics)")
    }

    /// Paired but buggy peers, each parking most of a large frame after its HELLO and sending
    /// no more: what they make the node hold together stays within the input budget (plus one
    /// read), the parked frames are closed once stalled, and a good peer syncs meanwhile (forty
    /// such peers took a node from 32 to 455 MiB).
    @Test(.timeLimit(.minutes(3)))
    func unfinishedFramesOfManyPeersStayWithinTheInputBudget() throws {
        var limits = NodeServer.Limits()
        limits.maximumBufferedInput = 2 << 20
        limits.readSize = 1 << 20
        limits.stalledFrameTimeout = 1_500
        limits.maximumConnectionsPerAddress = 32  // all of them come from 127.0.0.1
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let phone = try cluster.open("phone")
        let node = try cluster.start("phone", limits: limits)
        let port = cluster.port("phone")
        var parked: [RawPeer] = []
        for _ in 0..<10 {
            let peer = try RawPeer.helloed(trustedBy: phone, port: port)
            // A BATCH frame of 2 MiB announced, 600 KiB of it sent, the rest never.
            let length = 2 << 20
            peer.send(RawPeer.frameHeader(length: length, type: .batch) + [UInt8](repeating: 0, count: 600 << 10))
            parked.append(peer)
        }
        #expect(waitUntil(timeout: 10) { node.server.statistics.bufferedInputBytes >= limits.maximumBufferedInput }, "\(node.server.statistics)")
        let largest = node.server.statistics.largestBufferedInput
        #expect(largest <= limits.maximumBufferedInput + limits.readSize + limits.budgetReadSize,
                "the sessions held \(largest) bytes of unfinished frames, over the budget of \(limits.maximumBufferedInput)")
        try Self.expectAGoodPeerSyncs(cluster, phone: phone)
        #expect(waitUntil(timeout: 10) { node.server.statistics.bufferedInputBytes < limits.maximumBufferedInput }, "\(node.server.statistics)")
        #expect(cluster.log("phone").contains { $0.contains("without sending more while the node was short of room") })
        #expect(parked.count == 10)
    }

    @Test func theConnectionCapFitsTheDescriptorLimit() {
        let limits = NodeServer.Limits()
        #expect(limits.maximumQueuedOutput == 16 << 20)
        #expect(limits.connectionCap(fileLimit: nil) == 128)
        #expect(limits.connectionCap(fileLimit: 1_024) == 128)
        #expect(limits.connectionCap(fileLimit: 256) == 128)
        #expect(limits.connectionCap(fileLimit: 64) == 32)
        #expect(limits.connectionCap(fileLimit: 10) == 1)
    }

    // MARK: accept failing for want of descriptors

    /// A node server driven by hand on the test's thread, with accept replaced by `accept`.
    final class HandDriven {
        let directory = TemporaryDirectory("lifesync-accept")
        let server: NodeServer
        let lines = Lines()
        var attempts = 0

        final class Lines: @unchecked Sendable {
            private let lock = NSLock()
            private var all: [String] = []
            func append(_ line: String) { lock.lock(); all.append(line); lock.unlock() }
            func matching(_ text: String) -> [String] { lock.lock(); defer { lock.unlock() }; return all.filter { $0.contains(text) } }
        }

        /// `http`: the seam is the HTTP API's listener, and `port` is the API's.
        init(limits: NodeServer.Limits, http: Bool = false, accept: @escaping (Int) -> Socket.AcceptOutcome?) throws {
            let replica = try Replica.create(path: directory.file("phone.sqlite"), role: .phone, clock: SystemClock(), random: SystemRandom())
            let lines = self.lines
            server = try NodeServer(replica: replica, configuration: NodeConfiguration(), listen: "127.0.0.1:0", limits: limits) { lines.append($0) }
            if http { try server.serveHTTP(on: "127.0.0.1:0") }
            let listener = http ? server.http!.listener : server.listener!
            address = listener.address
            listener.accept = { [unowned self] fd in
                self.attempts += 1
                return accept(self.attempts) ?? Socket.accept(fd)
            }
        }

        let address: String
        var port: UInt16 { UInt16(address.split(separator: ":").last!)! }
    }

    /// The HTTP API's listener is the same kind (`Listener`): out of descriptors, it backs off
    /// too, where it was polled and accept called again every round, a loop at full speed.
    @Test(.timeLimit(.minutes(3)))
    func theHTTPListenerBacksOffAsTheNodesDoes() throws {
        var limits = NodeServer.Limits()
        limits.acceptBackoff = 30
        limits.maximumAcceptBackoff = 60_000
        let driven = try HandDriven(limits: limits, http: true) { attempt in attempt == 1 ? .failed(EMFILE) : nil }
        let client = try RawPeer(port: driven.port, tls: false)  // readable from now on, until accepted
        _ = client
        driven.server.pollOnce(maximumWait: 2_000)
        #expect(driven.attempts == 1)
        for _ in 0..<20 { driven.server.pollOnce(maximumWait: 1) }
        #expect(driven.attempts <= 3, "accept was called \(driven.attempts) times in 20 rounds of the 30 ms back-off")
        #expect(driven.lines.matching("HTTP: cannot accept connections").count == 1)
        let deadline = Date().addingTimeInterval(10)
        for _ in 0..<1_000 where driven.lines.matching("HTTP: accepting connections again").isEmpty && Date() < deadline {
            driven.server.pollOnce(maximumWait: 5)
        }
        #expect(driven.lines.matching("HTTP: accepting connections again").count == 1, "the listener never accepted after its back-off")
    }

    @Test(.timeLimit(.minutes(3)))
    func whenAcceptRunsOutOfDescriptorsTheListenerIsNotPolledDuringTheBackOff() throws {
        var limits = NodeServer.Limits()
        limits.acceptBackoff = 60_000  // longer than the test: the listener must stay out of the poll
        limits.maximumAcceptBackoff = 60_000
        let driven = try HandDriven(limits: limits) { _ in .failed(EMFILE) }
        let peer = try RawPeer(port: driven.port, tls: false)  // the listener is readable from now on, and stays so
        _ = peer

        driven.server.pollOnce(maximumWait: 2_000)
        #expect(driven.attempts == 1)
        #expect(driven.server.statistics.listenerPaused)
        #expect(driven.server.statistics.acceptFailures == 1)
        let polls = driven.server.statistics.listenerPolls
        #expect(polls == 1)
        for _ in 0..<50 { driven.server.pollOnce(maximumWait: 2) }
        // Without the back-off every round would poll the readable listener and call accept again.
        #expect(driven.attempts == 1, "accept was called \(driven.attempts) times during the back-off")
        #expect(driven.server.statistics.listenerPolls == polls)
        #expect(driven.server.statistics.listenerPaused)
        #expect(driven.lines.matching("cannot accept connections").count == 1)
    }

    @Test(.timeLimit(.minutes(3)))
    func afterTheBackOffTheListenerAcceptsAgainAndLogsOncePerEpisode() throws {
        var limits = NodeServer.Limits()
        limits.acceptBackoff = 20
        limits.maximumAcceptBackoff = 40
        // Three failures (20, 40, 40 ms of back-off), then the real accept.
        let driven = try HandDriven(limits: limits) { attempt in attempt <= 3 ? .failed(EMFILE) : nil }
        let peer = try RawPeer(port: driven.port, tls: false)
        _ = peer

        let deadline = Date().addingTimeInterval(10)
        var rounds = 0
        while driven.server.statistics.connections == 0 && rounds < 10_000 && Date() < deadline {
            rounds += 1
            driven.server.pollOnce(maximumWait: 5)
        }
        let statistics = driven.server.statistics
        #expect(statistics.connections == 1, "never accepted: \(statistics)")
        #expect(statistics.acceptFailures == 3)
        // Polled once per failure and once more for the connection: never while paused.
        #expect(statistics.listenerPolls == 4, "\(statistics) in \(rounds) rounds")
        #expect(!statistics.listenerPaused)
        #expect(driven.lines.matching("cannot accept connections").count == 1)
        #expect(driven.lines.matching("accepting connections again").count == 1)
    }
}
