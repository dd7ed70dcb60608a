import Foundation
import Testing
@testable import LifeSync
import LifeSyncRuntime
import TestSupport

/// The journal's kept counts (EntrySummary, schema steps 25 and 30) equal a fresh count of the
/// rows, and are in step with the rows, after every kind of write: local writes, edits and
/// deletes, imports, received batches (before and after their burst's text is caught up), an
/// entry a concurrent edit brings back from its tombstone, a device restored whole whose writes
/// are re-issued, and the migration of an existing replica.
@Suite struct EntrySummaryTests {
    /// Days of UTC, of zones a whole number of hours off it (where an hour is one day's), of
    /// zones half and three quarters of an hour off it (where a day's end splits hours), and
    /// the process's own zone.
    static let allDays: [StatsDays] = [.utc, .offset(minutes: 60), .offset(minutes: -300), .offset(minutes: 330), .offset(minutes: 345), .local]

    /// Counts, stats in every kind of days, and metrics from the kept counts against the same
    /// read from every row.
    static func expectExact(_ replica: Replica, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        func count(_ table: String) throws -> Int { Int(try replica.database.firstRow("SELECT count(*) FROM \(table)", [], { $0.int64(0) }) ?? -1) }
        // The counts are in step with every committed write, a received batch's too: nothing
        // is left for a reader to count from the rows (a sync burst's text waits; they do not).
        func mark(_ key: String) throws -> Int64? {
            try replica.database.firstRow("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?", [.text(key)], { $0.int64(0) })
        }
        let counted = try mark(EntrySummary.markKey), indexed = try mark(Replica.textBacklogKey)
        #expect(counted == (try replica.latestChangeSequence()), "\(label): the counts' mark", sourceLocation: sourceLocation)
        #expect(indexed != nil && counted != nil && indexed! <= counted!, "\(label): the text index's mark", sourceLocation: sourceLocation)
        #expect(try replica.liveEntryCount() == count("entries"), "\(label): entries", sourceLocation: sourceLocation)
        #expect(try replica.tombstoneCount() == count("tombstones"), "\(label): tombstones", sourceLocation: sourceLocation)
        for days in allDays {
            // The metric values here are exact in binary, so the averages agree to the bit.
            let kept = try replica.stats(days: days), scanned = try replica.scannedStats(days: days)
            #expect(kept == scanned, "\(label), \(days): kept \(kept.json.canonicalText) scanned \(scanned.json.canonicalText)",
                    sourceLocation: sourceLocation)
            for window in windows {
                let kept = try replica.stats(matching: window, days: days), scanned = try replica.scannedStats(matching: window, days: days)
                #expect(kept == scanned, "\(label), \(days), \(window): kept \(kept.json.canonicalText) scanned \(scanned.json.canonicalText)",
                        sourceLocation: sourceLocation)
                func text(_ list: [(day: String, metric: EntryStats.MetricSummary)]) -> [String] { list.map { "\($0.day) \($0.metric)" } }
                let keptDays = text(try replica.metricsByDay(matching: window, days: days))
                let scannedDays = text(try replica.scannedMetricsByDay(matching: window, days: days))
                #expect(keptDays == scannedDays, "\(label), \(days), \(window): metrics by day", sourceLocation: sourceLocation)
            }
        }
    }

    /// Windows of time as the dashboard (a day, the last days) and `--since`/`--until` ask them:
    /// whole hours and parts of hours at either end, one end open, and one with no whole hour.
    static let windows: [EntryQuery] = {
        func at(_ text: String) -> Timestamp { try! Timestamp(iso8601: text) }
        return [EntryQuery(since: at("2026-11-22T00:00:00Z"), until: at("2026-11-22T23:59:59.999Z")),
                EntryQuery(since: at("2026-11-22T23:20:00Z")), EntryQuery(until: at("2026-11-24T05:40:00Z")),
                EntryQuery(since: at("2026-11-22T18:10:00Z"), until: at("2026-11-26T12:00:00Z")),
                EntryQuery(since: at("2026-11-23T00:05:00Z"), until: at("2026-11-23T00:50:00Z"))]
    }()

    static func entry(_ text: String, category: String = "mood", at timestamp: String, mood: Double? = nil) -> JSONValue {
        var data: [(String, JSONValue)] = [("text", .string(text))]
        if let mood {
            data.append(("metric", .object([("name", .string(category == "health" ? "pain" : "mood")), ("value", .number(mood)),
                                            ("scale_min", .number(1)), ("scale_max", .number(10))])))
        }
        return .object([("category", .string(category)), ("timestamp", .string(timestamp)), ("data", .object(data))])
    }

    static func patch(_ members: [(String, JSONValue)]) -> JSONValue { .object(members) }

    @Test func localWritesEditsDeletesAndImportsKeepTheCountsExact() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 21)
        try Self.expectExact(replica, "empty")
        let late = try replica.add(json: Self.entry("late", at: "2026-11-22T23:45:00Z", mood: 7))
        let early = try replica.add(json: Self.entry("early", at: "2026-11-23T00:10:00Z", mood: 2.5))
        let note = try replica.add(json: Self.entry("a note", category: "note", at: "2026-11-23T18:30:00Z"))
        _ = try replica.add(json: Self.entry("sore", category: "health", at: "2026-11-24T05:20:00Z", mood: 4))
        try Self.expectExact(replica, "added")

        _ = try replica.update(id: late.id, patch: Self.patch([("category", .string("work"))]))
        _ = try replica.update(id: early.id, patch: Self.patch([("data", .object([("metric", .object([
            ("name", .string("mood")), ("value", .number(9)), ("scale_min", .number(1)), ("scale_max", .number(10))]))]))]))
        _ = try replica.update(id: note.id, patch: Self.patch([("timestamp", .string("2026-11-25T12:00:00Z"))]))
        try Self.expectExact(replica, "edited")

        try replica.delete(id: early.id)
        try Self.expectExact(replica, "deleted")

        let defaults = replica.importDefaults()
        let imported = try (0..<40).map { (i: Int) -> LogEntry in
            let hour = String(format: "%02d", i % 24), minute = String(format: "%02d", i)
            let category = i % 2 == 0 ? "mood" : "note"
            let mood: Double? = i % 2 == 0 ? Double(1 + i % 10) : nil
            let json = Self.entry("imported \(i)", category: category, at: "2026-11-2\(6 + i % 3)T\(hour):\(minute):00Z", mood: mood)
            return try LogEntry.validated(from: json, defaults: defaults)
        }
        try replica.importEntries(imported)
        try replica.importEntries(Array(imported.prefix(5)))  // already present: nothing counted twice
        try Self.expectExact(replica, "imported")
        try replica.delete(id: imported[0].id)
        try Self.expectExact(replica, "an imported entry deleted")
    }

    /// An import larger than one step of the catch-up (`Replica.backlogSlice` feed numbers) is
    /// counted and indexed whole: every step adds its own rows, none twice, none left out.
    @Test func anImportOfMoreThanOneCatchUpStepIsCountedAndIndexedWhole() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 22)
        let defaults = replica.importDefaults()
        let total = Int(Replica.backlogSlice) + 3_000
        let imported = try (0..<total).map { (i: Int) -> LogEntry in
            let json = Self.entry("bulk \(i) word\(i)x", category: i % 3 == 0 ? "note" : "mood", at: "2026-11-2\(2 + i % 5)T\(String(format: "%02d", i % 24)):00:00Z",
                                  mood: i % 3 == 0 ? nil : Double(1 + i % 10))
            return try LogEntry.validated(from: json, defaults: defaults)
        }
        try replica.importEntries(imported)
        #expect(try replica.textIndexMark() == replica.database.firstRow(RecordWriter.latestFeedSQL, [], { $0.int64(0) }))
        try Self.expectExact(replica, "one large import")
        for i in [0, Int(Replica.backlogSlice) - 1, Int(Replica.backlogSlice), total - 1] {
            #expect(try replica.entries(matching: EntryQuery(search: "word\(i)x")).map { $0.data.text } == ["bulk \(i) word\(i)x"], "entry \(i)")
        }
    }

    /// An import counts its rows as it writes them, holding at most `CountTally.groupLimit`
    /// groups (hour, category, source, metric) before it adds them: one of more groups than that
    /// is counted whole, each group once, and its metric values (fractions among them) are the
    /// values the rows hold.
    @Test func anImportOfMoreGroupsThanItHoldsIsCountedWhole() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 23)
        let defaults = replica.importDefaults()
        let total = CountTally.groupLimit + 700
        let start = try Timestamp(iso8601: "2026-11-22T00:30:00Z").millisecondsSince1970
        let imported = try (0..<total).map { (i: Int) -> LogEntry in
            let at = Timestamp(millisecondsSince1970: start + Int64(i / 2) * 3_600_000).iso8601  // two entries an hour
            let json = Self.entry("hourly \(i)", category: i % 3 == 0 ? "note" : "mood", at: at, mood: i % 3 == 0 ? nil : Double(i % 20) / 4 + 1)
            return try LogEntry.validated(from: json, defaults: defaults)
        }
        try replica.importEntries(imported)
        #expect(try replica.textIndexMark() == replica.database.firstRow(RecordWriter.latestFeedSQL, [], { $0.int64(0) }))
        try Self.expectExact(replica, "an import of many groups")
        let recounted = try replica.database.rows("SELECT kind, key, count FROM entry_summary ORDER BY 1, 2") { "\($0.string(0)) \($0.string(1)) \($0.int64(2))" }
        let hours = try replica.database.rows("SELECT hour, kind, key, count, total, low, high FROM hour_summary ORDER BY 1, 2, 3") {
            "\($0.string(0)) \($0.string(1)) \($0.string(2)) \($0.int64(3)) \($0.optionalString(4) ?? "-") \($0.optionalString(5) ?? "-") \($0.optionalString(6) ?? "-")"
        }
        let metrics = try replica.database.rows("SELECT name, value, count FROM metric_summary ORDER BY 1, 2") { "\($0.string(0)) \($0.double(1)) \($0.int64(2))" }
        // The same counts made afresh from the rows (schema step 25's statements).
        try replica.database.execute(EntrySummary.createStep)
        #expect(try replica.database.rows("SELECT kind, key, count FROM entry_summary ORDER BY 1, 2") { "\($0.string(0)) \($0.string(1)) \($0.int64(2))" } == recounted)
        #expect(try replica.database.rows("SELECT hour, kind, key, count, total, low, high FROM hour_summary ORDER BY 1, 2, 3") {
            "\($0.string(0)) \($0.string(1)) \($0.string(2)) \($0.int64(3)) \($0.optionalString(4) ?? "-") \($0.optionalString(5) ?? "-") \($0.optionalString(6) ?? "-")"
        } == hours)
        #expect(try replica.database.rows("SELECT name, value, count FROM metric_summary ORDER BY 1, 2") { "\($0.string(0)) \($0.double(1)) \($0.int64(2))" } == metrics)
        #expect(hours.count > CountTally.groupLimit)
    }

    @Test func receivedBatchesDeletesAndAnEntryBroughtBackKeepTheCountsExact() throws {
        let watchClock = ManualClock(milliseconds: ReplicaFixtures.epoch)
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 22, clock: watchClock)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 23)
        let run = try watch.add(json: Self.entry("run", category: "health", at: "2026-11-22T06:15:00Z", mood: 3))
        let swim = try watch.add(json: Self.entry("swim", at: "2026-11-22T18:40:00Z", mood: 8))
        _ = try watch.add(json: Self.entry("nap", category: "note", at: "2026-11-22T13:00:00Z"))
        try ReplicaFixtures.sync(from: watch, to: phone)
        try Self.expectExact(phone, "received, the burst not caught up")
        phone.checkpoint()
        try Self.expectExact(phone, "received and caught up")

        // Rows the phone counted are replaced and deleted by what arrives.
        _ = try watch.update(id: run.id, patch: Self.patch([("category", .string("sport")), ("timestamp", .string("2026-11-23T07:00:00Z"))]))
        try watch.delete(id: swim.id)
        try ReplicaFixtures.sync(from: watch, to: phone)
        try Self.expectExact(phone, "edits and a delete received")
        phone.checkpoint()
        try Self.expectExact(phone, "edits and a delete caught up")

        // The phone deletes the run; the watch, later, edits it: the edit wins the whole entry
        // and the run comes back from the phone's tombstone.
        try phone.delete(id: run.id)
        try Self.expectExact(phone, "deleted on the phone")
        watchClock.advance(by: 60_000)
        _ = try watch.update(id: run.id, patch: Self.patch([("data", .object([("text", .string("ran further"))]))]))
        try ReplicaFixtures.sync(from: watch, to: phone)
        phone.checkpoint()
        #expect(try phone.entry(id: run.id).data.text == "ran further", "the later edit stands")
        try Self.expectExact(phone, "brought back by a later edit")
        try ReplicaFixtures.sync(from: phone, to: watch)
        try Self.expectExact(watch, "the watch after the phone's delete arrived")
    }

    /// Batches a receiver finds waiting are committed together, so one transaction may write a
    /// record and then replace it, delete it, or bring it back from the tombstone it wrote: the
    /// writer's tally holds the first version, and is added to the tables before that version
    /// is taken out (CountTally), its metric's hour made again without it.
    @Test func aRecordWrittenTwiceInOneTransactionIsCountedOnce() throws {
        let watchClock = ManualClock(milliseconds: ReplicaFixtures.epoch)
        let macClock = ManualClock(milliseconds: ReplicaFixtures.epoch)
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 32, clock: watchClock)
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 33, clock: macClock)
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 34)
        let run = try watch.add(json: Self.entry("run", category: "health", at: "2026-11-22T06:15:00Z", mood: 3))
        let swim = try watch.add(json: Self.entry("swim", at: "2026-11-22T18:40:00Z", mood: 8))
        let first = (changes: try watch.changes(after: VersionVector()), through: try watch.replicaVector())
        try ReplicaFixtures.sync(from: watch, to: mac)
        watchClock.advance(by: 60_000)
        _ = try watch.update(id: run.id, patch: Self.patch([("category", .string("sport")), ("timestamp", .string("2026-11-23T07:00:00Z"))]))
        try watch.delete(id: swim.id)
        let second = (changes: try watch.changes(after: first.through), through: try watch.replicaVector())
        // The mac edits the swim after the watch deleted it, not knowing: the edit wins it back.
        macClock.advance(by: 120_000)
        _ = try mac.update(id: swim.id, patch: Self.patch([("data", .object([("text", .string("swam further"))]))]))
        let third = (changes: try mac.changes(after: first.through), through: try mac.replicaVector())
        #expect(second.changes.count == 2 && third.changes.count == 1)
        _ = try phone.apply([first, second, third])
        #expect(try phone.entry(id: swim.id).data.text == "swam further")
        #expect(try phone.entry(id: run.id).category == "sport")
        try Self.expectExact(phone, "three batches in one transaction")
        phone.checkpoint()
        try Self.expectExact(phone, "their text caught up")
    }

    /// A tombstone whose (origin, sequence) another record holds is refused by SQLite, and the
    /// caller records a clash and goes on (`storeUnlessClashing`): the tombstone it would have
    /// replaced stays, and so does its count (it was taken out before the refused write).
    @Test func aTombstoneRefusedForAClashLeavesTheCountsAsTheyWere() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 35)
        let gone = try replica.add(json: Self.entry("gone", at: "2026-11-22T07:00:00Z"))
        try replica.delete(id: gone.id)
        let other = try replica.add(json: Self.entry("also gone", at: "2026-11-22T08:00:00Z"))
        try replica.delete(id: other.id)
        let taken = try #require(try replica.storedVersion(id: other.id)).stamp
        var refused = false
        try replica.writeTransaction {
            var writer = RecordWriter(database: replica.database, counts: replica.countTally, createdAt: Timestamp(millisecondsSince1970: ReplicaFixtures.epoch))
            let clash = VersionStamp(hlc: taken.hlc, origin: taken.origin, sequence: taken.sequence, vector: taken.vector, deleted: true)
            do { try writer.store(id: gone.id, entry: nil, stamp: clash, previous: .tombstone) } catch let error as SQLiteError {
                refused = error.code == Replica.uniqueConstraintFailed
            }
        }
        #expect(refused)
        #expect(try replica.tombstoneCount() == 2)
        try Self.expectExact(replica, "after the refused tombstone")
    }

    /// The same for an entry's new version: the row it would replace keeps its place in the
    /// counts and in the text index.
    @Test func anEntryVersionRefusedForAClashLeavesTheCountsAndTheTextAsTheyWere() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 36)
        let walk = try replica.add(json: Self.entry("a walk by the river", at: "2026-11-22T07:00:00Z", mood: 4))
        let other = try replica.add(json: Self.entry("reading", category: "note", at: "2026-11-22T08:00:00Z"))
        let taken = try #require(try replica.storedVersion(id: other.id)).stamp
        var refused = false
        try replica.writeTransaction {
            var writer = RecordWriter(database: replica.database, counts: replica.countTally, createdAt: Timestamp(millisecondsSince1970: ReplicaFixtures.epoch))
            var changed = try replica.entry(id: walk.id)
            changed.category = "health"
            let clash = VersionStamp(hlc: taken.hlc, origin: taken.origin, sequence: taken.sequence, vector: taken.vector, deleted: false)
            do { try writer.store(id: walk.id, entry: changed, stamp: clash, previous: .live) } catch let error as SQLiteError {
                refused = error.code == Replica.uniqueConstraintFailed
            }
        }
        #expect(refused)
        #expect(try replica.entry(id: walk.id).category == "mood")
        #expect(try replica.entries(matching: EntryQuery(search: "river")).map(\.id) == [walk.id], "still in the text index")
        #expect(try replica.database.firstRow("SELECT count(*) FROM entries_text WHERE entries_text MATCH 'riv'", [], { $0.int64(0) }) == 1)
        try Self.expectExact(replica, "after the refused version")
    }

    /// A device put back whole from its backup writes again; its writes since are re-issued
    /// under a new incarnation and the lost one comes back (HistoryRepairTests): the counts
    /// follow on both sides.
    @Test func aDeviceRestoredWholeAndRepairedKeepsTheCountsExact() throws {
        let directory = TemporaryDirectory()
        let mac = try HistoryRepairTests.Device(.mac, seed: 24, in: directory)
        let phone = try HistoryRepairTests.Device(.phone, seed: 25, in: directory)
        _ = try mac.add("one")
        HistoryRepairTests.sync(mac.replica, phone.replica)
        try mac.takeBackup()
        let two = try mac.add("two")
        HistoryRepairTests.sync(mac.replica, phone.replica)
        try mac.restoreWhole()
        try Self.expectExact(mac.replica, "restored")
        _ = try mac.add("three")
        HistoryRepairTests.sync(mac.replica, phone.replica)
        #expect(try mac.texts() == ["one", "two", "three"] && phone.texts() == ["one", "two", "three"])
        try mac.replica.delete(id: two)
        HistoryRepairTests.sync(mac.replica, phone.replica)
        for (name, device) in [("mac", mac), ("phone", phone)] {
            device.replica.checkpoint()
            try Self.expectExact(device.replica, "\(name) after the repair and a delete")
        }
    }

    /// The kept counts are what an unfiltered `stats` reads: a count made wrong shows.
    @Test func statsOverTheWholeJournalReadTheKeptCounts() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 26)
        _ = try replica.add(json: Self.entry("one", at: "2026-11-22T09:00:00Z", mood: 5))
        try replica.database.run("UPDATE entry_summary SET count = count + 1 WHERE kind = 'category'")
        #expect(try replica.stats().byCategory.map(\.count) == [2])
        #expect(try replica.stats(matching: EntryQuery(category: "mood")).byCategory.map(\.count) == [1], "a filter reads the rows")
    }

    /// A replica made before step 30 whose last burst left its text and its counts behind
    /// (they shared a mark) has its counts made in step when it is opened; the text waits.
    @Test func aReplicaOfSchema29WithABurstsBacklogIsCountedWhenOpened() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/before.sqlite"
        let watch = try ReplicaFixtures.replica(role: .watch, seed: 29)
        _ = try watch.add(json: Self.entry("walk", at: "2026-11-22T07:00:00Z", mood: 6))
        _ = try watch.add(json: Self.entry("read", category: "note", at: "2026-11-22T21:30:00Z"))
        do {
            let phone = try ReplicaFixtures.replica(role: .phone, seed: 30, path: path)
            _ = try phone.add(json: Self.entry("kept", at: "2026-11-22T09:00:00Z", mood: 2))
            try ReplicaFixtures.sync(from: watch, to: phone)  // the burst's text not caught up
            #expect(try phone.textIndexMark() == 1)
        }
        do {
            // Schema 29: one mark, and the counts only of the rows at or below it.
            let db = try Database(path: path, create: false)
            try db.execute("DELETE FROM meta WHERE key = '\(EntrySummary.markKey)'; DELETE FROM entry_summary; DELETE FROM metric_summary; DELETE FROM hour_summary;")
            try db.execute(EntrySummary.addSQL(where: "feed_seq <= 1").joined(separator: ";\n") + "; PRAGMA user_version = 29;")
        }
        let reopened = try Replica(path: path, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 31))
        #expect(try reopened.liveEntryCount() == 3)
        #expect(try reopened.textIndexMark() == 1, "the text waits for the catch-up")
        try Self.expectExact(reopened, "migrated")
    }

    /// A replica made before step 25 gets its counts made from its rows when it is opened.
    @Test func aReplicaOfSchema24IsCountedWhenOpened() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/before.sqlite"
        do {
            let replica = try ReplicaFixtures.replica(role: .mac, seed: 27, path: path)
            let gone = try replica.add(json: Self.entry("gone", at: "2026-11-22T07:00:00Z", mood: 1))
            _ = try replica.add(json: Self.entry("kept", at: "2026-11-22T21:30:00Z", mood: 6))
            try replica.delete(id: gone.id)
        }
        do {
            let db = try Database(path: path, create: false)
            try db.execute("DROP TABLE entry_summary; DROP TABLE metric_summary; PRAGMA user_version = 24;")
        }
        let reopened = try Replica(path: path, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 28))
        #expect(try reopened.database.firstRow("SELECT count FROM entry_summary WHERE kind = 'tombstones'", [], { $0.int64(0) }) == 1)
        try Self.expectExact(reopened, "migrated")
        #expect(try reopened.liveEntryCount() == 1)
    }
}
