import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// The precedence rules of PROTOCOL.md §7.1 and §7.8, one test each: which row of the state
/// table wins when two apply, and what a side sends before its ERROR.
@Suite struct SessionPrecedenceTests {
    /// An ERROR frame longer than its bound (1 025-byte message): it does not decode, and it is
    /// still an ERROR, so it is not answered — before the handshake or after it.
    static let undecodableError: [UInt8] = {
        var payload: [UInt8] = [0x00, 0x0b, 0x04, 0x01]  // shutting_down, message of 1 025 bytes
        payload += [UInt8](repeating: 0x61, count: 1025)
        return Framing.frame(.error, payload)
    }()

    @Test(arguments: [false, true])
    func anErrorThatDoesNotDecodeIsNotAnswered(afterHandshake: Bool) throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 41)
        let peer = FakePeer(facing: SyncSession(replica: replica, configuration: .init(), now: 0))
        if afterHandshake { peer.hello() }
        #expect(peer.victim.state == (afterHandshake ? .open : .awaitingHello))
        let before = peer.replies.count
        peer.send(bytes: Self.undecodableError)
        #expect(peer.replies.count == before, "answered with \(peer.replies.suffix(from: before))")
        #expect(peer.closed)
        #expect(peer.victim.state == .closed)
    }

    /// A side that refuses the peer's HELLO before sending its own sends the ERROR alone: no
    /// HELLO (which carries its vector) goes to a peer it is about to refuse.
    @Test func aRefusedHelloIsAnsweredByTheErrorAloneNotByAHelloFirst() throws {
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 42)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 43)
        let acceptor = SyncSession(replica: mac, configuration: .init(), now: 0)
        let old = Hello(minimumVersion: 1, maximumVersion: 1, nodeID: phone.identity.nodeID, role: .phone,
                        incarnation: phone.identity.incarnation, capabilities: .receivesEntries, clock: .zero, vector: VersionVector())
        let replies = try SyncSessionTests.messages(SyncSessionTests.sent(acceptor.receive(Message.hello(old).encoded(), now: 1)))
        #expect(replies.count == 1)
        guard case .error(let code, _)? = replies.first else {
            Issue.record("expected one ERROR, got \(replies)")
            return
        }
        #expect(code == ErrorCode.versionUnsupported.rawValue)
        #expect(acceptor.state == .closed)
    }

    /// The same for a first frame that is not a HELLO: the acceptor's only frame is the ERROR.
    @Test func aFirstFrameThatIsNotAHelloIsAnsweredByTheErrorAlone() throws {
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 44)
        let acceptor = SyncSession(replica: mac, configuration: .init(), now: 0)
        let replies = try SyncSessionTests.messages(SyncSessionTests.sent(acceptor.receive(Message.ping(nonce: 7).encoded(), now: 1)))
        #expect(replies.map(\.type) == [.error])
        if case .error(let code, _)? = replies.first { #expect(code == ErrorCode.unexpectedMessage.rawValue) }
    }

    /// CAUGHT_UP is sent again after every later burst of batches once its last ACK is in, and it
    /// counts as sending: the keepalive PING is due 15 s after it, not after the batch before.
    @Test func caughtUpFollowsEveryLaterBurstAndResetsTheKeepalive() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 45)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 46)
        let link = SessionPair(phone, mac)
        link.start()
        #expect(link.run())
        let caughtUpBefore = link.sent.filter { $0.from == .a && $0.message.type == .caughtUp }.count
        #expect(caughtUpBefore == 1)
        link.now = 5_000
        try phone.add(json: ReplicaFixtures.entryJSON(text: "later"))
        #expect(link.replicaChanged())
        let after = link.sent.filter { $0.from == .a }.map(\.message.type).suffix(2)
        #expect(Array(after) == [.batch, .caughtUp], "the phone's last frames: \(after)")
        #expect(link.a.nextDeadline == 5_000 + SessionConfiguration().keepaliveInterval)
    }

    /// PROTOCOL.md §5.9.8, last row: ACCEPT, CHUNK, CONFIRM and FAILURE naming no transfer of the
    /// receiver are ignored — at a node that stores recordings and at one that does not.
    @Test(arguments: [false, true])
    func recordingMessagesNamingNoTransferAreIgnored(withStorage: Bool) throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 47)
        let session = SyncSession(replica: replica, configuration: .init(), now: 0, storage: withStorage ? MemoryRecordingStorage() : nil)
        let peer = FakePeer(facing: session)
        peer.hello()
        #expect(session.state == .open)
        let before = peer.replies.count
        let id = Identifier.make(role: .watch, random: SeededRandom(seed: 48))
        let digest = SHA256.hash([1, 2, 3])
        peer.send(.accept(recordingID: id, offset: 4))
        peer.send(.chunk(Chunk(recordingID: id, offset: 0, sha256: digest, data: [1, 2, 3])))
        peer.send(.confirm(recordingID: id, sha256: digest))
        peer.send(.failure(recordingID: id, code: TransferFailure.storageFailure.rawValue, message: "gone"))
        #expect(peer.replies.count == before, "answered with \(peer.replies.suffix(from: before))")
        #expect(session.state == .open && !peer.closed)
    }
}
