import Testing
@testable import LifeSync

/// The per-field merge's algebra over random causal histories (`FieldMergeHistory`): a replica
/// that folds writes in one at a time, keeping only what the merge keeps, ends where the merge of
/// the whole set ends, in any order, with duplicates, in any grouping; causality beats clocks per
/// field; and no field value a write changed disappears without being superseded or reported.
@Suite struct FieldMergePropertyTests {
    static let seeds: ClosedRange<UInt64> = 1...150

    /// What replicas compare: the row, the entry as it reads, the writes kept beside it.
    struct Outcome: Equatable, CustomStringConvertible {
        var latest: EntryWrite
        var content: LogEntry?
        var kept: [EntryWrite]

        init(_ result: FieldMergeResult) { (latest, content, kept) = (result.latest, result.content, result.kept) }

        var description: String {
            let name = { (w: EntryWrite) in "\(w.stamp.origin)#\(w.stamp.sequence)" }
            return "latest \(name(latest)) kept \(kept.map(name)) text \(content?.data.text ?? "<deleted>")"
        }
    }

    /// What a replica holds after taking `stream` in one at a time: the last result, and every
    /// loss a step reported (each step writes its losses to the conflicts table).
    static func fold(_ stream: [EntryWrite], from start: [EntryWrite] = []) -> (result: FieldMergeResult, losses: [FieldLoss]) {
        var held = start
        var result: FieldMergeResult?
        var losses: [FieldLoss] = []
        for write in stream {
            let step = FieldMerge.merge(held + [write])
            losses += step.losses
            held = step.kept + [step.latest]
            result = step
        }
        return (result!, losses)
    }

    static func held(_ result: FieldMergeResult) -> [EntryWrite] { result.kept + [result.latest] }

    static func history(_ seed: UInt64) -> FieldMergeHistory {
        let random = SeededRandom(seed: seed)
        return FieldMergeHistory(random: random, steps: 6 + Int(random.next(below: 11)))
    }

    // MARK: - Order, grouping, repetition

