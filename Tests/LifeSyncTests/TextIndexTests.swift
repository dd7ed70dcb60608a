import Foundation
@testable import LifeSync
import Testing
import TestSupport

/// The full-text index (`entries_text`, schema steps 22-23) holds exactly the live rows' texts
/// after every kind of write: local, imported, received, edited and deleted, and after the
/// migration that builds it for an existing replica.
@Suite struct TextIndexTests {
    /// The feed numbers the index names for `trigram`, and those of the live rows whose text
    /// holds it: equal when the index is in step (a stale row would be in the first only).
    private func indexed(_ replica: Replica, _ trigram: String) throws -> (index: Set<Int64>, rows: Set<Int64>) {
        let index = try replica.database.rows("SELECT rowid FROM entries_text WHERE entries_text MATCH ?", [.text("\"\(trigram)\"")]) { $0.int64(0) }
        let rows = try replica.database.rows("SELECT feed_seq, data FROM entries") { (feed: $0.int64(0), data: $0.string(1)) }
            .filter { (try? JSONValue.parse($0.data))?["text"]?.stringValue?.lowercased().contains(trigram) == true }
            .map(\.feed)
        return (Set(index), Set(rows))
    }

    private func expectInStep(_ replica: Replica, _ trigrams: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for trigram in trigrams {
            let (index, rows) = try indexed(replica, trigram)
            #expect(index == rows, "trigram \(trigram)", sourceLocation: sourceLocation)
        }
    }

    private func texts(_ replica: Replica, _ search: String) throws -> [String] {
        try replica.entries(matching: EntryQuery(search: search)).compactMap(\.data.text).sorted()
    }

