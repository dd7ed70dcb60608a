import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// Every way a peer can misbehave: an ERROR frame where the spec says so, the connection closed,
/// nothing applied, and the node keeps serving its other peers.
@Suite(.serialized) struct BadPeerTests {
    /// A phone serving on loopback, and a valid HELLO from a fresh mac identity.
    final class Fixture {
        let cluster = LoopbackCluster()
        let phone: Replica
        let random = SeededRandom(seed: 99)

        init() throws {
            try cluster.create("phone", role: .phone)
            phone = try cluster.open("phone")
            try cluster.start("phone")
        }

        var port: UInt16 { cluster.port("phone") }

        /// A raw peer whose key the phone trusts as the node `hello` names (paired, but buggy).
        func peer(for hello: Hello) throws -> RawPeer { try RawPeer.trusted(as: hello.nodeID, by: phone, port: port) }

        func hello(nodeID: String? = nil, incarnation: String? = nil) -> Hello {
            Hello(nodeID: nodeID ?? Identifier.make(role: .mac, random: random), role: .mac,
                  incarnation: incarnation ?? Identifier.uuidV4(random: random), capabilities: [.seals, .receivesEntries],
                  clock: HLCTimestamp(milliseconds: 1_795_305_600_000, counter: 0), vector: VersionVector())
        }

