import Foundation
import Glibc
import LifeSync
@testable import LifeSyncRuntime
import Testing
import TestSupport

/// What HTTP clients can make a node hold (`HTTPServer.Limits`): connections over the cap, a
/// client that sends half a request, one that sends nothing. Small limits and timeouts; every
/// wait bounded.
@Suite(.serialized) struct HTTPServerLimitTests {
    /// A node serving only HTTP on a thread, with `limits`; stopped when the test ends.
    final class Served {
        let server: NodeServer
        let port: UInt16
        private let thread: Thread
        private let done = DispatchSemaphore(value: 0)
        /// The node's log lines, written on its thread.
        private let logLock = Lock()
        private let logLines = LogLines()
        var log: [String] { logLock.withLock { logLines.lines } }

        final class LogLines: @unchecked Sendable {
            var lines: [String] = []
            func append(_ line: String) { lines.append(line) }
        }

        /// `prepare` runs on the replica before the node's thread starts (which then owns it).
        /// With `https`, the HTTPS identity is kept there and the API served over TLS.
        init(limits: HTTPServer.Limits, https: TemporaryDirectory? = nil, prepare: (Replica) throws -> Void = { _ in }) throws {
            let replica = try Replica.create(path: ":memory:", role: .phone, clock: SystemClock(), random: SystemRandom())
            try prepare(replica)
            let identity = try https.map { directory in
                try HTTPSIdentity(replicaPath: directory.file("phone.sqlite"), nodeID: replica.identity.nodeID) {
                    try HTTPSNames.forServing(bound: "127.0.0.1", extra: [], hostName: "phone", interfaceAddresses: { _ in [] })
                }
            }
            let (lock, lines) = (logLock, logLines)
            server = try NodeServer(replica: replica, configuration: NodeConfiguration(), listen: nil) { line in lock.withLock { lines.append(line) } }
            let address = try server.serveHTTP(on: "127.0.0.1:0", limits: limits, https: identity)
            port = try #require(UInt16(address.split(separator: ":").last ?? ""))
            let (server, done) = (server, done)
            thread = Thread { server.run(); done.signal() }
            thread.start()
        }

        deinit {
            server.requestStop()
            _ = done.wait(timeout: .now() + 10)
        }
    }

