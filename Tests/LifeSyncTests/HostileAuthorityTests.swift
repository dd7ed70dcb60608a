import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// A peer's word never moves our data (DESIGN.md, "Trust"): what we hold, what was deleted,
/// what we confirmed. Authority comes from the data's origin and from what was delivered.
@Suite struct HostileAuthorityTests {
    // MARK: Vectors

    /// A `through` beyond what was delivered does not advance the vector: a relay told it holds
    /// a watch's writes up to 10,000 would otherwise never ask anyone for them.
    @Test func aForgedThroughDoesNotAdvanceTheVector() throws {
        let (replica, peer) = try HostileWireTests.victim()
        let absent = Identifier.uuidV4(random: SeededRandom(seed: 41))
        peer.send(.batch(Batch(id: 1, origins: [], changes: [try peer.change(sequence: 1)],
                               through: VersionVector([(peer.incarnation, 1), (absent, 10_000)]))))
        #expect(peer.acks == [1])
        #expect(try replica.replicaVector()[peer.incarnation] == 1)
        #expect(try replica.replicaVector()[absent] == 0, "a bare claim advanced the vector")

        // Nor does a write's version vector claiming it saw `absent` up to 7: that is its
        // writer's word about a third party.
        var seen = try peer.change(sequence: 2, seed: 2)
        seen.stamp.vector[absent] = 7
        peer.send(.batch(Batch(id: 2, origins: [], changes: [seen], through: VersionVector([(peer.incarnation, 2), (absent, 10_000)]))))
        #expect(peer.acks == [1, 2])
        #expect(try replica.replicaVector()[absent] == 0)

        // A write of `absent` itself, relayed, proves its own sequence.
        let relayed = try peer.change(sequence: 7, origin: absent, seed: 3)
        peer.send(.batch(Batch(id: 3, origins: [], changes: [relayed], through: VersionVector([(absent, 10_000)]))))
        #expect(peer.acks == [1, 2, 3])
        #expect(try replica.replicaVector()[absent] == 7)
    }

