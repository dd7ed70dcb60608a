import Foundation
@testable import LifeSync
import Testing
import TestSupport

/// Schema step 28: the time indexes are ascending, so a journal written in time order fills
/// their pages, and newest-first pages read the same rows as before.
@Suite struct TimeIndexTests {
    static let timeIndexes = ["idx_timestamp", "idx_category", "idx_source"]

    /// `count` entries a minute apart, oldest first, over three categories and two sources;
    /// every tenth shares its time with the one before (pages order ties by ID).
    static func journal(_ count: Int, seed: UInt64 = 91) -> [LogEntry] {
        let random = SeededRandom(seed: seed)
        return (0..<count).map { i in
            let minute = Int64(i - i / 10)
            return LogEntry(id: Identifier.make(role: .mac, random: random),
                            timestamp: Timestamp(millisecondsSince1970: ReplicaFixtures.epoch + minute * 60_000),
                            recordedAt: Timestamp(millisecondsSince1970: ReplicaFixtures.epoch), source: i % 3 == 0 ? "watch" : "mac",
                            deviceId: "mac_import", category: ["mood", "work", "walk"][i % 3],
                            data: LogData(text: "entry \(i): walked to the market, felt \(i % 10) out of ten"))
        }
    }

    /// The share of each time index's pages that holds nothing.
    static func unusedShare(_ replica: Replica) throws -> [String: Double] {
        var shares: [String: Double] = [:]
        for name in timeIndexes {
            shares[name] = try replica.database.firstRow("SELECT CAST(sum(unused) AS REAL) / sum(pgsize) FROM dbstat WHERE name = ?",
                                                         [.text(name)], { $0.double(0) })
        }
        return shares
    }

    /// The answers the time indexes serve: newest-first pages with each filter, the page after
    /// a cursor, and the journal oldest first.
    static func answers(_ replica: Replica) throws -> [[String]] {
        let middle = Timestamp(millisecondsSince1970: ReplicaFixtures.epoch + 700 * 60_000)
        let queries = [
            EntryQuery(limit: 50), EntryQuery(category: "work", limit: 50), EntryQuery(source: "watch", limit: 50),
            EntryQuery(since: middle, limit: 50), EntryQuery(until: middle, category: "mood", limit: 20, offset: 7),
        ]
        var result = try queries.map { try replica.entries(matching: $0).map(\.id) }
        let first = try replica.entries(matching: EntryQuery(limit: 25))
        var next = EntryQuery(limit: 25)
        next.before = EntryQuery.Key(timestamp: first.last!.timestamp, id: first.last!.id)
        result.append(try replica.entries(matching: next).map(\.id))
        result.append(try replica.allEntries().map(\.id))
        return result
    }

    @Test func aJournalWrittenInTimeOrderFillsTheTimeIndexes() throws {
        let directory = TemporaryDirectory()
        let replica = try ReplicaFixtures.replica(role: .mac, path: directory.path + "/r.sqlite")
        #expect(try replica.importEntries(Self.journal(3_000)).written == 3_000)
        for (name, share) in try Self.unusedShare(replica) {
            // Descending, each leaf split at the front kept half of it empty: 0.45-0.5.
            #expect(share < 0.2, "\(name): \(share) of its pages unused")
        }
        for entry in Self.journal(300, seed: 92) { try replica.add(entry) }
        for (name, share) in try Self.unusedShare(replica) { #expect(share < 0.2, "\(name) after single writes: \(share)") }
    }

    @Test func newestFirstPagesReadTheIndexBackwardsWithoutASort() throws {
        let replica = try ReplicaFixtures.replica(role: .mac)
        try replica.importEntries(Self.journal(200))
        for (sql, index) in [("SELECT id FROM entries ORDER BY timestamp DESC LIMIT 10", "idx_timestamp"),
                             ("SELECT id FROM entries WHERE category = 'work' ORDER BY timestamp DESC LIMIT 10", "idx_category"),
                             ("SELECT id FROM entries WHERE source = 'mac' ORDER BY timestamp DESC LIMIT 10", "idx_source")] {
            let plan = try replica.database.rows("EXPLAIN QUERY PLAN " + sql) { $0.string(3) }.joined(separator: "; ")
            #expect(plan.contains(index) && !plan.contains("TEMP B-TREE"), "\(sql): \(plan)")
        }
    }

    @Test func aReplicaOfSchema27OpensAs28WithTheSameAnswers() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/r.sqlite"
        let replica = try ReplicaFixtures.replica(role: .mac, path: path)
        try replica.importEntries(Self.journal(1_500))
        let before = try Self.answers(replica)
        #expect(before.allSatisfy { !$0.isEmpty })
        let hash = try replica.canonicalHash()
        try replica.database.execute("""
            DROP INDEX idx_timestamp; CREATE INDEX idx_timestamp ON entries(timestamp DESC);
            DROP INDEX idx_category; CREATE INDEX idx_category ON entries(category, timestamp DESC);
            DROP INDEX idx_source; CREATE INDEX idx_source ON entries(source, timestamp DESC);
            """)
        try replica.database.setUserVersion(27)
        #expect(try Self.answers(replica) == before)

        let reopened = try Replica(path: path, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 93))
        #expect(try reopened.database.userVersion == Schema.currentVersion)
        let definitions = try reopened.database.rows("SELECT sql FROM sqlite_master WHERE name IN ('idx_timestamp', 'idx_category', 'idx_source')") {
            $0.string(0)
        }
        #expect(definitions.count == 3 && definitions.allSatisfy { $0.contains("timestamp") && !$0.contains("DESC") }, "\(definitions)")
        #expect(try Self.answers(reopened) == before)
        #expect(try reopened.canonicalHash() == hash)
    }
}
