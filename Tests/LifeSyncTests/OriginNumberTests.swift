@testable import LifeSync
import Testing
import TestSupport

/// The origin numbers a connection keeps (OriginNumbers.swift) never outlive the transaction
/// that made them when it rolls back: another connection may give the number to another origin.
@Suite struct OriginNumberTests {
    struct Abort: Error {}

    @Test func aNumberTakenBackByARollbackIsForgotten() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/numbers.sqlite"
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 88, path: path)
        _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "numbered"))
        let own = try #require(try replica.database.knownOriginNumber(replica.identity.incarnation))
        #expect(throws: Abort.self) {
            try replica.database.transaction {
                #expect(try replica.database.originNumber("taken back") == own + 1)
                throw Abort()
            }
        }
        let other = try Database(path: path, create: false)
        #expect(try other.originNumber("someone else") == own + 1)
        #expect(try replica.database.originName(own + 1) == "someone else")
        #expect(try replica.database.knownOriginNumber("taken back") == nil)
        #expect(try replica.database.originNumber(replica.identity.incarnation) == own)
    }

    @Test func aCopyIntoADatabaseForgetsItsNumbers() throws {
        let directory = TemporaryDirectory()
        let target = try Database(path: directory.path + "/target.sqlite")
        let source = try Database(path: directory.path + "/source.sqlite")
        for db in [target, source] { try db.execute(Schema.originsStep) }
        #expect(try target.originNumber("first here") == 1)
        #expect(try source.originNumber("first there") == 1)
        try source.copy(into: target)
        #expect(try target.originName(1) == "first there")
        #expect(try target.knownOriginNumber("first here") == nil)
    }

    @Test func aStoredVectorReadsBackAndRefusesWhatIsNotOne() throws {
        let names: [Int64: String] = [1: "a", 2: "b", 3: "c"]
        let numbers = Dictionary(uniqueKeysWithValues: names.map { ($1, $0) })
        let vector = VersionVector([("a", 300_000), ("b", 1), ("c", 1 << 52)])
        var bytes: [UInt8] = []
        StoredVector.write(vector, own: ("a", 300_000), to: &bytes) { numbers[$0]! }
        #expect(bytes.count == 1 + 1 + 1 + 1 + 1 + 8)
        func read(_ bytes: [UInt8], own: (String, UInt64) = ("a", 300_000)) -> VersionVector? {
            bytes.withUnsafeBytes { StoredVector.read($0, own: own) { names[$0] } }
        }
        #expect(read(bytes) == vector)
        #expect(read(bytes, own: ("b", 300_000)) == nil, "a 0 that is not the row's own write")
        #expect(read(Array(bytes.dropLast())) == nil, "cut short")
        #expect(read([2, 1, 1, 1]) == nil, "origins out of order")
        #expect(read([9, 1]) == nil, "an unknown origin number")
        #expect(read([1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]) == nil, "past 64 bits")
        #expect(read([]) == VersionVector())
    }
}
