@testable import LifeSync
import Testing
import TestSupport

/// A connection's copy of the `replica_vector` rows (VectorRows.swift) is never read past a
/// change to them: another connection's commit, a row this connection changed, a rollback, a
/// copy into the file.
@Suite struct VectorRowsTests {
    struct Abort: Error {}

    @Test func anotherConnectionsCommitIsRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/vector.sqlite"
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 41, path: path)
        _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "one"))
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 1)
        // Another process's `lifesync add`, say.
        let other = try Replica(path: path, clock: ManualClock(milliseconds: ReplicaFixtures.epoch + 1_000), random: SeededRandom(seed: 42))
        _ = try other.add(json: ReplicaFixtures.entryJSON(text: "two"))
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 2)
        try other.recordOrigin("from elsewhere", nodeID: "node-elsewhere", role: .mac)
        #expect(try replica.knownOrigins().contains { $0.origin == "from elsewhere" && $0.nodeID == "node-elsewhere" })
    }

    @Test func thisConnectionsOwnChangesAreRead() throws {
        let directory = TemporaryDirectory()
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 43, path: directory.path + "/vector.sqlite")
        #expect(try replica.ownOrigins() == [replica.identity.incarnation])
        let before = replica.identity.incarnation
        let after = try replica.rotateIncarnation()
        #expect(try replica.ownOrigins() == [before, after])
        _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "under the new one"))
        #expect(try replica.replicaVector()[after] == 1)
    }

    @Test func rowsARollbackTookBackAreNotRead() throws {
        let directory = TemporaryDirectory()
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 44, path: directory.path + "/vector.sqlite")
        #expect(throws: Abort.self) {
            try replica.database.transaction {
                try replica.recordOrigin("taken back", nodeID: "node-gone", role: .mac)
                // Read inside the transaction: the copy now holds the row the rollback takes back.
                #expect(try replica.knownOrigins().contains { $0.origin == "taken back" })
                throw Abort()
            }
        }
        #expect(try !replica.knownOrigins().contains { $0.origin == "taken back" })
    }

    @Test func aCopyIntoTheFileIsRead() throws {
        let directory = TemporaryDirectory()
        let target = try ReplicaFixtures.replica(role: .phone, seed: 45, path: directory.path + "/target.sqlite")
        let source = try ReplicaFixtures.replica(role: .mac, seed: 46, path: directory.path + "/source.sqlite")
        _ = try source.add(json: ReplicaFixtures.entryJSON(text: "there"))
        #expect(try target.replicaVector() == VersionVector())
        try source.database.copy(into: target.database)
        #expect(try target.replicaVector() == source.replicaVector())
        #expect(try target.knownOrigins().map(\.origin) == source.knownOrigins().map(\.origin))
    }
}
