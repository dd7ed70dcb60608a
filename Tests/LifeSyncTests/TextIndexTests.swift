import Foundation
@testable import LifeSync
import Testing
import TestSupport

/// The full-text index (`entries_text`, schema step 22) holds exactly the live rows' texts
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

    /// Inside a write transaction new rows are indexed at its end: a row added and changed, or
    /// added and deleted, before then is indexed once as it ends, or not at all; a row indexed
    /// before leaves the index as it is changed or deleted.
    @Test func aTransactionsDeferredRowsAreIndexedOnceAtItsEnd() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 10)
        let groceries = try replica.add(json: ReplicaFixtures.entryJSON(text: "Buy groceries"))
        let park = try replica.add(json: ReplicaFixtures.entryJSON(text: "Walked to the park", timestamp: "2026-11-22T09:00:00Z"))
        _ = try replica.add(json: ReplicaFixtures.entryJSON(text: "Evening swim", timestamp: "2026-11-22T10:00:00Z"))
        func copy(_ id: String, as newID: String, text: String, offset: Int) -> String {
            """
            INSERT INTO entries(id, timestamp, recorded_at, source, device_id, category, data, created_at, hlc, origin, origin_seq, vv, feed_seq)
            SELECT '\(newID)', timestamp, recorded_at, source, device_id, category, json_set(data, '$.text', '\(text)'), created_at, hlc,
                   origin, origin_seq + \(offset), vv, (SELECT max(feed_seq) + 1 FROM entries) FROM entries WHERE id = '\(id)';
            """
        }
        func change(_ id: String, text: String) -> String {
            "UPDATE entries SET data = json_set(data, '$.text', '\(text)'), feed_seq = (SELECT max(feed_seq) + 1 FROM entries) WHERE id = '\(id)';"
        }
        try replica.database.transaction {
            try replica.deferringTextIndex {
                try replica.database.execute(copy(groceries.id, as: "x1", text: "Cooked dinner", offset: 1_000)
                    + change("x1", text: "Cooked lunch")
                    + change(groceries.id, text: "Sold the bicycle")
                    + "DELETE FROM entries WHERE id = '\(park.id)';"
                    + copy(park.id, as: "x2", text: "Gone skiing", offset: 2_000)
                    + "DELETE FROM entries WHERE id = 'x2';")
            }
        }
        #expect(try texts(replica, "cook") == ["Cooked lunch"])
        #expect(try texts(replica, "dinner").isEmpty && texts(replica, "groceries").isEmpty && texts(replica, "skiing").isEmpty)
        #expect(try texts(replica, "bicycle") == ["Sold the bicycle"])
        try expectInStep(replica, ["coo", "lun", "din", "bic", "gro", "par", "ski", "swi"])
        #expect(try replica.database.firstRow("SELECT 1 FROM meta WHERE key = 'text_index_from'", [], { _ in true }) == nil)
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
                DROP TRIGGER entries_text_insert; DROP TRIGGER entries_text_delete; DROP TRIGGER entries_text_update;
                DROP TABLE entries_text;
                PRAGMA user_version = 21;
                """)
        }
        let reopened = try Replica(path: path, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 8))
        #expect(try reopened.database.userVersion == 22)
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
        try replica.database.execute("UPDATE entries SET data = 'not json' WHERE json_extract(data, '$.text') = 'Tea'")
        #expect(try texts(replica, "tea").isEmpty)
        try expectInStep(replica, ["caf", "tea"])
    }
}
