import Foundation
@testable import LifeSync
import Testing
import TestSupport

private let t0 = ReplicaFixtures.epoch  // 2026-11-22T00:00:00Z

// MARK: - Replication between two replicas

@Suite struct ReplicaSyncTests {
    struct Pair {
        let a: Replica, b: Replica
        let clockA: ManualClock, clockB: ManualClock
    }

    static func pair() throws -> Pair {
        let clockA = ManualClock(milliseconds: t0), clockB = ManualClock(milliseconds: t0)
        return Pair(a: try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA),
                    b: try ReplicaFixtures.replica(role: .mac, seed: 2, clock: clockB), clockA: clockA, clockB: clockB)
    }

    @Test func syncCopiesEntriesAndAdvancesTheVector() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "x"))
        let y = try p.a.add(json: ReplicaFixtures.entryJSON(text: "y"))
        let outcome = try ReplicaFixtures.sync(from: p.a, to: p.b)
        #expect(outcome.applied == 2)
        #expect(outcome.conflicts == 0)
        #expect(try p.b.entry(id: x.id) == x)
        #expect(try p.b.entry(id: y.id) == y)
        #expect(try p.b.versionStamp(id: x.id) == (try p.a.versionStamp(id: x.id)))
        #expect(try p.b.replicaVector()[p.a.identity.incarnation] == 2)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        // Nothing more to send; a repeat is a no-op.
        #expect(try p.a.changes(after: try p.b.replicaVector()).isEmpty)
        let again = try ReplicaFixtures.sync(from: p.a, to: p.b)
        #expect(again.applied == 0)
        #expect(try p.b.replicaVector()[p.a.identity.incarnation] == 2)
    }

    /// A batch's rows are bound from one reused buffer: each column must hold its own value's
    /// stored form, with no leftovers from the row before (a NULL category after a set one).
    /// Batches commit without their own fsync, but local writes, which exist nowhere else, must
    /// be fully synced again after every batch, not only after the first.
    /// Batches applied together commit together: when the last one fails, the first is not
    /// kept either (its rows, its vector advance, the node IDs it named), so the sender's
    /// unacknowledged batches are exactly the ones still missing.
    @Test func batchesAppliedTogetherCommitAllOrNothing() throws {
        let p = try Self.pair()
        for text in ["one", "two", "three"] { try p.a.add(json: ReplicaFixtures.entryJSON(text: text)) }
        let origin = p.a.identity.incarnation
        let changes = try p.a.changes(after: VersionVector())
        let named = [(origin: origin, nodeID: p.a.identity.nodeID, role: Role.phone)]
        let first = (changes: Array(changes[0..<2]), through: VersionVector([(origin, 2)]))
        let failing = (changes: [changes[2]], through: VersionVector([(origin, 3)]))
        // Storing the third row fails as a full disk would (a clash on (origin, seq) would not:
        // that change is set aside and the rest applies).
        try p.b.database.execute("""
            CREATE TEMP TRIGGER fail_third BEFORE INSERT ON entries WHEN NEW.id = '\(changes[2].id)'
            BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END
            """)
        #expect(throws: (any Error).self) { try p.b.apply([first, failing], origins: named) }
        #expect(try p.b.liveEntryCount() == 0)
        #expect(try p.b.replicaVector()[origin] == 0)
        #expect(try !p.b.knownOrigins().contains { $0.origin == origin })
        try p.b.database.execute("DROP TRIGGER fail_third")

        let second = (changes: [changes[2]], through: VersionVector([(origin, 3)]))
        let outcomes = try p.b.apply([first, second], origins: named)
        #expect(outcomes.map(\.applied) == [2, 1])
        #expect(try p.b.replicaVector()[origin] == 3)
        #expect(try p.b.knownOrigins().contains { $0.origin == origin && $0.nodeID == p.a.identity.nodeID })
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
    }

    /// What a peer lacks, counted in full or only up to a limit (the node asks "anything?"
    /// after every acknowledgement), across live rows, deletes and origins.
    @Test func pendingCountsWhatAPeerLacksUpToALimit() throws {
        let p = try Self.pair()
        let first = try p.a.add(json: ReplicaFixtures.entryJSON(text: "one"))
        for text in ["two", "three", "four"] { try p.a.add(json: ReplicaFixtures.entryJSON(text: text)) }
        try p.a.delete(id: first.id)
        try p.b.add(json: ReplicaFixtures.entryJSON(text: "from b"))
        _ = try ReplicaFixtures.sync(from: p.b, to: p.a)
        let origin = p.a.identity.incarnation
        #expect(try p.a.pendingCount(above: VersionVector()) == 5)  // three live, one delete, b's entry
        #expect(try p.a.pendingCount(above: VersionVector(), limit: 1) == 1)
        #expect(try p.a.pendingCount(above: VersionVector(), limit: 4) == 4)
        #expect(try p.a.pendingCount(above: VersionVector(), allowed: { $0 == origin }) == 4)
        #expect(try p.a.pendingCount(above: try p.a.replicaVector(), limit: 1) == 0)
        #expect(try p.a.pendingCount(above: VersionVector([(origin, 4)])) == 2)  // the delete (5) and b's entry
    }

    @Test func applyingRestoresFullSyncForLocalWritesEveryTime() throws {
        let p = try Self.pair()
        func setting(_ pragma: String) throws -> Int64? { try p.b.database.firstRow("PRAGMA \(pragma)") { $0.int64(0) } }
        for round in 0..<3 {
            _ = try p.a.add(json: ReplicaFixtures.entryJSON(text: "round \(round)"))
            _ = try ReplicaFixtures.sync(from: p.a, to: p.b)
            #expect(try setting("synchronous") == 2, "synchronous is not FULL after batch \(round + 1)")
            #expect(try setting("wal_autocheckpoint") == 1000)
        }
    }

    @Test func appliedRowsHoldEachColumnsStoredForm() throws {
        let p = try Self.pair()
        let stamp = Timestamp(millisecondsSince1970: t0 + 1234)
        let entries = [
            LogEntry(id: "watch_550e8400-e29b-41d4-a716-446655440000", timestamp: stamp, recordedAt: Timestamp(millisecondsSince1970: t0),
                     source: "watch", deviceId: "watch_0f8fad5b-d9cb-469f-a165-70867728950e", category: "a much longer category name",
                     data: LogData(text: "say \"hi\"\n", metric: Metric(name: "mood", value: 7, scaleMin: 1, scaleMax: 10), tags: ["x"])),
            LogEntry(id: "drafts_6ba7b810-9dad-41d1-80b4-00c04fd430c8", timestamp: Timestamp(millisecondsSince1970: -1), recordedAt: stamp,
                     source: "d", deviceId: "", category: nil, data: LogData()),
        ]
        let origin = "0f8fad5b-d9cb-469f-a165-70867728950e"
        let changes = entries.enumerated().map { i, entry in
            Change(id: entry.id, stamp: VersionStamp(hlc: HLCTimestamp(rawValue: Int64(t0 + 1) << 16), origin: origin, sequence: UInt64(i + 1),
                                                     vector: VersionVector([(origin, UInt64(i + 1)), ("zz", 12_345_678_901)]), deleted: false),
                   entry: entry)
        }
        #expect(try p.b.apply(changes, through: VersionVector([(origin, 2)])).applied == 2)
        for change in changes {
            let entry = try #require(change.entry)
            let row = try #require(try p.b.database.firstRow("""
                SELECT id, timestamp, recorded_at, source, device_id, category, data, created_at, hlc,
                       (SELECT incarnation FROM origins WHERE number = origin_no), origin_seq
                FROM entries WHERE id = ?
                """, [.text(entry.id)]) { row in (0..<11).map { row.isNull($0) ? nil : row.string($0) } })
            let expected: [String?] = [entry.id, entry.timestamp.iso8601, entry.recordedAt.iso8601, entry.source, entry.deviceId,
                                       entry.category, entry.data.json.canonicalText, Timestamp(millisecondsSince1970: t0).iso8601,
                                       String(change.stamp.hlc.rawValue), origin, String(change.stamp.sequence)]
            #expect(row == expected)
            #expect(try p.b.storedVersion(id: entry.id)?.stamp == change.stamp)
        }
    }

    @Test func applyingTheSameChangesTwiceIsIdempotent() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "x"))
        _ = try p.a.update(id: x.id, patch: .object([("category", .string("c"))]))
        _ = try p.a.add(json: ReplicaFixtures.entryJSON(text: "z"))
        let changes = try p.a.changes(after: VersionVector())
        let first = try p.b.apply(changes, through: try p.a.replicaVector())
        let hash = try p.b.canonicalHash()
        let second = try p.b.apply(changes, through: try p.a.replicaVector())
        // Three writes travel: x's creation still decides every field but the category, so it is
        // kept and sent beside the edit (the per-field merge), and z.
        #expect(changes.count == 3)
        #expect(first.applied == 3)
        #expect(second.applied == 0)
        #expect(second.unchanged == 3)
        #expect(first.heldAlready.isEmpty)
        // Each copy is named, for `/metrics` to count copies of one change.
        #expect(second.heldAlready.map { "\($0.origin)#\($0.sequence)" } == changes.map { "\($0.stamp.origin)#\($0.stamp.sequence)" })
        #expect(try p.b.canonicalHash() == hash)
        #expect(hash == (try p.a.canonicalHash()))
    }

    @Test func aReceivedOriginIsKnownAndCanBeNamed() throws {
        let p = try Self.pair()
        _ = try p.a.add(json: ReplicaFixtures.entryJSON(text: "x"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        let learned = try #require(try p.b.knownOrigins().first { $0.origin == p.a.identity.incarnation })
        #expect(learned.sequence == 1)
        try p.b.recordOrigin(p.a.identity.incarnation, nodeID: p.a.identity.nodeID, role: .phone)
        let named = try #require(try p.b.knownOrigins().first { $0.origin == p.a.identity.incarnation })
        #expect(named.nodeID == p.a.identity.nodeID)
        #expect(named.role == .phone)
        #expect(named.sequence == 1)
    }

    /// Both sides edit the same entry without seeing each other's edit; B's clock is later.
    @Test func concurrentUpdatesPickOneWinnerAndKeepTheLoser() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockA.advance(by: 1_000)
        p.clockB.advance(by: 2_000)
        let fromA = try p.a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        let fromB = try p.b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        let stampA = try #require(try p.a.versionStamp(id: x.id))
        let stampB = try #require(try p.b.versionStamp(id: x.id))
        #expect(stampA.hlc < stampB.hlc)

        let toB = try ReplicaFixtures.sync(from: p.a, to: p.b)
        let toA = try ReplicaFixtures.sync(from: p.b, to: p.a)
        #expect(toB.conflicts == 1)
        #expect(toB.applied == 1, "A's losing edit is held (as a conflict), so it travels on")
        #expect(toA.applied == 1)
        #expect(toA.conflicts == 1)
        #expect(try p.a.entry(id: x.id) == fromB)
        #expect(try p.b.entry(id: x.id) == fromB)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        #expect(try p.a.versionStamp(id: x.id)?.vector == (try p.b.versionStamp(id: x.id)?.vector))

        // Both sides keep A's version as the loser: B because it kept its own, A because its own
        // edit was replaced ("keep the local copy as backup").
        for replica in [p.a, p.b] {
            let conflicts = try replica.conflicts()
            #expect(conflicts.count == 1)
            let conflict = try #require(conflicts.first)
            #expect(conflict.entryID == x.id)
            #expect(conflict.loser.origin == p.a.identity.incarnation)
            #expect(conflict.loser.sequence == stampA.sequence)
            #expect(conflict.loser.hlc == stampA.hlc)
            #expect(!conflict.loser.deleted)
            #expect(conflict.loserEntry == fromA)
            #expect(conflict.winner.origin == p.b.identity.incarnation)
            #expect(conflict.winner.sequence == stampB.sequence)
            #expect(conflict.winner.hlc == stampB.hlc)
            #expect(conflict.detectedAt == replica.now)
            #expect(conflict.json()["loser"]?["entry"]?["category"] == .string("a-side"))
            #expect(conflict.json()["entry_id"] == .string(x.id))
        }

        // Syncing again, or re-delivering everything, records nothing new.
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        _ = try p.b.apply(try p.a.changes(after: VersionVector()), through: VersionVector())
        _ = try p.a.apply(try p.b.changes(after: VersionVector()), through: VersionVector())
        _ = try p.b.apply([Change(id: x.id, stamp: stampA, entry: fromA)], through: VersionVector())
        #expect(try p.a.conflicts().count == 1)
        #expect(try p.b.conflicts().count == 1)
        #expect(try p.b.entry(id: x.id) == fromB)
    }

    /// The same concurrent edits delivered the other way round: A hears of B's edit first.
    @Test func concurrentUpdatesDeliveredTheOtherWayRecordTheLoserOnTheLosingSide() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockA.advance(by: 1_000)
        p.clockB.advance(by: 2_000)
        let fromA = try p.a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        let fromB = try p.b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        let toA = try ReplicaFixtures.sync(from: p.b, to: p.a)
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        #expect(toA.conflicts == 1)
        #expect(try p.a.entry(id: x.id) == fromB)
        #expect(try p.b.entry(id: x.id) == fromB)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        let conflict = try #require(try p.a.conflicts().first)
        #expect(conflict.loserEntry == fromA)
        #expect(conflict.loser.origin == p.a.identity.incarnation)
    }

    /// DESIGN.md: "The losing concurrent version is kept in a conflicts table ('keep the local copy
    /// as backup')". When the winner's side hears of the loser first, the winner's row absorbs the
    /// loser's vector; sent back, it dominates the loser's own replica, which then overwrites its
    /// local edit without keeping it.
    @Test func theReplicaWhoseLocalEditLostKeepsItAsBackup() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockA.advance(by: 1_000)
        p.clockB.advance(by: 2_000)
        let fromA = try p.a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        _ = try p.b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        try ReplicaFixtures.sync(from: p.a, to: p.b)  // B keeps its edit, records A's as the loser
        let toA = try ReplicaFixtures.sync(from: p.b, to: p.a)  // A's own edit is replaced here
        #expect(toA.applied == 1)
        #expect(try p.a.entry(id: x.id).category == "b-side")
        #expect(toA.conflicts == 1, "A's local edit was overwritten by a concurrent one without being counted")
        #expect(try p.a.conflicts().contains { $0.loserEntry == fromA },
                "A's conflicts table does not hold A's own overwritten edit")
    }

    /// A write that had seen the stored version is causally later: no conflict may be recorded for it,
    /// even when it reaches a replica through a relay that never saw every version.
    @Test func aRelayedCausallyLaterWriteRecordsNoConflict() throws {
        let clockA = ManualClock(milliseconds: t0), clockB = ManualClock(milliseconds: t0), clockD = ManualClock(milliseconds: t0)
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA)
        let b = try ReplicaFixtures.replica(role: .mac, seed: 2, clock: clockB)
        let d = try ReplicaFixtures.replica(role: .watch, seed: 3, clock: clockD)
        let x = try a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: a, to: b)
        try ReplicaFixtures.sync(from: a, to: d)
        clockA.advance(by: 1_000)
        clockB.advance(by: 2_000)
        _ = try a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        _ = try b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        let genuine = try ReplicaFixtures.sync(from: b, to: a)  // a real conflict: A's edit loses
        #expect(genuine.conflicts == 1)
        try ReplicaFixtures.sync(from: b, to: d)
        try ReplicaFixtures.sync(from: a, to: d)
        // D edits the version it holds (B's), after seeing it.
        clockD.advance(by: 3_000)
        let fromD = try d.update(id: x.id, patch: .object([("category", .string("d-side"))]))
        let stampD = try #require(try d.versionStamp(id: x.id))
        #expect(stampD.vector[b.identity.incarnation] == 1)  // D had seen B's edit
        let outcome = try ReplicaFixtures.sync(from: d, to: a)
        #expect(try a.entry(id: x.id) == fromD)
        #expect(outcome.conflicts == 0, "B's version was superseded by D's causally later edit, not concurrent with it")
        // D held A's losing edit too (losers travel), so its edit of the category had seen both
        // sides: it settles that conflict wherever it arrives (PROTOCOL.md §8).
        let losers = try a.conflicts().map(\.loser.origin)
        #expect(losers.isEmpty, "conflicts on A: \(losers)")
        #expect(try d.conflicts().isEmpty)
    }

    @Test func equalClocksAreBrokenByOriginTheSameWayEverywhere() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        // Neither clock moves: both updates get the same HLC.
        _ = try p.a.update(id: x.id, patch: .object([("category", .string("a-side"))]))
        _ = try p.b.update(id: x.id, patch: .object([("category", .string("b-side"))]))
        let stampA = try #require(try p.a.versionStamp(id: x.id)), stampB = try #require(try p.b.versionStamp(id: x.id))
        #expect(stampA.hlc == stampB.hlc)
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        let expected = p.a.identity.incarnation > p.b.identity.incarnation ? "a-side" : "b-side"
        #expect(try p.a.entry(id: x.id).category == expected)
        #expect(try p.b.entry(id: x.id).category == expected)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        #expect(try p.b.conflicts().count == 1)
        #expect(try p.b.conflicts().first?.loser.hlc == stampA.hlc)
    }

    @Test func aLaterConcurrentUpdateBeatsADelete() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockB.advance(by: 5_000)
        try p.a.delete(id: x.id)
        let kept = try p.b.update(id: x.id, patch: .object([("category", .string("kept"))]))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        #expect(try p.a.entry(id: x.id) == kept)
        #expect(try p.b.entry(id: x.id) == kept)
        #expect(try p.a.tombstoneCount() == 0)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
        let conflict = try #require(try p.b.conflicts().first)
        #expect(conflict.loser.deleted)
        #expect(conflict.loserEntry == nil)
        #expect(conflict.json()["loser"]?["entry"] == .null)
    }

    @Test func aLaterConcurrentDeleteBeatsAnUpdateAndKeepsIt() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        p.clockB.advance(by: 5_000)
        let lost = try p.a.update(id: x.id, patch: .object([("category", .string("lost"))]))
        try p.b.delete(id: x.id)
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        try ReplicaFixtures.sync(from: p.b, to: p.a)
        for replica in [p.a, p.b] {
            #expect(throws: ReplicaError.notFound(id: x.id)) { try replica.entry(id: x.id) }
            #expect(try replica.tombstoneCount() == 1)
            #expect(try replica.liveEntryCount() == 0)
            #expect(try replica.versionStamp(id: x.id)?.deleted == true)
        }
        let conflict = try #require(try p.b.conflicts().first)
        #expect(conflict.loserEntry == lost)
        #expect(conflict.winner.deleted)
        #expect(!conflict.loser.deleted)
        #expect(try p.a.canonicalHash() == (try p.b.canonicalHash()))
    }

    @Test func aCausallyLaterUpdateWinsWithoutAConflict() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "original"))
        try ReplicaFixtures.sync(from: p.a, to: p.b)
        let later = try p.b.update(id: x.id, patch: .object([("category", .string("later"))]))
        let outcome = try ReplicaFixtures.sync(from: p.b, to: p.a)
        #expect(outcome.applied == 1)
        #expect(outcome.conflicts == 0)
        #expect(try p.a.entry(id: x.id) == later)
        #expect(try p.a.conflicts().isEmpty)
        let stamp = try #require(try p.a.versionStamp(id: x.id))
        #expect(stamp.vector == VersionVector([(p.a.identity.incarnation, 1), (p.b.identity.incarnation, 1)]))
    }

    @Test func aStampFarInTheFutureIsCountedAsSkew() throws {
        let clockA = ManualClock(milliseconds: t0 + 86_400_000)  // a day ahead
        let a = try ReplicaFixtures.replica(role: .phone, seed: 1, clock: clockA)
        let b = try ReplicaFixtures.replica(role: .mac, seed: 2)
        _ = try a.add(json: ReplicaFixtures.entryJSON(text: "from the future"))
        let outcome = try ReplicaFixtures.sync(from: a, to: b)
        #expect(outcome.applied == 1)
        #expect(outcome.clockSkewed == 1)
        // B's own next write is stamped near its own clock, not a day ahead.
        let mine = try b.add(json: ReplicaFixtures.entryJSON(text: "mine"))
        let stamp = try #require(try b.versionStamp(id: mine.id))
        #expect(stamp.hlc.milliseconds <= t0 + HybridLogicalClock.defaultMaximumDrift + 1)
    }

    @Test func canonicalDumpListsLiveEntriesAndTombstonesInIDOrder() throws {
        let p = try Self.pair()
        let x = try p.a.add(json: ReplicaFixtures.entryJSON(text: "x"))
        let y = try p.a.add(json: ReplicaFixtures.entryJSON(text: "y"))
        try p.a.delete(id: y.id)
        let lines = try p.a.canonicalDump().split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.contains { $0.hasPrefix("E ") && $0.contains(x.id) })
        #expect(lines.contains { $0.hasPrefix("T ") && $0.hasSuffix(y.id) })
        #expect(try p.a.canonicalHash().count == 64)
        #expect(try p.a.canonicalHash() != (try p.b.canonicalHash()))
    }
}
