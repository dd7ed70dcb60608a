import CSSL
import Glibc
import LifeSync
@testable import LifeSyncRuntime
import Testing

/// TLS between two nodes over socket pairs: each learns the key the other proved it holds,
/// bytes cross intact both ways, a relay in the middle sees no plaintext and cannot alter a byte
/// unnoticed, and expired certificates, certificate-less clients, older TLS versions and
/// non-TLS bytes are refused.
@Suite struct TLSStreamTests {
    /// A connected pair of non-blocking stream sockets.
    static func socketPair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    static let phoneKey = Result { try NodeKey.generate(nodeID: "phone_0f8fad5b-d9cb-469f-a165-70867728950e") }
    static let macKey = Result { try NodeKey.generate(nodeID: "mac_7c9e6679-7425-40de-944b-e07fc1f90ae7") }

    /// Steps both handshakes until neither is in progress (bounded).
    static func handshake(_ a: TLSStream, _ b: TLSStream, relay: Relay? = nil) -> (TLSStream.HandshakeStep, TLSStream.HandshakeStep) {
        var steps = (a.handshake(), b.handshake())
        for _ in 0..<2_000 where steps.0 == .inProgress || steps.1 == .inProgress {
            relay?.pump()
            if steps.0 == .inProgress { steps.0 = a.handshake() }
            if steps.1 == .inProgress { steps.1 = b.handshake() }
            if case .failed = steps.0 { break }
            if case .failed = steps.1 { break }
            usleep(200)
        }
        return steps
    }

    /// Sends `bytes` from one stream and reads them at the other (bounded), through `relay` if any.
    static func transfer(_ bytes: [UInt8], from: TLSStream, to: TLSStream, relay: Relay? = nil) -> (received: [UInt8], ended: Bool) {
        var sent = 0, received: [UInt8] = [], ended = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for _ in 0..<20_000 where received.count < bytes.count && !ended {
            if sent < bytes.count, case .wrote(let n) = bytes.withUnsafeBytes({ from.write(UnsafeRawBufferPointer(rebasing: $0[sent...])) }) {
                sent += n
            }
            relay?.pump()
            switch buffer.withUnsafeMutableBytes({ to.read(into: $0) }) {
            case .bytes(let n): received += buffer[0..<n]
            case .ended: ended = true
            case .wouldBlock: usleep(50)
            }
        }
        return (received, ended)
    }

    @Test func bothSidesLearnTheOthersKeyAndBytesCrossIntact() throws {
        let phone = try TLSContext(key: Self.phoneKey.get()), mac = try TLSContext(key: Self.macKey.get())
        let (a, b) = Self.socketPair()
        let client = try mac.stream(fd: a, dialing: true), server = try phone.stream(fd: b, dialing: false)
        let (c, s) = Self.handshake(client, server)
        #expect(c == .done(try Self.phoneKey.get().fingerprint))
        #expect(s == .done(try Self.macKey.get().fingerprint))
        let big = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        #expect(Self.transfer(big, from: client, to: server).received == big)
        #expect(Self.transfer(Array("pong".utf8), from: server, to: client).received == Array("pong".utf8))
        client.close()
        let end = Self.transfer([], from: server, to: server)
        _ = end
        var buffer = [UInt8](repeating: 0, count: 16)
        var ended = false
        for _ in 0..<1_000 where !ended {
            if case .ended = buffer.withUnsafeMutableBytes({ server.read(into: $0) }) { ended = true } else { usleep(100) }
        }
        #expect(ended, "the close did not reach the server")
    }

