import LifeSync

/// Merge outcomes (§8). Concurrency needs two writers: the runner writes under two origins of
/// its own (`pair`: two incarnations of its node, each version's vector naming only itself, so
/// neither has seen the other), pushes both versions of one entry, and reads back which one the target
/// kept. Stamps are chosen so the spec predicts the winner: by HLC, or, at equal HLCs and equal
/// vector weights, by origin bytes.
extension ConformanceCases {
    /// Pushes `first` then `second` (two versions of one entry) in two batches and returns the
    /// version the target holds afterwards.
    static func merged(_ target: ConformanceTarget, _ first: EncodedChange, _ second: EncodedChange) throws -> Change {
        precondition(first.id == second.id, "two versions of one entry")
        // Each origin read back from below the version written under it.
        let since = [first.stamp.origin: first.stamp.sequence - 1, second.stamp.origin: second.stamp.sequence - 1]
        try target.pushAll([[first], [second]])
        guard let winner = try target.current(first.id, since: since) else {
            throw ConformanceFailure("\(first.id) is missing from the read-back after both versions were acknowledged")
        }
        return winner
    }

    static func expectWinner(_ winner: Change, _ expected: EncodedChange, _ rule: String) throws {
        guard winner.stamp.origin == expected.stamp.origin, winner.stamp.sequence == expected.stamp.sequence else {
            throw ConformanceFailure("the target kept \(winner.stamp.origin):\(winner.stamp.sequence) (hlc \(winner.stamp.hlc.rawValue)\(winner.stamp.deleted ? ", deleted" : "")); "
                                     + "\(rule) makes \(expected.stamp.origin):\(expected.stamp.sequence) (hlc \(expected.stamp.hlc.rawValue)\(expected.stamp.deleted ? ", deleted" : "")) the winner")
        }
    }

    static let merge: [ConformanceCase] = [
        ConformanceCase("8", "merge.greater-hlc-wins", "of two concurrent versions the greater HLC wins, whatever the origins and the order of arrival") { target in
            try target.requireReceivesEntries()
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends back no other node's writes to read (§7.3)") }
            let origins = target.pair
            let base = target.now
            for (low, high) in [(origins[1], origins[0]), (origins[0], origins[1])] {
                let id = target.newEntryID(), sequence = target.pairSequence()
                let older = target.change(id: id, origin: low, sequence: sequence, hlc: base, text: "older")
                let newer = target.change(id: id, origin: high, sequence: sequence, hlc: HLCTimestamp(rawValue: base.rawValue + 1), text: "newer")
                try expectWinner(try merged(target, newer, older), newer, "the greater HLC (§8)")
            }
            return .pass(nil)
        },
        ConformanceCase("8", "merge.equal-hlc-origin-tiebreak", "of two concurrent versions with equal HLCs and vector weights the greater origin wins, in either order of arrival") { target in
            try target.requireReceivesEntries()
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends back no other node's writes to read (§7.3)") }
            let origins = target.pair
            let hlc = target.now
            for order in [false, true] {
                let id = target.newEntryID(), sequence = target.pairSequence()
                let small = target.change(id: id, origin: origins[0], sequence: sequence, hlc: hlc, text: "smaller origin")
                let great = target.change(id: id, origin: origins[1], sequence: sequence, hlc: hlc, text: "greater origin")
                let winner = order ? try merged(target, great, small) : try merged(target, small, great)
                try expectWinner(winner, great, "at equal HLC and weight the greater origin by bytes (§8)")
            }
            return .pass(nil)
        },
        ConformanceCase("8", "merge.delete-vs-update", "a delete and a concurrent update merge by the same order: the greater stamp wins, tombstone or not") { target in
            try target.requireReceivesEntries()
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends back no other node's writes to read (§7.3)") }
            let origins = target.pair
            let base = target.now
            let later = HLCTimestamp(rawValue: base.rawValue + 1)
            // The delete is later: the entry ends deleted.
            let first = target.newEntryID(), one = target.pairSequence()
            let update = target.change(id: first, origin: origins[1], sequence: one, hlc: base, text: "update")
            let delete = target.change(id: first, origin: origins[0], sequence: one, hlc: later, deleted: true)
            try expectWinner(try merged(target, update, delete), delete, "the later delete (§8: deletes merge by the same rule)")
            // The update is later: a delete can lose.
            let second = target.newEntryID(), two = target.pairSequence()
            let earlyDelete = target.change(id: second, origin: origins[1], sequence: two, hlc: base, deleted: true)
            let lateUpdate = target.change(id: second, origin: origins[0], sequence: two, hlc: later, text: "update after")
            try expectWinner(try merged(target, earlyDelete, lateUpdate), lateUpdate, "the later update (§8: a delete can lose)")
            return .pass(nil)
        },
        ConformanceCase("8", "merge.causal-successor-wins", "a version that has seen the other (its vector covers it) and is stamped above it replaces it") { target in
            try target.requireReceivesEntries()
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends back no other node's writes to read (§7.3)") }
            let origins = target.pair
            let base = target.now
            let id = target.newEntryID(), sequence = target.pairSequence()
            // The first version from the greater origin; the edit from the smaller one has seen it.
            let original = target.change(id: id, origin: origins[1], sequence: sequence, hlc: base, text: "original")
            let edit = target.change(id: id, origin: origins[0], sequence: sequence, hlc: HLCTimestamp(rawValue: base.rawValue + 1),
                                     seen: VersionVector([(origins[1], sequence)]), text: "edit")
            try expectWinner(try merged(target, original, edit), edit, "the edit, stamped above the version it replaces (§8)")
            return .pass(nil)
        },
    ]
}
