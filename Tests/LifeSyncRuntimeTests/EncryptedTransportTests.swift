import Foundation
import Glibc
import LifeSync
@testable import LifeSyncRuntime
import Testing
import TestSupport

/// Every node connection is TLS 1.3: a node's key is made beside its replica on first serve and
/// kept; a peer speaking plain frames, or connecting and saying nothing, is dropped before the
/// core hears of it; and what two nodes exchange crosses a relay in the middle as ciphertext.
@Suite(.serialized) struct EncryptedTransportTests {
    @Test(.timeLimit(.minutes(3)))
    func theNodesKeyIsMadeBesideItsReplicaAndIsTheOneItProves() throws {
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let keyPath = NodeKey.path(forReplica: cluster.path("phone"))
        #expect(access(keyPath, F_OK) != 0, "a key before the first serve")
        try cluster.start("phone")
        let key = try NodeKey.load(from: keyPath)
        let peer = try RawPeer(port: cluster.port("phone"))
        #expect(peer.nodeFingerprint == key.fingerprint)
        // A restart proves the same key.
        cluster.stop("phone")
        try cluster.start("phone")
        #expect(try RawPeer(port: cluster.port("phone")).nodeFingerprint == key.fingerprint)
    }

    /// A node that sends a HELLO in the clear is told why, in its own framing; other plain bytes get nothing.
    @Test(.timeLimit(.minutes(3)))
    func plainFramesAreRefusedBeforeTheCoreSeesThemAndNothingIsStored() throws {
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let phone = try cluster.open("phone")
        let node = try cluster.start("phone")
        let plain = try RawPeer(port: cluster.port("phone"), tls: false)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 7)
        try mac.add(json: ReplicaFixtures.entryJSON(text: "sent in the clear"))
        plain.send(Message.hello(Hello(nodeID: mac.identity.nodeID, role: .mac, incarnation: mac.identity.incarnation,
                                       capabilities: [.seals, .receivesEntries], clock: mac.currentClock, vector: try mac.replicaVector())).encoded())
        let answer = plain.readUntilClosed(seconds: 5)
        #expect(answer.closed, "the node kept a plaintext connection open")
        guard case .error(let code, let message) = answer.messages.first, answer.messages.count == 1 else {
            Issue.record("expected one ERROR, got \(answer.messages)")
            return
        }
        #expect(code == ErrorCode.versionUnsupported.rawValue)
        #expect(message.contains("TLS 1.3 only"), "\(message)")
        let garbage = try RawPeer(port: cluster.port("phone"), tls: false)
        garbage.send(Array(repeating: 0x41, count: 64) + Message.ping(nonce: 1).encoded())
        let nothing = garbage.readUntilClosed(seconds: 5)
        #expect(nothing.closed && nothing.messages.isEmpty, "\(nothing)")
        // The node closes before it counts: the client can see the close first.
        #expect(waitUntil(timeout: 5) { node.server.statistics.failedHandshakes == 2 }, "\(node.server.statistics.failedHandshakes)")
        #expect(try phone.liveEntryCount() == 0)
        #expect(try phone.peers().isEmpty, "a plaintext peer left a row")
        #expect(waitUntil(timeout: 5) { cluster.log("phone").contains { $0.contains("refused connection") } }, "\(cluster.log("phone"))")
    }

    @Test(.timeLimit(.minutes(3)))
    func aConnectionThatNeverCompletesItsHandshakeIsDroppedAtTheDeadline() throws {
        var limits = NodeServer.Limits()
        limits.handshakeTimeout = 300
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        let node = try cluster.start("phone", limits: limits)
        let silent = try RawPeer(port: cluster.port("phone"), tls: false)
        #expect(waitUntil(timeout: 10) { node.server.statistics.failedHandshakes == 1 }, "\(node.server.statistics)")
        #expect(silent.readUntilClosed(seconds: 5).closed)
        #expect(waitUntil(timeout: 5) { node.server.statistics.connections == 0 })
    }

    @Test(.timeLimit(.minutes(3)))
    func twoNodesSyncThroughARelayThatSeesOnlyCiphertext() throws {
        let cluster = LoopbackCluster()
        try cluster.create("phone", role: .phone)
        try cluster.create("mac", role: .mac)
        let phone = try cluster.open("phone"), mac = try cluster.open("mac")
        let secret = "blood pressure 150/95 after the stairs"
        try mac.add(json: ReplicaFixtures.entryJSON(text: secret, category: "health"))
        try cluster.start("phone")
        let relay = try TCPRelay(to: cluster.port("phone"))
        defer { relay.stop() }
        try cluster.start("mac", listen: nil, peers: ["127.0.0.1:\(relay.port)"])
        #expect(waitUntil(timeout: 15) { (try? phone.liveEntryCount()) == 1 })
        #expect(try phone.entries(matching: EntryQuery(limit: 10)).first?.data.text == secret)
        let seen = relay.captured()
        #expect(seen.count > 500, "the relay carried \(seen.count) bytes")
        #expect(!seen.contains(secret: Array("150/95".utf8)), "entry text crossed the relay in the clear")
        #expect(!seen.contains(secret: Array(mac.identity.nodeID.utf8)), "the node ID crossed the relay in the clear")
    }
}