    @Test func aRelayInTheMiddleSeesNoPlaintextAndCannotFlipAByteUnnoticed() throws {
        let phone = try TLSContext(key: Self.phoneKey.get()), mac = try TLSContext(key: Self.macKey.get())
        let relay = Relay()
        let client = try mac.stream(fd: relay.clientEnd, dialing: true), server = try phone.stream(fd: relay.serverEnd, dialing: false)
        let (c, s) = Self.handshake(client, server, relay: relay)
        guard case .done = c, case .done = s else { Issue.record("handshake: \(c) \(s)"); return }
        let secret = Array(#"{"category":"health","data":{"text":"blood pressure 150/95"}}"#.utf8)
        #expect(Self.transfer(secret, from: client, to: server, relay: relay).received == secret)
        #expect(!relay.seen.contains(secret: Array("150/95".utf8)), "plaintext on the wire")
        #expect(relay.seen.count > secret.count)
        // Now the relay flips one bit of the next record: the reader sees the connection end, never altered bytes.
        relay.flipNext = true
        let altered = Self.transfer(Array("120/80 is what the proxy would like".utf8), from: client, to: server, relay: relay)
        #expect(altered.received.isEmpty && altered.ended, "received \(altered.received.count) bytes of an altered record")
        #expect(server.failure != nil)
    }

    @Test func anExpiredCertificateIsRefused() throws {
        let expired = try NodeKey.generate(nodeID: "mac_7c9e6679-7425-40de-944b-e07fc1f90ae7", notBefore: -86_400 * 10, validity: 86_400)
        let phone = try TLSContext(key: Self.phoneKey.get()), mac = try TLSContext(key: expired)
        let (a, b) = Self.socketPair()
        let (c, s) = Self.handshake(try mac.stream(fd: a, dialing: true), try phone.stream(fd: b, dialing: false))
        guard case .failed(let reason) = s else { Issue.record("the server accepted an expired certificate: \(s), client \(c)"); return }
        #expect(reason.contains("expired"), "\(reason)")
    }

    @Test func aClientWithoutACertificateOrWithOldTLSIsRefused() throws {
        let phone = try TLSContext(key: Self.phoneKey.get())
        for variant in ["no certificate", "TLS 1.2"] {
            let context = try #require(SSL_CTX_new(TLS_method()))
            defer { SSL_CTX_free(context) }
            if variant == "TLS 1.2" {
                #expect(SSL_CTX_use_certificate(context, try Self.macKey.get().certificate) == 1)
                #expect(SSL_CTX_use_PrivateKey(context, try Self.macKey.get().key) == 1)
                #expect(SSL_CTX_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(TLS1_2_VERSION), nil) == 1)
            }
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            let (a, b) = Self.socketPair()
            let ssl = try #require(SSL_new(context))
            let bio = try #require(lifesync_socket_bio(a))
            SSL_set_bio(ssl, bio, bio)
            SSL_set_connect_state(ssl)
            let client = TLSStream(ssl: ssl, fd: a)
            let (_, s) = Self.handshake(client, try phone.stream(fd: b, dialing: false))
            guard case .failed = s else { Issue.record("\(variant): the server accepted it (\(s))"); continue }
        }
    }

    @Test func bytesThatAreNotTLSFailTheHandshake() throws {
        let phone = try TLSContext(key: Self.phoneKey.get())
        let (a, b) = Self.socketPair()
        defer { close(a) }
        let server = try phone.stream(fd: b, dialing: false)
        let hello = Message.ping(nonce: 1).encoded() + Array(repeating: 0x41, count: 600)
        _ = hello.withUnsafeBytes { send(a, $0.baseAddress, $0.count, 0) }
        var step = server.handshake()
        for _ in 0..<100 where step == .inProgress { usleep(500); step = server.handshake() }
        guard case .failed = step else { Issue.record("plain bytes passed as TLS: \(step)"); return }
    }
}

/// Two socket pairs joined by the test: what the client sends goes to the server and back,
/// recorded, and optionally one bit of the next client record flipped.
final class Relay {
    let clientEnd: Int32, serverEnd: Int32
    private let clientSide: Int32, serverSide: Int32
    private(set) var seen: [UInt8] = []
    var flipNext = false

    init() {
        (clientEnd, clientSide) = TLSStreamTests.socketPair()
        (serverEnd, serverSide) = TLSStreamTests.socketPair()
    }

    deinit {
        close(clientSide)
        close(serverSide)
    }

    /// Moves what is waiting each way (non-blocking; a full socket drops nothing, it waits).
    func pump() {
        move(from: clientSide, to: serverSide, flip: true)
        move(from: serverSide, to: clientSide, flip: false)
    }

    private func move(from: Int32, to: Int32, flip: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let got = recv(from, &buffer, buffer.count, Int32(MSG_PEEK))
        guard got > 0 else { return }
        var chunk = Array(buffer[0..<got])
        if flip && flipNext && chunk.count > 10 {
            chunk[chunk.count - 1] ^= 0x01
            flipNext = false
        }
        let sent = chunk.withUnsafeBytes { send(to, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else { return }
        _ = recv(from, &buffer, sent, 0)
        seen += buffer[0..<sent]
    }
}

extension Array where Element == UInt8 {
    func contains(secret: [UInt8]) -> Bool {
        guard secret.count <= count else { return false }
        return (0...(count - secret.count)).contains { self[$0..<($0 + secret.count)].elementsEqual(secret) }
    }
}
