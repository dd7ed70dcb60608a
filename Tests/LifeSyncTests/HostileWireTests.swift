import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// Numbers and sizes from a hostile or buggy peer (issue: a core no peer can crash). Each case
/// crashed or wedged a node before; each must now be refused with the spec's answer, nothing
/// stored, and the replica still usable.
@Suite struct HostileWireTests {
    static func victim(_ role: Role = .phone, seed: UInt64 = 31) throws -> (Replica, FakePeer) {
        let replica = try ReplicaFixtures.replica(role: role, seed: seed)
        let peer = FakePeer(facing: SyncSession(replica: replica, configuration: .init(), now: 0))
        peer.hello()
        #expect(peer.victim.state == .open)
        return (replica, peer)
    }

    /// The replica still takes a local write and its vector still reads.
    static func expectUsable(_ replica: Replica, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let entry = try replica.add(json: ReplicaFixtures.entryJSON(text: "still alive"))
        #expect(try replica.versionStamp(id: entry.id) != nil, sourceLocation: sourceLocation)
        _ = try replica.replicaVector()
    }

    // MARK: Numeric ceilings (PROTOCOL.md §3.1)

    @Test(arguments: [Message.Limits.maximumSequence + 1, UInt64(1) << 63, UInt64.max])
    func sequencesAboveTheCeilingAreRefused(sequence: UInt64) throws {
        let (replica, peer) = try Self.victim()
        peer.send(.batch(Batch(id: 1, origins: [], changes: [try peer.change(sequence: sequence)],
                               through: VersionVector([(peer.incarnation, sequence)]))))
        #expect(peer.errors == [.malformed])
        #expect(peer.closed)
        #expect(try replica.liveEntryCount() == 0)
        try Self.expectUsable(replica)

        let (other, throughOnly) = try Self.victim(seed: 32)
        throughOnly.send(.batch(Batch(id: 1, origins: [], changes: [], through: VersionVector([(throughOnly.incarnation, sequence)]))))
        #expect(throughOnly.errors == [.malformed])
        #expect(try other.replicaVector()[throughOnly.incarnation] == 0)

        let hello = FakePeer(facing: SyncSession(replica: try ReplicaFixtures.replica(role: .mac, seed: 33), configuration: .init(), now: 0))
        hello.hello(vector: VersionVector([(hello.incarnation, sequence)]))
        #expect(hello.errors == [.malformed])
    }

    @Test func theLargestSequenceIsTakenAndLocalWritesGoOn() throws {
        let (replica, peer) = try Self.victim()
        let top = Message.Limits.maximumSequence
        peer.send(.batch(Batch(id: 1, origins: [], changes: [try peer.change(sequence: top)], through: VersionVector([(peer.incarnation, top)]))))
        #expect(peer.acks == [1])
        #expect(try replica.replicaVector()[peer.incarnation] == top)
        try Self.expectUsable(replica)
    }

    @Test func anHLCAboveTheCeilingIsRefused() throws {
        let (replica, peer) = try Self.victim()
        let change = try peer.change(sequence: 1, hlc: HLCTimestamp(rawValue: Int64.max))
        peer.send(.batch(Batch(id: 1, origins: [], changes: [change], through: VersionVector([(peer.incarnation, 1)]))))
        #expect(peer.errors == [.malformed])
        #expect(try replica.liveEntryCount() == 0)
    }