    @Test func foldingInAnyOrderWithDuplicatesEqualsMergingTheSet() {
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            let whole = Outcome(FieldMerge.merge(writes))
            let random = SeededRandom(seed: seed).derive("order")
            for round in 0..<4 {
                var stream = random.shuffled(writes)
                // Re-deliveries: some writes again, at random later places.
                for write in writes where random.next(below: 4) == 0 {
                    stream.insert(write, at: Int(random.next(below: UInt64(stream.count + 1))))
                }
                let folded = Outcome(Self.fold(stream).result)
                #expect(folded == whole, "seed \(seed) round \(round): folded \(folded) vs whole \(whole)")
            }
            #expect(Outcome(FieldMerge.merge(random.shuffled(writes + writes))) == whole, "seed \(seed): duplicates in one merge")
        }
    }

    @Test func mergingTheResultsOfTwoHalvesEqualsMergingTheWhole() {
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            let whole = Outcome(FieldMerge.merge(writes))
            let random = SeededRandom(seed: seed).derive("halves")
            for round in 0..<3 {
                // Two replicas that each received part (overlapping at times), then synced.
                let (left, right) = (writes.filter { _ in random.next(below: 3) != 0 }, writes.filter { _ in random.next(below: 3) != 0 })
                guard !left.isEmpty, !right.isEmpty else { continue }
                let covered = writes.filter { w in (left + right).contains { $0.stamp.isSameWrite(as: w.stamp) } }
                let expected = Outcome(FieldMerge.merge(covered))
                let l = Self.fold(random.shuffled(left)).result, r = Self.fold(random.shuffled(right)).result
                #expect(Outcome(FieldMerge.merge(Self.held(l) + Self.held(r))) == expected, "seed \(seed) round \(round)")
                // Folding one side's held writes into the other's state is the same sync.
                #expect(Outcome(Self.fold(Self.held(r), from: Self.held(l)).result) == expected, "seed \(seed) round \(round): folded sync")
            }
            // (a ∪ b) ∪ c = a ∪ (b ∪ c) over three thirds.
            let thirds = (0..<3).map { k in writes.enumerated().filter { $0.offset % 3 == k }.map(\.element) }
            guard thirds.allSatisfy({ !$0.isEmpty }) else { continue }
            let parts = thirds.map { Self.held(FieldMerge.merge($0)) }
            let leftFirst = FieldMerge.merge(Self.held(FieldMerge.merge(parts[0] + parts[1])) + parts[2])
            let rightFirst = FieldMerge.merge(parts[0] + Self.held(FieldMerge.merge(parts[1] + parts[2])))
            #expect(Outcome(leftFirst) == whole && Outcome(rightFirst) == whole, "seed \(seed): thirds")
        }
    }

    @Test func mergingAResultAgainChangesNothing() {
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            let result = FieldMerge.merge(writes)
            let again = FieldMerge.merge(Self.held(result))
            #expect(Outcome(again) == Outcome(result), "seed \(seed)")
            for write in writes {
                #expect(Outcome(FieldMerge.merge(Self.held(result) + [write])) == Outcome(result), "seed \(seed): \(write.stamp.origin)#\(write.stamp.sequence) again")
            }
        }
    }

    // MARK: - Causality, losses, deletes

    @Test func aCausallyLaterWriteOfAFieldWinsIt() {
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            let result = FieldMerge.merge(writes)
            guard let content = result.content else { continue }
            let floor = writes.filter { $0.entry == nil }.max { $0.stamp.precedes($1.stamp) }
            let counted = writes.filter { w in w.entry != nil && (floor.map { $0.stamp.precedes(w.stamp) } ?? true) }
            for field in FieldMergeHistory.everyField {
                guard let winner = result.winner(of: field) else { Issue.record("seed \(seed): no winner of \(field.name)"); continue }
                for write in writes where write.entry != nil && write.fields.contains(field) && !write.stamp.isSameWrite(as: winner) {
                    #expect(!write.stamp.hasSeen(winner), "seed \(seed): \(field.name) won by a write \(write.stamp.origin)#\(write.stamp.sequence) had already replaced")
                }
                // The value is that of the greatest counted write that changed it.
                let expected = counted.filter { $0.fields.contains(field) }.max { $0.stamp.precedes($1.stamp) } ?? result.latest
                #expect(winner.isSameWrite(as: expected.stamp), "seed \(seed): \(field.name)")
                #expect(content.hasSameValue(as: expected.entry!, in: field), "seed \(seed): \(field.name) value")
            }
        }
    }

    @Test func everyLostFieldValueIsSupersededOrReported() {
        var reported = 0
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            let whole = FieldMerge.merge(writes)
            // The whole set at once reports every loss the set holds.
            let missing = Self.unaccounted(writes, whole, losses: whole.losses, chains: false)
            #expect(missing.isEmpty, "seed \(seed), merged whole: \(missing)")
            // A replica folding writes in with pruning drops a write once a greater one beat it
            // everywhere; the loss was then taken where it was seen, or reported in a step.
            let random = SeededRandom(seed: seed).derive("losses")
            for round in 0..<2 {
                let (result, losses) = Self.fold(random.shuffled(writes))
                let dropped = Self.unaccounted(writes, result, losses: losses, chains: true)
                #expect(dropped.isEmpty, "seed \(seed) round \(round), folded: \(dropped)")
            }
            reported += whole.losses.count
        }
        #expect(reported > Self.seeds.count / 2, "the histories hold concurrent writes of the same fields")
    }

    @Test func theEntryIsDeletedExactlyWhenItsGreatestDeleteIsAboveItsGreatestWrite() {
        var deleted = 0, outlived = 0
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            let result = FieldMerge.merge(writes)
            let greatestDelete = writes.filter { $0.entry == nil }.max { $0.stamp.precedes($1.stamp) }
            let greatestLive = writes.filter { $0.entry != nil }.max { $0.stamp.precedes($1.stamp) }
            let expectDeleted = greatestDelete.map { d in greatestLive.map { $0.stamp.precedes(d.stamp) } ?? true } ?? false
            #expect((result.content == nil) == expectDeleted, "seed \(seed)")
            if expectDeleted {
                #expect(result.latest.stamp.isSameWrite(as: greatestDelete!.stamp), "seed \(seed)")
                // What a deleted entry keeps: its conflicts (what the delete had not seen), its other
                // deletes, and the resolutions that may have decided them.
                #expect(result.kept.allSatisfy { write in
                    result.losses.contains { $0.loser.stamp.isSameWrite(as: write.stamp) } || write.entry == nil
                        || FieldMerge.isResolution(write)
                }, "seed \(seed)")
                #expect(result.losses.allSatisfy { !greatestDelete!.stamp.hasSeen($0.loser.stamp) }, "seed \(seed)")
                deleted += 1
            } else if let greatestDelete {
                #expect(result.floor?.stamp.isSameWrite(as: greatestDelete.stamp) == true, "seed \(seed): the floor is kept")
                outlived += 1
            }
        }
        #expect(deleted > 5 && outlived > 5, "both outcomes occur (\(deleted) deleted, \(outlived) outlived a delete)")
    }

    /// The properties must be able to fail: a replica that kept only the latest write (the
    /// whole-entry rule's state) loses fields other writes won, and the fold check sees it.
    @Test func foldingWithoutTheKeptWritesIsCaught() {
        var caught = 0
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            var latest: EntryWrite?
            for write in writes { latest = FieldMerge.merge((latest.map { [$0] } ?? []) + [write]).latest }
            let lossy = FieldMerge.merge([latest!])
            if lossy.content != FieldMerge.merge(writes).content { caught += 1 }
        }
        #expect(caught > Self.seeds.count / 4, "caught in \(caught) histories")
    }

    /// The loss check must be able to fail: a replica that reported no losses is caught.
    @Test func unreportedLossesAreCaught() {
        var caught = 0
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            if !Self.unaccounted(writes, FieldMerge.merge(writes), losses: [], chains: true).isEmpty { caught += 1 }
        }
        #expect(caught > Self.seeds.count / 4, "caught in \(caught) histories")
    }

    /// Two concurrent edits of different fields that together pass the encoded-size bound: the
    /// greatest write stands whole. The text the other edit set is then gone from the entry, so
    /// it is a loss to report, and `winner(of:)` must name the write whose text stands.
    @Test func anOversizedMergeReportsTheFieldTheGreatestWriteOverrode() {
        let base = FieldMergeHistory.fresh(tag: 0)
        func write(_ origin: String, _ hlc: Int64, _ vector: [(String, UInt64)], _ fields: [EntryField], _ entry: LogEntry) -> EntryWrite {
            EntryWrite(stamp: VersionStamp(hlc: HLCTimestamp(rawValue: hlc), origin: origin, sequence: 1, vector: VersionVector(vector), deleted: false),
                       fields: FieldMask(fields), entry: entry)
        }
        var long = base, wide = base
        long.data.text = String(repeating: "a", count: 150_000)
        wide.data.tags = [String(repeating: "b", count: 150_000)]
        let create = write("o0", 10, [("o0", 1)], EntryField.standard, base)
        let text = write("o1", 20, [("o0", 1), ("o1", 1)], [.text], long)
        let tags = write("o2", 30, [("o0", 1), ("o2", 1)], [.tags], wide)
        let result = FieldMerge.merge([create, text, tags])
        #expect(result.content == wide, "the greatest write stands whole")
        #expect(result.standsWhole)
        #expect(result.winner(of: .text)?.isSameWrite(as: tags.stamp) == true, "the text that stands is the greatest write's")
        #expect(result.losses.contains { $0.loser.stamp.isSameWrite(as: text.stamp) && $0.fields?.contains(.text) != false },
                "o1's text is gone from the entry, and reported")
    }

    /// The histories are what the properties need: concurrency, equal HLCs across origins.
    @Test func theHistoriesHoldConcurrentWritesAndEqualClocks() {
        var concurrent = 0, equalClocks = 0
        for seed in Self.seeds {
            let writes = Self.history(seed).writes
            let pairs = writes.indices.flatMap { i in writes.indices.filter { $0 > i }.map { (writes[i].stamp, writes[$0].stamp) } }
            if pairs.contains(where: { !$0.hasSeen($1) && !$1.hasSeen($0) }) { concurrent += 1 }
            if pairs.contains(where: { $0.hlc == $1.hlc && $0.origin != $1.origin }) { equalClocks += 1 }
            // Every write is stamped above everything its writer had seen.
            for (a, b) in pairs where b.hasSeen(a) { #expect(a.precedes(b), "seed \(seed)") }
        }
        #expect(concurrent > Self.seeds.count * 3 / 4 && equalClocks > Self.seeds.count / 10, "\(concurrent) concurrent, \(equalClocks) equal clocks")
    }

    /// The writes of `writes` whose changed value of some field is gone from `result` without
    /// the winner having seen it, the latest having seen both sides, or a report in `losses`.
    ///
    /// With `chains` (a replica that pruned as it went), a value is also accounted for when some
    /// writer had seen it beaten in that field by a greater write (that writer's replica took the
    /// loss; the greater write is checked against the winner in turn), or, for a write lost
    /// whole, when some later writer had seen it.
    static func unaccounted(_ writes: [EntryWrite], _ result: FieldMergeResult, losses: [FieldLoss], chains: Bool) -> [String] {
        let latest = result.latest.stamp
        func reported(_ write: EntryWrite, _ field: EntryField?) -> Bool {
            let mine = losses.filter { $0.loser.stamp.isSameWrite(as: write.stamp) }
            if mine.contains(where: { $0.fields == nil }) { return true }
            let lost = mine.reduce(FieldMask.none) { $0.union($1.fields!) }
            return field.map { lost.contains($0) } ?? write.fields.isSubset(of: lost)
        }
        func beatenWhereSeen(_ write: EntryWrite, _ field: EntryField?) -> Bool {
            chains && writes.contains { beater in
                (field.map { beater.fields.contains($0) && write.stamp.precedes(beater.stamp) } ?? beater.stamp.hasSeen(write.stamp))
                    && writes.contains { $0.stamp.hasSeen(write.stamp) && $0.stamp.hasSeen(beater.stamp) }
                    && !beater.stamp.isSameWrite(as: write.stamp)
            }
        }
        var missing: [String] = []
        // Answered: a write that had the value in view decided after it. For a field, another
        // write of that field that counts; for a whole edit, any other write; for a delete, a
        // later delete or a resolution (PROTOCOL.md §8).
        let floor = result.floor
        func answered(_ write: EntryWrite, _ field: EntryField?) -> Bool {
            let seenBy = writes.filter { !$0.stamp.isSameWrite(as: write.stamp) && $0.stamp.hasSeen(write.stamp) }
            func chosen(_ field: EntryField) -> Bool {
                seenBy.contains { other in other.entry != nil && other.fields.contains(field) && (floor.map { $0.stamp.precedes(other.stamp) } ?? true) }
            }
            if let field { return chosen(field) }
            if write.entry == nil { return seenBy.contains { $0.entry == nil || $0.fields == .all } }
            return seenBy.contains { $0.entry == nil } || write.fields.fields(among: FieldMergeHistory.extraMembers).allSatisfy { field in seenBy.contains { $0.entry != nil && $0.fields.contains(field) } }
        }
        func check(_ write: EntryWrite, _ field: EntryField?, against winner: VersionStamp) {
            guard !winner.hasSeen(write.stamp), !answered(write, field), !reported(write, field), !beatenWhereSeen(write, field) else { return }
            missing.append("\(write.stamp.origin)#\(write.stamp.sequence) \(field?.name ?? "whole") lost to \(winner.origin)#\(winner.sequence)")
        }
        for write in writes where !write.stamp.isSameWrite(as: latest) {
            guard result.content != nil else { check(write, nil, against: latest); continue }
            if write.entry == nil {
                check(write, nil, against: latest)
            } else if let floor = result.floor, write.stamp.precedes(floor.stamp) {
                check(write, nil, against: floor.stamp)
            } else {
                for field in write.fields.fields(among: FieldMergeHistory.extraMembers) {
                    let winner = result.winner(of: field)!
                    if !winner.isSameWrite(as: write.stamp) { check(write, field, against: winner) }
                }
            }
        }
        return missing
    }
}