/// A TCP relay on loopback that forwards one connection to `port` and keeps every byte it
/// carried (both ways), as a proxy in the middle would. Runs on a thread; bounded in time.
final class TCPRelay: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private var stopping = false
    private let done = DispatchSemaphore(value: 0)

    init(to target: UInt16) throws {
        listener = try Socket.listen(on: try SocketAddress(parsing: "127.0.0.1:0"))
        port = UInt16(Socket.localAddress(listener).split(separator: ":").last!)!
        let thread = Thread { [self] in
            run(target: target)
            done.signal()
        }
        thread.start()
    }

    func captured() -> [UInt8] { lock.lock(); defer { lock.unlock() }; return bytes }

    func stop() {
        lock.lock(); stopping = true; lock.unlock()
        done.wait()
        close(listener)
    }

    private var shouldStop: Bool { lock.lock(); defer { lock.unlock() }; return stopping }

    private func run(target: UInt16) {
        var pairs: [(Int32, Int32)] = []
        defer { for (a, b) in pairs { close(a); close(b) } }
        let deadline = MonotonicClock.seconds() + 60
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !shouldStop && MonotonicClock.seconds() < deadline {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for (a, b) in pairs { fds.append(pollfd(fd: a, events: Int16(POLLIN), revents: 0)); fds.append(pollfd(fd: b, events: Int16(POLLIN), revents: 0)) }
            guard poll(&fds, nfds_t(fds.count), 50) > 0 else { continue }
            if fds[0].revents & Int16(POLLIN) != 0, case .accepted(let client, _, _) = Socket.accept(listener),
               let server = try? Socket.startConnect(to: try SocketAddress(parsing: "127.0.0.1:\(target)")) {
                var out = pollfd(fd: server, events: Int16(POLLOUT), revents: 0)
                _ = poll(&out, 1, 2_000)
                pairs.append((client, server))
            }
            for (index, (a, b)) in pairs.enumerated() {
                for (from, to, slot) in [(a, b, 1 + 2 * index), (b, a, 2 + 2 * index)] where fds.count > slot && fds[slot].revents != 0 {
                    let got = recv(from, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                    guard got > 0 else { continue }
                    var sent = 0
                    while sent < got {
                        let n = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, got - sent, Int32(MSG_NOSIGNAL)) }
                        if n > 0 { sent += n } else if errno == EAGAIN { usleep(500) } else { break }
                    }
                    lock.lock(); bytes += buffer[0..<got]; lock.unlock()
                }
            }
        }
    }
}