    /// An entry stamped at the ceiling by a faulty peer can still be edited and deleted: the
    /// local write is stamped at the ceiling too, where the order falls to (origin, sequence).
    @Test func anEntryAtTheHLCCeilingStaysEditable() throws {
        let (replica, peer) = try Self.victim()
        let change = try peer.change(sequence: 1, hlc: .maximum)
        peer.send(.batch(Batch(id: 1, origins: [], changes: [change], through: VersionVector([(peer.incarnation, 1)]))))
        #expect(peer.acks == [1])
        try replica.update(id: change.id, patch: try JSONValue.parse(#"{"data": {"text": "edited"}}"#))
        #expect(try replica.entry(id: change.id).data.text == "edited")
        #expect(try replica.versionStamp(id: change.id)?.hlc == .maximum)
        try replica.delete(id: change.id)
        #expect(try replica.versionStamp(id: change.id)?.deleted == true)
        try Self.expectUsable(replica)
    }

    // MARK: Sizes

    @Test func vectorsAndOriginTablesAreBounded() throws {
        let random = SeededRandom(seed: 77)
        let origins = (0...Message.Limits.maximumOrigins).map { _ in Identifier.uuidV4(random: random) }.sorted()
        let session = SyncSession(replica: try ReplicaFixtures.replica(role: .phone, seed: 35), configuration: .init(), now: 0)
        let fake = FakePeer(facing: session)
        fake.hello(vector: VersionVector(origins.map { ($0, 1) }))
        #expect(fake.errors == [.malformed], "a HELLO naming \(origins.count) origins")
    }

    /// A batch naming more new origins than the replica keeps is refused whole, so the node can
    /// always encode its own vector in a HELLO again (it crashed on every connection before).
    @Test func aReplicaNeverLearnsMoreOriginsThanItCanSend() throws {
        let (replica, peer) = try Self.victim()
        let random = SeededRandom(seed: 78)
        let known = try replica.knownOrigins().count
        for _ in 0..<(Message.Limits.maximumReplicaOrigins - known - 1) {
            try replica.database.run("INSERT INTO replica_vector(origin, seq) VALUES (?, 1)", [.text(Identifier.uuidV4(random: random))])
        }
        let first = Identifier.uuidV4(random: random), second = Identifier.uuidV4(random: random)
        // Origins whose writes the batch delivers (a bare `through` would not even be admitted).
        let change = try peer.change(sequence: 1)
        let relayed = [try peer.change(sequence: 1, origin: first, seed: 5), try peer.change(sequence: 1, origin: second, seed: 6)]
        peer.send(.batch(Batch(id: 1, origins: [], changes: [change] + relayed,
                               through: VersionVector([(peer.incarnation, 1), (first, 1), (second, 1)]))))
        #expect(peer.errors == [.limitExceeded])
        #expect(try replica.liveEntryCount() == 0)
        #expect(try replica.knownOrigins().count == Message.Limits.maximumReplicaOrigins - 1)

        // Full to the bound, it still says hello, and the HELLO decodes.
        let hello = FakePeer(facing: SyncSession(replica: replica, configuration: .init(), now: 0))
        hello.hello()
        let helloVector = hello.replies.compactMap { if case .hello(let h) = $0 { return h.vector }; return nil }.first
        #expect(helloVector == (try replica.replicaVector()))
        #expect((helloVector?.entries.count ?? 0) >= Message.Limits.maximumReplicaOrigins - 2)
    }

    /// 64 KiB of control characters keeps to the text rule but escapes to 384 KiB: refused on
    /// every way in, so no node stores what its peers would refuse.
    @Test func theEncodedSizeBoundsAnEntryOnEveryWayIn() throws {
        let (replica, peer) = try Self.victim()
        let text = String(repeating: "\u{1}", count: EntryLimits.textBytes)
        #expect(throws: ReplicaError.self) { try replica.add(json: ReplicaFixtures.entryJSON(text: text)) }
        do {
            try replica.add(json: ReplicaFixtures.entryJSON(text: text))
        } catch {
            #expect("\(error)".contains("encodes to"), "\(error)")
        }
        // From a peer: the entry exceeds the wire's bound for a change, refused before parsing.
        var change = try peer.change(sequence: 1, text: "short")
        change.entry?.data.text = text
        peer.send(.batch(Batch(id: 1, origins: [], changes: [change], through: VersionVector([(peer.incarnation, 1)]))))
        #expect(peer.errors.count == 1 && peer.closed)
        #expect(try replica.liveEntryCount() == 0)

        // Just under the bound: taken, stored, and sent on whole.
        let fits = String(repeating: "\u{1}", count: 40_000)
        let entry = try replica.add(json: ReplicaFixtures.entryJSON(text: fits))
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 36)
        let link = SessionPair(replica, mac)
        link.start()
        #expect(link.run())
        #expect(try mac.entry(id: entry.id).data.text == fits)
    }

    @Test func aTagOfOneCharacterAndAMillionCombiningMarksIsRefused() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 37)
        let tag = "a" + String(repeating: "\u{301}", count: 1_000_000)
        #expect(tag.count == 1)
        let json = ReplicaFixtures.entryJSON(text: "x").merging(["data": .object([("tags", .array([.string(tag)]))])])
        do {
            try replica.add(json: json)
            Issue.record("a 2 MB tag was accepted")
        } catch {
            #expect("\(error)".contains("data.tags[0]") && "\(error)".contains("bytes"), "\(error)")
        }
        #expect(try replica.liveEntryCount() == 0)
    }

    /// Before its HELLO, a peer cannot make us buffer a full 8 MiB frame.
    @Test func theFirstFrameIsBoundedBeforeTheHandshake() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 38)
        let session = SyncSession(replica: replica, configuration: .init(), now: 0)
        _ = session.start(now: 0)
        let length = UInt32(Message.Limits.maximumHandshakeFrameLength + 1)
        let header: [UInt8] = [UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
                               UInt8(truncatingIfNeeded: length), MessageType.hello.rawValue]
        let actions = session.receive(header, now: 1)
        let codes = actions.compactMap { action -> UInt16? in
            guard case .send(let bytes) = action, let message = SessionPair.decode(bytes), case .error(let code, _) = message else { return nil }
            return code
        }
        #expect(codes == [ErrorCode.frameTooLarge.rawValue])
        #expect(session.state == .closed)
    }

    @Test func anErrorBeforeTheHelloIsNotAnswered() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 39)
        let peer = FakePeer(facing: SyncSession(replica: replica, configuration: .init(), now: 0))
        let before = peer.replies.count
        peer.send(.error(code: ErrorCode.shuttingDown.rawValue, message: "bye"))
        #expect(peer.replies.count == before, "answered with \(peer.replies.suffix(from: before))")
        #expect(peer.closed)
    }
}
