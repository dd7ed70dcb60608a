import Foundation
@testable import LifeSync
import Testing
import TestSupport

private let t0 = ReplicaFixtures.epoch  // 2026-11-22T00:00:00Z

// MARK: - Import

@Suite struct ReplicaImportTests {
    static func entries(_ count: Int, seed: UInt64 = 40) -> [LogEntry] {
        let random = SeededRandom(seed: seed)
        return (0..<count).map { i in
            LogEntry(id: Identifier.make(role: .mac, random: random), timestamp: Timestamp(millisecondsSince1970: t0 - Int64(i) * 60_000),
                     recordedAt: Timestamp(millisecondsSince1970: t0), source: "mac", deviceId: "mac_import",
                     category: "imported", data: LogData(text: "entry \(i)", tags: ["import"]))
        }
    }

    @Test func importWritesEverything() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(3)
        #expect(try replica.importEntries(batch).written == 3)
        for entry in batch { #expect(try replica.entry(id: entry.id) == entry) }
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 3)
    }

    @Test func aDuplicateIDInTheInputRollsBackEverything() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let existing = try replica.add(json: ReplicaFixtures.entryJSON(text: "before"))
        let batch = Self.entries(3)
        var again = batch[0]
        again.data.text = "a second copy"
        expectReplicaError("duplicate in input", {
            try replica.importEntries([batch[0], batch[1], again, batch[2]])
        }, matches: { invalidField($0) == "entry 3: id" && "\($0)".contains("also at entry 1 with other content") })
        for entry in batch { #expect(throws: ReplicaError.notFound(id: entry.id)) { try replica.entry(id: entry.id) } }
        #expect(try replica.liveEntryCount() == 1)
        #expect(try replica.entry(id: existing.id) == existing)
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 1)
        #expect(try replica.changes(after: VersionVector()).map(\.id) == [existing.id])
    }

    /// A contradiction names where the first record was, however many records before it were
    /// skipped (already present) and wherever it falls in a run of new ones.
    @Test func aContradictionNamesTheFirstPositionAcrossSkippedRecords() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(8)
        try replica.importEntries([batch[0], batch[2], batch[6]])
        for (index, expected) in [(1, 2), (4, 5), (5, 6), (7, 8)] {
            var again = batch[index]
            again.data.text = "another text"
            expectReplicaError("contradicting entry \(expected)", {
                try replica.importEntries(batch + [again])
            }, matches: { invalidField($0) == "entry 9: id" && "\($0)".contains("also at entry \(expected) with other content") })
        }
        var positions = WrittenPositions()
        for position in [3, 4, 5, 9, 11, 12, 40] { positions.append(position) }
        #expect((0..<7).map { positions.position(ofWritten: $0) } == [3, 4, 5, 9, 11, 12, 40])
        #expect(try replica.liveEntryCount() == 3)
    }

    /// The same record twice in one input is as harmless as importing it twice: it is skipped.
    @Test func anIdenticalDuplicateInTheInputIsSkipped() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(2)
        #expect(try replica.importEntries([batch[0], batch[1], batch[0]], positionName: { "line \($0 + 1)" }).written == 2)
        #expect(try replica.liveEntryCount() == 2)
        #expect(try replica.replicaVector()[replica.identity.incarnation] == 2)
    }

    @Test func reImportingIdenticalEntriesIsSkipped() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(4)
        #expect(try replica.importEntries(batch).written == 4)
        let hash = try replica.canonicalHash()
        let vector = try replica.replicaVector()
        #expect(try replica.importEntries(batch).unchanged == 4)
        #expect(try replica.importEntries(batch.reversed()).written == 0)
        #expect(try replica.canonicalHash() == hash)
        #expect(try replica.replicaVector() == vector)
        // Identical old ones are skipped while new ones are written.
        let more = Self.entries(6)  // same seed: the first four are the same entries
        #expect(try replica.importEntries(more).written == 2)
        #expect(try replica.liveEntryCount() == 6)
    }

    @Test func reImportingWithAnotherRecordedAtIsStillTheSameEntry() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(2)
        try replica.importEntries(batch)
        var later = batch[0]
        later.recordedAt = Timestamp(millisecondsSince1970: t0 + 86_400_000)
        #expect(later.isSameContent(as: batch[0]))
        #expect(try replica.importEntries([later, batch[1]]).unchanged == 2)
        #expect(try replica.entry(id: batch[0].id) == batch[0])
        var edited = later
        edited.data.text = "edited"
        #expect(!edited.isSameContent(as: batch[0]))
    }

    /// An import adds entries and never overwrites one: what changed here since (or differs in
    /// the input) stays as it is here, and the rest of the input still goes in.
    @Test func otherContentUnderATakenIDKeepsTheReplicasVersion() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(2)
        try replica.importEntries(batch)
        var changed = batch[1]
        changed.category = "edited"
        let fresh = Self.entries(1, seed: 41)[0]
        let vector = try replica.replicaVector()
        var expected = ImportSummary()
        expected.written = 1
        expected.keptAsHere = [changed.id]
        #expect(try replica.importEntries([fresh, changed]) == expected)
        #expect(try replica.entry(id: fresh.id) == fresh)
        #expect(try replica.entry(id: batch[1].id) == batch[1])
        #expect(try replica.replicaVector()[replica.identity.incarnation] == vector[replica.identity.incarnation] + 1)
    }

    /// Deletes stick: re-importing a file after deleting one of its entries brings nothing back
    /// and still takes the rest.
    @Test func aDeletedIDIsNotRestored() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        let batch = Self.entries(2)
        try replica.importEntries([batch[0]])
        try replica.delete(id: batch[0].id)
        var expected = ImportSummary()
        expected.written = 1
        expected.deletedHere = [batch[0].id]
        #expect(try replica.importEntries(batch) == expected)
        #expect(try replica.liveEntryCount() == 1)
        #expect(try replica.tombstoneCount() == 1)
        #expect(throws: ReplicaError.notFound(id: batch[0].id)) { try replica.entry(id: batch[0].id) }
    }

    /// An import notes the digest of each write as it writes the row, not by reading it back:
    /// the note equals the digest of the write as it reads back and as it is sent (its content
    /// encoded afresh), whatever the row holds (no category, text that needs escaping), and the
    /// writes after it are noted as ever. Its entries are found by their text.
    @Test func importedWritesAreNotedWithTheirDigestsAndFoundByText() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        var batch = Self.entries(30)
        batch[3].category = nil
        batch[5].data.text = "a \"quoted\" back\\slash, tab\t and é"
        batch[7].data.metric = Metric(name: "mood", value: 7.5, scaleMin: 1, scaleMax: 10)
        try replica.importEntries(Array(batch[..<20]))
        try replica.importEntries(batch)  // the first 20 again, skipped; 10 new
        let added = try replica.add(json: ReplicaFixtures.entryJSON(text: "after the import"))
        let origin = replica.identity.incarnation
        let changes = try replica.changes(after: VersionVector())
        #expect(changes.count == 31)
        for change in changes {
            let sequence = change.stamp.sequence
            #expect(try replica.ownDigest(origin, sequence) == .digest(change.digest), "write \(sequence) of \(change.id)")
            #expect(try replica.heldDigest(origin, sequence) == change.digest, "write \(sequence) read back")
        }
        #expect(try replica.database.firstRow("SELECT count(*) FROM own_writes", [], { $0.int64(0) }) == 31)
        #expect(try replica.entries(matching: EntryQuery(search: "quoted")).map(\.id) == [batch[5].id])
        #expect(try replica.entries(matching: EntryQuery(search: "entry 29")).map(\.id) == [batch[29].id])
        #expect(try replica.entries(matching: EntryQuery(search: "after the import")).map(\.id) == [added.id])
    }
}