        /// After the bad peer, a well-behaved mac must still sync with the phone.
        func expectStillServing() throws {
            try cluster.create("mac", role: .mac)
            let mac = try cluster.open("mac")
            try mac.add(json: try JSONValue.parse(#"{"category": "note", "data": {"text": "good peer"}}"#))
            try cluster.start("mac", listen: nil, peers: [cluster.address("phone")])
            #expect(waitUntil(timeout: 15) { (try? self.phone.liveEntryCount()) == 1 })
        }
    }

    static func errorCode(_ messages: [Message]) -> UInt16? {
        for message in messages { if case .error(let code, _) = message { return code } }
        return nil
    }

    @Test func aLengthOverTheMaximumIsRefusedBeforeReading() throws {
        let f = try Fixture()
        let peer = try f.peer(for: f.hello())
        peer.send([0x7F, 0xFF, 0xFF, 0xFF, 0x01])
        let (messages, closed) = peer.readUntilClosed()
        #expect(closed)
        #expect(Self.errorCode(messages) == ErrorCode.frameTooLarge.rawValue)
        try f.expectStillServing()
    }

    /// A key nobody trusts is read for a small HELLO only, judged by the frame's header before
    /// any payload is taken: a larger first frame, or another type, is refused `not_trusted` at
    /// once (it went through the whole decoder, BATCH validation included, and a megabyte of it
    /// was buffered per stranger).
    @Test(arguments: [
        [0x00, 0x01, 0x90, 0x00, MessageType.hello.rawValue],   // a 100 KiB HELLO: the header alone
        [0x00, 0x00, 0x10, 0x00, MessageType.batch.rawValue],   // a BATCH as a first frame
    ] as [[UInt8]])
    func aStrangersFirstFrameIsJudgedByItsHeader(header: [UInt8]) throws {
        let f = try Fixture()
        let peer = try RawPeer(port: f.port)
        peer.send(header)
        let (messages, closed) = peer.readUntilClosed()
        #expect(closed)
        #expect(Self.errorCode(messages) == ErrorCode.notTrusted.rawValue)
        try f.expectStillServing()
    }

    @Test func bytesBeforeTheHandshakeAreRefused() throws {
        let f = try Fixture()
        let peer = try f.peer(for: f.hello())
        peer.send(Message.ping(nonce: 1).encoded())
        let (messages, closed) = peer.readUntilClosed()
        #expect(closed)
        #expect(Self.errorCode(messages) == ErrorCode.unexpectedMessage.rawValue)
        try f.expectStillServing()
    }

    @Test func aWrongMagicIsRefused() throws {
        let f = try Fixture()
        let peer = try RawPeer(port: f.port)
        var payload = Message.hello(f.hello()).payload()
        payload[0] = UInt8(ascii: "X")
        peer.send(Framing.frame(.hello, payload))
        let (messages, closed) = peer.readUntilClosed()
        #expect(closed)
        #expect(Self.errorCode(messages) == ErrorCode.badHandshake.rawValue)
    }

    @Test func anUnsupportedVersionIsRefused() throws {
        let f = try Fixture()
        let peer = try RawPeer(port: f.port)
        var hello = f.hello()
        hello.minimumVersion = 7
        hello.maximumVersion = 9
        peer.send(Message.hello(hello).encoded())
        let (messages, closed) = peer.readUntilClosed()
        #expect(closed)
        #expect(Self.errorCode(messages) == ErrorCode.versionUnsupported.rawValue)
    }

    @Test func anUnknownMessageTypeIsRefused() throws {
        let f = try Fixture()
        let hello = f.hello()
        let peer = try f.peer(for: hello)
        peer.send(Message.hello(hello).encoded())
        peer.send(Framing.frame(.ping, []).prefix(4) + [0x7E])
        let (messages, closed) = peer.readUntilClosed()
        #expect(closed)
        #expect(Self.errorCode(messages) == ErrorCode.unknownType.rawValue)
    }

    @Test func aTruncatedFrameThenCloseAppliesNothing() throws {
        let f = try Fixture()
        let hello = f.hello()
        let peer = try f.peer(for: hello)
        peer.send(Message.hello(hello).encoded())
        let entry = try LogEntry.validatedComplete(from: try JSONValue.parse(#"{"id": "mac_6f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b", "timestamp": "2026-11-22T08:00:00.000Z", "recorded_at": "2026-11-22T08:00:00.000Z", "source": "mac", "device_id": "x", "data": {}}"#))
        let change = Change(id: entry.id, stamp: VersionStamp(hlc: HLCTimestamp(milliseconds: 1_795_305_600_000, counter: 0), origin: hello.incarnation,
                                                              sequence: 1, vector: VersionVector([(hello.incarnation, 1)]), deleted: false), entry: entry)
        let batch = Message.batch(Batch(id: 1, origins: [], changes: [change], through: VersionVector([(hello.incarnation, 1)]))).encoded()
        peer.send(Array(batch.prefix(batch.count - 5)))
        _ = peer.read(seconds: 0.3)
        close(peer.fd)
        usleep(300_000)
        #expect(try f.phone.liveEntryCount() == 0)
        #expect(try f.phone.replicaVector()[hello.incarnation] == 0)
        try f.expectStillServing()
    }

    @Test func aBatchThatFailsValidationAppliesNothing() throws {
        let f = try Fixture()
        let hello = f.hello()
        let peer = try f.peer(for: hello)
        peer.send(Message.hello(hello).encoded())
        // A well-formed batch whose second entry breaks a rule (latitude 91): nothing may be applied.
        let good = #"{"id": "mac_6f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b", "timestamp": "2026-11-22T08:00:00.000Z", "recorded_at": "2026-11-22T08:00:00.000Z", "source": "mac", "device_id": "x", "data": {}}"#
        let bad = #"{"id": "mac_7f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b", "timestamp": "2026-11-22T08:00:00.000Z", "recorded_at": "2026-11-22T08:00:00.000Z", "source": "mac", "device_id": "x", "data": {"location": {"latitude": 91, "longitude": 0}}}"#
        var w = [UInt8]()
        func u16(_ v: Int) { w += [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: Int) { w += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        func u64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { w.append(UInt8((v >> UInt64(s)) & 0xFF)) } }
        func str(_ s: String) { u16(s.utf8.count); w += Array(s.utf8) }
        u64(1); u16(1); str(hello.incarnation); str(""); w.append(0)
        u32(2)
        for (n, json) in [good, bad].enumerated() {
            w += [1, 0]
            str(n == 0 ? "mac_6f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b" : "mac_7f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b")
            u16(0); u64(UInt64(n + 1)); u64(UInt64(1_795_305_600_000) << 16)
            u16(1); u16(0); u64(UInt64(n + 1))
            u32(json.utf8.count); w += Array(json.utf8)
        }
        u16(1); u16(0); u64(2)
        peer.send(Framing.frame(.batch, w))
        let (messages, closed) = peer.readUntilClosed()
        #expect(closed)
        #expect(Self.errorCode(messages) == ErrorCode.invalidChange.rawValue)
        #expect(try f.phone.liveEntryCount() == 0)
        #expect(try f.phone.replicaVector()[hello.incarnation] == 0)
        try f.expectStillServing()
    }

    /// Our own node ID can be trusted for no key, so such a HELLO is refused as untrusted; and a
    /// trusted peer claiming our node ID is refused as another node's key.
    @Test func aPeerClaimingTheNodesOwnIdentityIsRefused() throws {
        let f = try Fixture()
        var hello = f.hello()
        let trusted = try f.peer(for: hello)
        hello.nodeID = f.phone.identity.nodeID
        hello.role = .phone
        for peer in [try RawPeer(port: f.port), trusted] {
            peer.send(Message.hello(hello).encoded())
            let (messages, closed) = peer.readUntilClosed()
            #expect(closed)
            #expect(Self.errorCode(messages) == ErrorCode.notTrusted.rawValue)
        }
        #expect(try f.phone.peers().isEmpty)
        try f.expectStillServing()
    }
}
