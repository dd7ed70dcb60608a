import LifeSync
import Testing
import TestSupport

/// Incarnations bound to their node (PROTOCOL.md §2.3.1): only the node an origin names may seal
/// its writes, whoever's seal arrives first.
@Suite struct BoundIncarnationTests {
    static let watch = "watch_11111111-1111-4111-8111-111111111111"
    static let mac = "mac_22222222-2222-4222-8222-222222222222"

    @Test func aBoundIncarnationNamesItsNodeAndNoOther() {
        let random = SeededRandom(seed: 3)
        var seen = Set<String>()
        for _ in 0..<200 {
            let incarnation = Identifier.incarnation(boundTo: Self.watch, random: random)
            #expect(Identifier.isUUIDv4(Substring(incarnation)), "a bound incarnation is an ordinary UUID to every replica")
            #expect(Identifier.isBound(incarnation))
            #expect(Identifier.incarnation(incarnation, isBoundTo: Self.watch))
            #expect(!Identifier.incarnation(incarnation, isBoundTo: Self.mac))
            seen.insert(incarnation)
        }
        #expect(seen.count == 200, "successive incarnations of one node differ")
    }

    @Test func aRandomOrAlteredIncarnationIsNotBound() {
        let random = SeededRandom(seed: 4)
        for _ in 0..<200 { #expect(!Identifier.isBound(Identifier.uuidV4(random: random))) }
        let bound = Identifier.incarnation(boundTo: Self.watch, random: random)
        var altered = Array(bound)
        altered[35] = altered[35] == "0" ? "1" : "0"
        #expect(Identifier.isBound(String(altered)), "the mark is intact")
        #expect(!Identifier.incarnation(String(altered), isBoundTo: Self.watch), "but the tag no longer names the node")
        #expect(!Identifier.isBound("not-a-uuid") && !Identifier.incarnation("not-a-uuid", isBoundTo: Self.watch))
    }

    @Test func aReplicaWritesUnderIncarnationsBoundToItsNode() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 5)
        let node = watch.identity.nodeID
        #expect(Identifier.incarnation(watch.identity.incarnation, isBoundTo: node))
        #expect(Identifier.incarnation(try watch.rotateIncarnation(), isBoundTo: node), "a rotation stays bound")
    }

    /// A replica of an earlier version: an unbound incarnation, with or without writes.
    @Test func aReplicaOfAnEarlierVersionMovesToABoundIncarnationAsItStartsServing() throws {
        for writes in [0, 2] {
            let watch = try Replica.create(path: ":memory:", role: .watch, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 6))
            let legacy = "5b0c2d1e-3f4a-4b5c-8d6e-7f8091a2b3c4"
            try watch.database.run("UPDATE meta SET value = ? WHERE key = 'incarnation'", [.text(legacy)])
            try watch.database.run("UPDATE replica_vector SET origin = ? WHERE node_id = ?", [.text(legacy), .text(watch.identity.nodeID)])
            try watch.reloadIdentity()
            for n in 0..<writes { _ = try watch.add(json: ReplicaFixtures.entryJSON(text: "before \(n)")) }
            TestKeys.adopt(watch)
            #expect(Identifier.incarnation(watch.identity.incarnation, isBoundTo: watch.identity.nodeID))
            if writes == 0 {
                #expect(try watch.ownOrigins() == [watch.identity.incarnation], "nothing was numbered under it: replaced in place")
            } else {
                #expect(try watch.ownOrigins() == [legacy, watch.identity.incarnation], "the writes made before keep their numbers")
                #expect(try watch.replicaVector()[legacy] == UInt64(writes))
            }
            _ = try watch.adoptSigningKey(TestKeys.key(for: watch.identity.nodeID))
            #expect(try watch.ownOrigins().count == (writes == 0 ? 1 : 2), "serving again changes nothing")
        }
    }

    /// The hostile seed 1177: a peer that learned a watch's fresh incarnation from its HELLO
    /// sealed writes of it as itself, before the watch's own reached the phone. By first seal it
    /// became the origin's owner there, and the watch's writes were refused as forged for good.
    @Test func aPeerThatSealsAnotherNodesOriginFirstIsRefusedAndTheOwnerIsNot() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 7)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 8)
        _ = try watch.add(json: ReplicaFixtures.entryJSON(text: "run at dawn"))
        let changes = try watch.changes(after: VersionVector())
        let through = try watch.replicaVector()
        let claimed = try Seal.sealing(changes.map(\.encoded), as: Self.mac, signer: TestKeys.key(for: Self.mac))
        #expect(throws: ReplicaError.self) {
            try phone.apply([(changes, through)], seals: [Replica.ReceivedSeals(seals: claimed)])
        }
        #expect(try phone.liveEntryCount() == 0, "nothing of the refused batch is written")
        let own = try Seal.sealing(changes.map(\.encoded), as: watch.identity.nodeID, signer: TestKeys.key(for: watch.identity.nodeID))
        let outcome = try phone.apply([(changes, through)], seals: [Replica.ReceivedSeals(seals: own)])
        #expect(outcome[0].applied == 1, "the owner's seal vouches for its write")
    }

    /// The origin names the node; the trust store names its key. A node that replaced its key
    /// and was paired again delivers the writes it made before.
    @Test func theKeyIsTheTrustStoresAndAReplacedKeyStillDelivers() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 9)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 10)
        _ = try watch.add(json: ReplicaFixtures.entryJSON(text: "swim"))
        let changes = try watch.changes(after: VersionVector()), through = try watch.replicaVector()
        let node = watch.identity.nodeID, replaced = TestKeys.key(for: "the watch's second key")
        try phone.trust(TrustedPeer(nodeID: node, role: .watch, fingerprint: TestKeys.key(for: node).fingerprint, trustedAt: phone.now))
        let withOtherKey = try Seal.sealing(changes.map(\.encoded), as: node, signer: replaced)
        #expect(throws: ReplicaError.self, "a key that is not the pin") {
            try phone.apply([(changes, through)], seals: [Replica.ReceivedSeals(seals: withOtherKey)])
        }
        try phone.trust(TrustedPeer(nodeID: node, role: .watch, fingerprint: replaced.fingerprint, trustedAt: phone.now), replacing: true)
        let outcome = try phone.apply([(changes, through)], seals: [Replica.ReceivedSeals(seals: withOtherKey)])
        #expect(outcome[0].applied == 1, "paired again with its new key")
    }
}