    @Test func localWritesEditsAndDeletesKeepTheIndexInStep() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 3)
        let groceries = try replica.add(json: ReplicaFixtures.entryJSON(text: "Buy groceries"))
        let park = try replica.add(json: ReplicaFixtures.entryJSON(text: "Walked to the park", timestamp: "2026-11-22T09:00:00Z"))
        #expect(try texts(replica, "grocery") == ["Buy groceries"])
        try expectInStep(replica, ["gro", "par", "alk"])

        _ = try replica.update(id: groceries.id, patch: .object([("data", .object([("text", .string("Sold the bicycle"))]))]))
        #expect(try texts(replica, "grocery").isEmpty)
        #expect(try texts(replica, "bicycles") == ["Sold the bicycle"])
        try expectInStep(replica, ["gro", "bic", "cle"])

        try replica.delete(id: park.id)
        #expect(try texts(replica, "park").isEmpty)
        try expectInStep(replica, ["par", "alk", "bic"])
    }

    @Test func receivedWritesKeepTheIndexInStep() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 4)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 5)
        let note = try watch.add(json: ReplicaFixtures.entryJSON(text: "Morning run by the river"))
        _ = try watch.add(json: ReplicaFixtures.entryJSON(text: "Evening swim", timestamp: "2026-11-22T19:00:00Z"))
        try ReplicaFixtures.sync(from: watch, to: phone)
        #expect(try texts(phone, "RUNS") == ["Morning run by the river"], "found before the burst's rows are indexed")
        phone.checkpoint()  // the burst ends: its rows are indexed
        #expect(try texts(phone, "RUNS") == ["Morning run by the river"])
        try expectInStep(phone, ["riv", "swi", "run"])

        _ = try watch.update(id: note.id, patch: .object([("data", .object([("text", .string("Morning walk by the lake"))]))]))
        try ReplicaFixtures.sync(from: watch, to: phone)
        #expect(try texts(phone, "river").isEmpty)
        #expect(try texts(phone, "lake") == ["Morning walk by the lake"])
        _ = try phone.add(json: ReplicaFixtures.entryJSON(text: "A local note"))  // a local write indexes the backlog too
        try expectInStep(phone, ["riv", "lak", "mor", "not"])

        try watch.delete(id: note.id)
        try ReplicaFixtures.sync(from: watch, to: phone)
        #expect(try texts(phone, "morning").isEmpty)
        phone.checkpoint()
        try expectInStep(phone, ["lak", "mor", "swi"])
    }

    @Test func importedEntriesAreIndexedAndARefusedImportLeavesNoTrace() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 6)
        let defaults = replica.importDefaults()
        let entries = try (0..<50).map { i in
            try LogEntry.validated(from: ReplicaFixtures.entryJSON(text: "entry \(i): felt fine", timestamp: "2026-11-22T08:\(String(format: "%02d", i)):00Z"),
                                   defaults: defaults)
        }
        try replica.importEntries(entries)
        #expect(try texts(replica, "entry 42") == ["entry 42: felt fine"])
        try expectInStep(replica, ["ent", "y 4", "fin"])

        // A refusal half-way rolls back the entries and their index rows together.
        let more = try (0..<3).map { i in
            try LogEntry.validated(from: ReplicaFixtures.entryJSON(text: "later \(i)", timestamp: "2026-11-23T08:0\(i):00Z"), defaults: defaults)
        }
        var given = 0
        #expect(throws: (any Error).self) {
            try replica.importEntries(positionName: { "line \($0)" }) {
                given += 1
                if given == 3 { throw ReplicaError.invalid(ValidationError(field: "line 3", reason: "refused")) }
                return (given, more[given - 1])
            }
        }
        #expect(try texts(replica, "later").isEmpty)
        try expectInStep(replica, ["lat", "ent"])
    }

    /// Rows written in one transaction are indexed once, as it ends: a row added and changed,
    /// or added and deleted, before then is indexed as it ends up, or not at all; a row indexed
    /// before leaves the index as it is changed or deleted. Here the transaction is one received
    /// batch holding all of it, indexed when the burst ends; nothing is left in the backlog.
    @Test func aTransactionsRowsAreIndexedOnceAtItsEnd() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 10)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 11)
        let groceries = try watch.add(json: ReplicaFixtures.entryJSON(text: "Buy groceries"))
        let park = try watch.add(json: ReplicaFixtures.entryJSON(text: "Walked to the park", timestamp: "2026-11-22T09:00:00Z"))
        _ = try watch.add(json: ReplicaFixtures.entryJSON(text: "Evening swim", timestamp: "2026-11-22T10:00:00Z"))
        try ReplicaFixtures.sync(from: watch, to: phone)
        phone.checkpoint()
        func text(_ value: String) -> JSONValue { .object([("data", .object([("text", .string(value))]))]) }
        let dinner = try watch.add(json: ReplicaFixtures.entryJSON(text: "Cooked dinner", timestamp: "2026-11-22T11:00:00Z"))
        _ = try watch.update(id: dinner.id, patch: text("Cooked lunch"))
        _ = try watch.update(id: groceries.id, patch: text("Sold the bicycle"))
        try watch.delete(id: park.id)
        let skiing = try watch.add(json: ReplicaFixtures.entryJSON(text: "Gone skiing", timestamp: "2026-11-22T12:00:00Z"))
        try watch.delete(id: skiing.id)
        try ReplicaFixtures.sync(from: watch, to: phone)
        #expect(try texts(phone, "cook") == ["Cooked lunch"], "the backlog is searched before it is indexed")
        #expect(try texts(phone, "groceries").isEmpty, "an indexed row left the index as it was replaced")
        phone.checkpoint()
        #expect(try texts(phone, "cook") == ["Cooked lunch"])
        #expect(try texts(phone, "dinner").isEmpty && texts(phone, "groceries").isEmpty && texts(phone, "skiing").isEmpty)
        #expect(try texts(phone, "bicycle") == ["Sold the bicycle"])
        try expectInStep(phone, ["coo", "lun", "din", "bic", "gro", "par", "ski", "swi"])
        let backlog = try phone.database.firstRow("""
            SELECT count(*) FROM entries WHERE feed_seq > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_index_from')
            """, [], { $0.int64(0) })
        #expect(backlog == 0)
    }

    /// A HISTORY is part of a sync burst: the reconnect after a session broken before its
    /// CAUGHT_UP takes it without indexing what the broken session left in the backlog (a
    /// 50,000-entry backlog cost the reconnect 0.45 s of `bench sync`); the burst's end does,
    /// and the backlog is searched meanwhile.
    @Test func aHistoryLeavesTheBacklogToTheBurstsEnd() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 12)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 13)
        _ = try watch.add(json: ReplicaFixtures.entryJSON(text: "Buy groceries"))
        _ = try watch.add(json: ReplicaFixtures.entryJSON(text: "Walked to the park", timestamp: "2026-11-22T09:00:00Z"))
        try ReplicaFixtures.sync(from: watch, to: phone)  // no checkpoint: the session broke off
        func backlog() throws -> Int64? {
            try phone.database.firstRow("""
                SELECT count(*) FROM entries WHERE feed_seq > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_index_from')
                """, [], { $0.int64(0) })
        }
        #expect(try backlog() == 2)
        _ = try phone.takeHistory(History(vector: try watch.replicaVector(), incarnation: watch.identity.incarnation), sendsRecordings: true)
        #expect(try backlog() == 2, "the reconnect's HISTORY leaves the backlog to the burst's end")
        #expect(try texts(phone, "grocery") == ["Buy groceries"])
        phone.checkpoint()
        #expect(try backlog() == 0)
        #expect(try texts(phone, "park") == ["Walked to the park"])
        try expectInStep(phone, ["gro", "par"])
    }

    /// A burst's backlog of more than one step is indexed a step at a time, between a serving
    /// node's turns (a million rows at once held its loop 7 s): the burst's end indexes nothing
    /// yet, each step moves the mark one step at most, searches and counts are right throughout,
    /// and the index is in step at the end. A smaller backlog is indexed at the burst's end.
    @Test func aLargeBurstIsIndexedAStepAtATime() throws {
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 14)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 15)
        let defaults = watch.importDefaults()
        let count = Int(Replica.catchUpStep) * 2 + 100
        try watch.importEntries((0..<count).map { i in
            try LogEntry.validated(from: ReplicaFixtures.entryJSON(text: i == count - 1 ? "the last one, by the river" : "entry \(i)",
                                                                   timestamp: "2026-11-22T08:00:00Z"), defaults: defaults)
        })
        try ReplicaFixtures.sync(from: watch, to: phone)
        phone.checkpoint()
        #expect(phone.textCatchUpDue)
        #expect(try phone.textIndexMark() == 0, "nothing indexed at the burst's end")
        #expect(try texts(phone, "river") == ["the last one, by the river"], "the backlog is searched meanwhile")
        #expect(try phone.liveEntryCount() == count)
        var marks: [Int64] = []
        while try phone.stepTextCatchUp() { marks.append(try phone.textIndexMark()) }
        marks.append(try phone.textIndexMark())
        #expect(marks == [Replica.catchUpStep, 2 * Replica.catchUpStep, Int64(count)])
        #expect(!phone.textCatchUpDue)
        #expect(try !phone.stepTextCatchUp())
        #expect(try texts(phone, "river") == ["the last one, by the river"])
        #expect(try phone.liveEntryCount() == count)
        try expectInStep(phone, ["riv", "y 1", "las"])

        _ = try watch.add(json: ReplicaFixtures.entryJSON(text: "one more"))
        try ReplicaFixtures.sync(from: watch, to: phone)
        phone.checkpoint()
        #expect(!phone.textCatchUpDue)
        #expect(try phone.textIndexMark() == Int64(count + 1), "a small backlog at once")
    }

    /// A replica made before step 22 gets its index built when it is opened.
    @Test func aReplicaOfSchema21IsIndexedWhenOpened() throws {
        let path = NSTemporaryDirectory() + "lifesync-textindex-\(getpid()).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        do {
            let replica = try ReplicaFixtures.replica(role: .mac, seed: 7, path: path)
            _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "Buy groceries"))
            _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "Walked to the park", timestamp: "2026-11-22T09:00:00Z"))
        }
        do {
            let db = try Database(path: path, create: false)
            try db.execute("""
                DROP TABLE entries_text;
                DELETE FROM meta WHERE key = 'text_index_from';
                PRAGMA user_version = 21;
                """)
        }
        let reopened = try Replica(path: path, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 8))
        #expect(try reopened.database.userVersion == Schema.currentVersion)
        #expect(try texts(reopened, "grocery") == ["Buy groceries"])
        #expect(try texts(reopened, "walking") == ["Walked to the park"])
        try expectInStep(reopened, ["gro", "par"])
    }

    /// Searches the index cannot narrow (words under three letters, non-ASCII) still scan, so
    /// the rule's meaning holds for them too; a damaged row's text is simply not indexed.
    @Test func searchesTheIndexCannotNarrowStillFindTheirEntries() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 9)
        _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "Café au lait, 2 cups"))
        _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "Tea", timestamp: "2026-11-22T09:00:00Z"))
        #expect(try texts(replica, "2") == ["Café au lait, 2 cups"])
        #expect(try texts(replica, "CAFÉ") == ["Café au lait, 2 cups"])
        #expect(try texts(replica, "au cup") == ["Café au lait, 2 cups"])
        #expect(try texts(replica, "te") == ["Tea"])
        // A row damaged where it lies: the index still names it, the rule finds no text in it,
        // and the search goes on (a scan too).
        try replica.database.execute("UPDATE entries SET data = 'not json' WHERE json_extract(data, '$.text') = 'Tea'")
        #expect(try texts(replica, "tea").isEmpty)
        #expect(try texts(replica, "au") == ["Café au lait, 2 cups"])
        // A damaged row in the backlog is indexed as no text.
        try replica.database.execute("""
            INSERT INTO entries(id, timestamp, recorded_at, source, device_id, category, data, created_at, hlc, origin_no, origin_seq, vector, feed_seq)
            SELECT 'damaged', timestamp, recorded_at, source, device_id, category, 'not json either, tea', created_at, hlc, origin_no,
                   origin_seq + 1000, vector, (SELECT max(feed_seq) + 1 FROM entries) FROM entries LIMIT 1
            """)
        try replica.catchUpTextIndex()
        #expect(try texts(replica, "tea").isEmpty)
        try expectInStep(replica, ["caf", "cup"])
    }

    /// How a search is narrowed, against a journal modelled as which rows hold each trigram:
    /// what is chosen names every row holding all the query's trigrams and at most the limit's
    /// rows; a query that nothing narrows that far is scanned (nil), and so is one whose words
    /// fill the newest rows, without counting any trigram far.
    @Test func theRarestTrigramsNarrowAloneOrTogether() throws {
        // 10,000 rows, the newest last: "ent" and "ntr" in all, "zzz" in row 7; "424" and "242"
        // in 1,200 each, 200 of them shared; "mar" and "ket" in 1,500 each, 1,000 shared;
        // "aaa" and "bbb" in the oldest 5,000.
        let holders: [String: Set<Int>] = ["ent": Set(0..<10_000), "ntr": Set(0..<10_000), "zzz": [7],
                                           "424": Set(0..<1_200), "242": Set(1_000..<2_200), "mar": Set(0..<1_500),
                                           "ket": Set(500..<2_000), "aaa": Set(0..<5_000), "bbb": Set(0..<5_000)]
        var asked: [(match: String, cap: Int)] = []
        func named(_ match: String) -> Set<Int> {
            match.split(separator: " ").filter { $0 != "AND" }.map { holders[String($0.dropFirst().dropLast())] ?? [] }
                .reduce(Set(0..<10_000)) { $0.intersection($1) }
        }
        func narrowed(_ trigrams: Set<String>) throws -> String? {
            asked = []
            return try Replica.narrowingMatch(trigrams, limit: 500, wide: 2_000) { match, cap, newest in
                asked.append((match, cap))
                return min(named(match).filter { $0 >= 10_000 - (newest ?? 10_000) }.count, cap + 1)
            }
        }
        // A rare trigram narrows alone; the common ones are counted only to the limit.
        #expect(try narrowed(["ent", "ntr", "zzz"]) == "\"zzz\"")
        #expect(asked.allSatisfy { $0.cap == 500 })
        // Each in more than the limit's rows, together in 200: joined, the common ones left out.
        #expect(try narrowed(["ent", "ntr", "424", "242"]) == "\"242\" AND \"424\"")
        #expect(named("\"242\" AND \"424\"") == Set(1_000..<1_200))
        #expect(!asked.contains { $0.match == "\"ent\"" && $0.cap > 2_000 })
        // Words in every one of the newest rows: scanned, nothing counted past the limit.
        #expect(try narrowed(["ent", "ntr"]) == nil)
        #expect(asked.allSatisfy { $0.cap <= 500 })
        // Together still more than the limit: scanned.
        #expect(try narrowed(["mar", "ket"]) == nil)
        // One under the wide count but nothing to join it with: scanned.
        #expect(try narrowed(["aaa", "424"]) == nil)
        // None of the newest rows, but every trigram in more than the wide count: scanned.
        #expect(try narrowed(["aaa", "bbb"]) == nil)
        #expect(asked.allSatisfy { $0.cap <= 2_000 })
        #expect(try narrowed([]) == nil)
    }
}