    static func request(_ peer: RawPeer, _ text: String) -> String {
        peer.send(Array(text.utf8))
        let (bytes, _) = peer.readBytes(seconds: 10) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n{") && $0.last == UInt8(ascii: "\n") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Every slot held by a client that made a request with a valid key: a newcomer gets 503.
    @Test(.timeLimit(.minutes(3)))
    func aConnectionOverTheCapIsAnswered503AndTheOthersKeepWorking() throws {
        var limits = HTTPServer.Limits()
        limits.maximumConnections = 2
        var key = ""
        let node = try Served(limits: limits) { key = try $0.createAPIKey(name: "test") }
        let keyed = "GET /api/status HTTP/1.1\r\nHost: n\r\nAuthorization: Bearer \(key)\r\n\r\n"
        let get = "GET /api/status HTTP/1.1\r\nHost: n\r\n\r\n"
        let first = try RawPeer(port: node.port, tls: false), second = try RawPeer(port: node.port, tls: false)
        #expect(Self.request(first, keyed).hasPrefix("HTTP/1.1 200 "))
        #expect(Self.request(second, keyed).hasPrefix("HTTP/1.1 200 "))
        let third = try RawPeer(port: node.port, tls: false)
        let (refused, closed) = third.readBytes(seconds: 10)
        let text = String(decoding: refused, as: UTF8.self)
        #expect(closed && text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n") && text.contains("the limit is 2"), "\(text)")
        // The two open ones still work (keep-alive), and a slot freed is taken again.
        #expect(Self.request(first, get).hasPrefix("HTTP/1.1 401 "))
        _ = consume second
        var served = false
        for _ in 0..<50 where !served {
            let again = try RawPeer(port: node.port, tls: false)
            served = Self.request(again, get).hasPrefix("HTTP/1.1 401 ")
            if !served { usleep(50_000) }
        }
        #expect(served, "a freed slot was never taken again")
    }

    /// Every slot held by an unfinished request without a key (64 held every slot and keyed
    /// clients got 503 for 30 s a wave): a keyed client still gets in, the oldest of them
    /// closed to make room.
    @Test(.timeLimit(.minutes(3)))
    func unfinishedRequestsWithoutAKeyGiveWayToAKeyedClient() throws {
        var limits = HTTPServer.Limits()
        limits.maximumConnections = 4
        var key = ""
        let node = try Served(limits: limits) { key = try $0.createAPIKey(name: "test") }
        let holders = try (0..<4).map { _ in try RawPeer(port: node.port, tls: false) }
        for holder in holders { holder.send(Array("GET /api/status HTTP/1.1\r\nHo".utf8)) }
        usleep(200_000)
        var clients: [RawPeer] = []  // kept open: each takes a holder's slot for good
        for round in 0..<3 {
            let client = try RawPeer(port: node.port, tls: false)
            clients.append(client)
            let answer = Self.request(client, "GET /api/status HTTP/1.1\r\nHost: n\r\nAuthorization: Bearer \(key)\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "round \(round): \(answer.prefix(200))")
        }
        #expect(holders.prefix(3).allSatisfy { $0.readBytes(seconds: 5).closed }, "the oldest holders made room")
        #expect(clients.count == 3)
        #expect(node.log.contains { $0.contains("to make room for a newer connection") }, "\(node.log)")
    }

    @Test(.timeLimit(.minutes(3)))
    func aSlowRequestGets408AndASilentConnectionIsClosed() throws {
        var limits = HTTPServer.Limits()
        limits.timeouts.request = 200
        limits.timeouts.idle = 200
        let node = try Served(limits: limits)
        let slow = try RawPeer(port: node.port, tls: false)
        slow.send(Array("GET /api/status HTTP/1.1\r\nHo".utf8))
        let (answer, closed) = slow.readBytes(seconds: 10)
        let text = String(decoding: answer, as: UTF8.self)
        #expect(closed && text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n") && text.contains("Connection: close"), "\(text)")
        let silent = try RawPeer(port: node.port, tls: false)
        let (nothing, silentClosed) = silent.readBytes(seconds: 10)
        #expect(silentClosed && nothing.isEmpty)
    }

    /// Under HTTPS the TLS handshake has the connection's idle time: a client that sends
    /// nothing, or half a ClientHello, is closed then. Plain HTTP is told in plain HTTP to use
    /// https://, and closed.
    @Test(.timeLimit(.minutes(3)))
    func anHTTPSHandshakeHasTheIdleTimeAndPlainHTTPIsToldToUseHTTPS() throws {
        var limits = HTTPServer.Limits()
        limits.timeouts.idle = 200
        let directory = TemporaryDirectory()
        let node = try Served(limits: limits, https: directory)
        let silent = try RawPeer(port: node.port, tls: false)
        let halfHello = try RawPeer(port: node.port, tls: false)
        halfHello.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])  // a record of 512 bytes announced, 1 sent
        for peer in [silent, halfHello] {
            let (nothing, closed) = peer.readBytes(seconds: 10)
            #expect(closed && nothing.isEmpty, "\(nothing.count) bytes, closed: \(closed)")
        }
        let plain = try RawPeer(port: node.port, tls: false)
        plain.send(Array("GET /api/status HTTP/1.1\r\nHost: n\r\n\r\n".utf8))
        let (answer, closed) = plain.readBytes(seconds: 10)
        let text = String(decoding: answer, as: UTF8.self)
        #expect(closed && text.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && text.contains("This port speaks HTTPS: use https://"), "\(text)")
    }

    @Test(.timeLimit(.minutes(3)))
    func eventStreamsOverTheCapAreAnswered503AndAFreedSlotIsTaken() throws {
        var limits = HTTPServer.Limits()
        limits.maximumEventStreams = 2
        var key = ""
        let node = try Served(limits: limits) { replica in
            key = try replica.createAPIKey(name: "test")
            _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "one"))
        }
        let stream = "GET /api/changes/stream HTTP/1.1\r\nHost: n\r\nAuthorization: Bearer \(key)\r\n\r\n"
        func open() throws -> (RawPeer, String) {
            let peer = try RawPeer(port: node.port, tls: false)
            peer.send(Array(stream.utf8))
            let (bytes, _) = peer.readBytes(seconds: 10) { text in
                let s = String(decoding: text, as: UTF8.self)
                return s.contains("\r\n\r\n") && (!s.hasPrefix("HTTP/1.1 200") || s.contains("event: change"))
            }
            return (peer, String(decoding: bytes, as: UTF8.self))
        }
        let (first, one) = try open()
        let (second, two) = try open()
        #expect(one.hasPrefix("HTTP/1.1 200 OK\r\n") && one.contains("Transfer-Encoding: chunked") && one.contains("data: {"), "\(one)")
        #expect(two.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(two)")
        let (_, three) = try open()
        #expect(three.hasPrefix("HTTP/1.1 503 ") && three.contains("2 event streams are open"), "\(three)")
        // Ordinary requests are not streams: they still work.
        let plain = try RawPeer(port: node.port, tls: false)
        #expect(Self.request(plain, "GET /api/status HTTP/1.1\r\nHost: n\r\nAuthorization: Bearer \(key)\r\n\r\n").hasPrefix("HTTP/1.1 200 "))
        _ = consume first
        var reopened = false
        for _ in 0..<50 where !reopened {
            reopened = try open().1.hasPrefix("HTTP/1.1 200 ")
            if !reopened { usleep(50_000) }
        }
        #expect(reopened, "the slot of a stream whose client left was never freed")
        _ = second
    }

    @Test(.timeLimit(.minutes(3)))
    func aClientThatStopsReadingAStreamedBodyIsDropped() throws {
        var limits = HTTPServer.Limits()
        limits.writeStall = 300
        var key = ""
        // About 9.5 MB of export: more than the loopback socket buffers hold, so the server's
        // queue stops draining and only the pulled pieces wait in it.
        let node = try Served(limits: limits) { replica in
            key = try replica.createAPIKey(name: "test")
            let text = String(repeating: "x", count: 1_500)
            let defaults = replica.addDefaults()
            let items = (0..<6_000).map { i in
                Result { () throws(ValidationError) in
                    try LogEntry.validated(from: ReplicaFixtures.entryJSON(text: "\(i) \(text)"), defaults: defaults)
                }
            }
            _ = try replica.addBatch(items, atomic: true)
        }
        // A client with a small receive window that sends its request and reads nothing.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = node.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(connected == 0)
        let request = Array("GET /api/export HTTP/1.1\r\nHost: n\r\nAuthorization: Bearer \(key)\r\n\r\n".utf8)
        #expect(request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count)
        // The server gives up on it after the stall.
        var dropped = false
        for _ in 0..<200 where !dropped {
            usleep(50_000)
            dropped = node.log.contains { $0.contains("HTTP: dropped") && $0.contains("read none of its response") }
        }
        #expect(dropped, "a client that reads nothing kept its streamed response open: \(node.log)")
        // And then the stream is over: reading what was buffered ends in a close or a reset.
        var buffer = [UInt8](repeating: 0, count: 65536)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var total = 0
        for _ in 0..<100_000 {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            total += count
        }
        #expect(total < 9_000_000, "the whole export arrived: \(total) bytes")
    }
}