    /// A peer claiming more of our writes than we made gets them all again: a watch's offline
    /// writes are never held back on a forged vector ("synced, 0 pending" while nothing moved).
    @Test func aClaimAboveOurOwnWritesGetsThemAll() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 42)
        for i in 0..<3 { try watch.add(json: ReplicaFixtures.entryJSON(text: "offline \(i)")) }
        let incarnation = watch.identity.incarnation
        let peer = FakePeer(facing: SyncSession(replica: watch, configuration: .init(), now: 0))
        peer.hello(vector: VersionVector([(incarnation, 5_000)]))
        #expect(peer.victim.state == .open)
        let sent = peer.batches.flatMap(\.changes)
        #expect(sent.filter { $0.stamp.origin == incarnation }.map(\.stamp.sequence).sorted() == [1, 2, 3])
        #expect(peer.victim.pendingChangeCount() == 3, "the writes count as pending until acknowledged")
    }

    /// A claim on our history moves us to a new incarnation, even before our first write (a
    /// replica put back to before it: a lost write the peer superseded never comes back, and our
    /// next number would be its, restore seed 4579), but a peer's claims move us once: until the
    /// writes it named arrive, the same peer's words rotate nothing more.
    @Test func aPeerCannotRotateUsAtWill() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 43)
        let first = phone.identity.incarnation
        var peer = FakePeer(facing: SyncSession(replica: phone, configuration: .init(), now: 0), seed: 901)
        peer.hello(vector: VersionVector([(first, 50)]))
        let second = phone.identity.incarnation
        #expect(second != first, "a rollback to before our first write rotates too")

        try phone.add(json: ReplicaFixtures.entryJSON(text: "one"))
        peer = FakePeer(facing: SyncSession(replica: phone, configuration: .init(), now: 0), seed: 901)
        peer.hello(vector: VersionVector([(first, 50), (second, 50)]))
        #expect(phone.identity.incarnation == second, "the same peer's unbacked claim again: not believed")
        #expect(try phone.ownOrigins().count == 2)
    }

    /// A buggy peer that claims one more of our current incarnation than we wrote, at every
    /// connection after every local write, costs one incarnation, not one per write: its claim
    /// rotated us once and it never delivered what it claimed, so it is not believed again.
    @Test func aPeerWhoseClaimWasNeverBackedIsNotBelievedAgain() throws {
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 44)
        for round in 0..<10 {
            try phone.add(json: ReplicaFixtures.entryJSON(text: "write \(round)"))
            let current = phone.identity.incarnation
            let peer = FakePeer(facing: SyncSession(replica: phone, configuration: .init(), now: 0), seed: 904)
            peer.hello(vector: VersionVector([(current, try phone.replicaVector()[current] + 1)]))
            #expect(peer.victim.state == .open, "round \(round)")
        }
        let origins = try phone.ownOrigins().count
        #expect(origins == 2, "ten claims made \(origins - 1) new incarnations")
        // Another peer's claim is its own first: it is believed.
        try phone.add(json: ReplicaFixtures.entryJSON(text: "after"))
        let before = phone.identity.incarnation
        let other = FakePeer(facing: SyncSession(replica: phone, configuration: .init(), now: 0), seed: 905)
        other.hello(vector: VersionVector([(before, try phone.replicaVector()[before] + 1)]))
        #expect(phone.identity.incarnation != before)
    }

    /// `through` at the maximum for our own incarnation never reaches our counter; a forged write
    /// under it at the maximum is refused as forged (its seal is the peer's, not ours), nothing of
    /// it is stored, and the next local write takes our next number.
    @Test func forgedClaimsOnOurOwnIncarnationLeaveLocalWritesWorking() throws {
        let (replica, peer) = try HostileWireTests.victim()
        let mine = replica.identity.incarnation
        peer.send(.batch(Batch(id: 1, origins: [], changes: [], through: VersionVector([(mine, Message.Limits.maximumSequence)]))))
        #expect(peer.acks == [1])
        #expect(try replica.replicaVector()[mine] == 0)
        let entry = try replica.add(json: ReplicaFixtures.entryJSON(text: "mine"))
        #expect(try replica.versionStamp(id: entry.id)?.sequence == 1)

        let top = Message.Limits.maximumSequence
        let forged = try peer.change(sequence: top, origin: mine)
        peer.send(.batch(Batch(id: 2, origins: [], changes: [forged], through: VersionVector([(mine, top)]))))
        #expect(peer.acks == [1])
        #expect(peer.errors == [.forgedChange] && peer.closed, "\(peer.replies)")
        #expect(try replica.versionStamp(id: forged.id) == nil)
        // Nothing of it is stored but the note `lifesync status` lists.
        let refused = try replica.refusedBatches()
        #expect(refused.count == 1 && refused.first?.nodeID == peer.nodeID && refused.first?.reason.contains(mine) == true, "\(refused)")
        #expect(try replica.replicaVector()[mine] == 1)
        let later = try replica.add(json: ReplicaFixtures.entryJSON(text: "after the forgery"))
        let stamp = try #require(try replica.versionStamp(id: later.id))
        #expect(stamp.origin == mine && stamp.sequence == 2)
    }

    /// A change forged under another origin's next sequence number is set aside as a conflict;
    /// that origin keeps flowing (it failed with a storage error on every session before).
    @Test func aClashOnOriginAndSequenceIsSetAsideNotAWedge() throws {
        let (replica, peer) = try HostileWireTests.victim()
        let first = try peer.change(sequence: 1, text: "first", seed: 1)
        let forged = try peer.change(sequence: 1, text: "forged", seed: 2)
        #expect(first.id != forged.id)
        peer.send(.batch(Batch(id: 1, origins: [], changes: [first], through: VersionVector([(peer.incarnation, 1)]))))
        peer.send(.batch(Batch(id: 2, origins: [], changes: [forged], through: VersionVector([(peer.incarnation, 1)]))))
        peer.send(.batch(Batch(id: 3, origins: [], changes: [try peer.change(sequence: 2, seed: 3)], through: VersionVector([(peer.incarnation, 2)]))))
        #expect(peer.acks == [1, 2, 3])
        #expect(peer.errors.isEmpty)
        #expect(try replica.liveEntryCount() == 2)
        #expect(try replica.conflicts().contains { $0.entryID == forged.id })
        #expect(try replica.replicaVector()[peer.incarnation] == 2)
        let clashes = peer.events.compactMap { event -> Int? in
            if case .applied(_, _, let outcome) = event { return outcome.clashes }
            return nil
        }
        #expect(clashes == [0, 1, 0])
    }

    /// A stranger that only says hello leaves nothing in the replica.
    @Test func aHelloAloneLeavesNothingBehind() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 44)
        let before = try replica.knownOrigins().map(\.origin)
        for seed in 0..<20 {
            let peer = FakePeer(facing: SyncSession(replica: replica, configuration: .init(), now: 0), seed: 1_000 + UInt64(seed))
            peer.hello()
        }
        #expect(try replica.knownOrigins().map(\.origin) == before)

        let peer = FakePeer(facing: SyncSession(replica: replica, configuration: .init(), now: 0), seed: 2_000)
        peer.hello()
        peer.send(.batch(Batch(id: 1, origins: [], changes: [try peer.change(sequence: 1)], through: VersionVector([(peer.incarnation, 1)]))))
        let learned = try replica.knownOrigins().first { $0.origin == peer.incarnation }
        #expect(learned?.nodeID == peer.nodeID, "a peer that delivered is remembered")
    }
}
