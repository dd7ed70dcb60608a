import LifeSync
import Testing
import TestSupport

// MARK: - Merge.decide on hand-made stamps

@Suite struct MergeDecideTests {
    private func stamp(_ ms: Int64, _ origin: String, _ sequence: UInt64, _ vector: [(String, UInt64)],
                       counter: Int = 0, deleted: Bool = false) -> VersionStamp {
        VersionStamp(hlc: HLCTimestamp(milliseconds: ms, counter: counter), origin: origin, sequence: sequence,
                     vector: VersionVector(vector), deleted: deleted)
    }

    @Test func theSameWriteIsIdentical() {
        let a = stamp(100, "a", 1, [("a", 1)])
        #expect(Merge.decide(local: a, remote: a) == .identical)
        // The same write, however it is labelled otherwise, is still the same write.
        let other = stamp(100, "a", 1, [("a", 1), ("b", 3)])
        #expect(Merge.decide(local: a, remote: other) == .identical)
        #expect(Merge.decide(local: other, remote: a) == .identical)
    }

    @Test func aRemoteWriteThatHadSeenTheLocalOneWinsWithoutConflict() {
        let local = stamp(100, "a", 1, [("a", 1)])
        let remote = stamp(200, "b", 1, [("a", 1), ("b", 1)])
        #expect(Merge.decide(local: local, remote: remote) == .takeRemote(conflict: false))
        #expect(Merge.decide(local: remote, remote: local) == .keepLocal(conflict: false))
    }

    @Test func concurrentWritesGoByHLCAndAreConflicts() {
        let local = stamp(100, "a", 2, [("a", 2)])
        let remote = stamp(150, "b", 1, [("a", 1), ("b", 1)])  // had seen a#1, not a#2
        #expect(Merge.decide(local: local, remote: remote) == .takeRemote(conflict: true))
        #expect(Merge.decide(local: remote, remote: local) == .keepLocal(conflict: true))
    }

    @Test func theCounterOrdersStampsInTheSameMillisecond() {
        let local = stamp(100, "a", 1, [("a", 1)], counter: 2)
        let remote = stamp(100, "b", 1, [("b", 1)], counter: 1)
        #expect(Merge.decide(local: local, remote: remote) == .keepLocal(conflict: true))
        #expect(Merge.decide(local: remote, remote: local) == .takeRemote(conflict: true))
    }

    @Test func equalHLCsAreBrokenByOriginThenSequence() {
        let low = stamp(100, "aaa", 1, [("aaa", 1)])
        let high = stamp(100, "bbb", 1, [("bbb", 1)])
        #expect(Merge.decide(local: low, remote: high) == .takeRemote(conflict: true))
        #expect(Merge.decide(local: high, remote: low) == .keepLocal(conflict: true))
        // Same HLC and origin (two writes of one origin): the later sequence wins, and had seen the earlier.
        let first = stamp(100, "o", 3, [("o", 3)]), second = stamp(100, "o", 5, [("o", 5)])
        #expect(Merge.decide(local: first, remote: second) == .takeRemote(conflict: false))
        #expect(Merge.decide(local: second, remote: first) == .keepLocal(conflict: false))
    }

    @Test func deletesFollowTheSameRules() {
        let live = stamp(100, "a", 1, [("a", 1)])
        let laterDelete = stamp(200, "b", 1, [("b", 1)], deleted: true)
        #expect(Merge.decide(local: live, remote: laterDelete) == .takeRemote(conflict: true))
        #expect(Merge.decide(local: laterDelete, remote: live) == .keepLocal(conflict: true))
        let earlierDelete = stamp(50, "b", 1, [("b", 1)], deleted: true)
        #expect(Merge.decide(local: live, remote: earlierDelete) == .keepLocal(conflict: true))
        // A tie between a delete and an update is broken like any other tie.
        let tiedDelete = stamp(100, "b", 1, [("b", 1)], deleted: true)
        #expect(Merge.decide(local: live, remote: tiedDelete) == .takeRemote(conflict: true))
        #expect(Merge.decide(local: tiedDelete, remote: live) == .keepLocal(conflict: true))
        // A delete that had seen the update wins without conflict.
        let causalDelete = stamp(101, "b", 1, [("a", 1), ("b", 1)], deleted: true)
        #expect(Merge.decide(local: live, remote: causalDelete) == .takeRemote(conflict: false))
        #expect(Merge.decide(local: causalDelete, remote: live) == .keepLocal(conflict: false))
    }

    /// Random stamps of a few writes: each write (origin, sequence) has one HLC, one delete flag and
    /// one causal context that includes the write itself.
    @Test func decideIsCommutativeAssociativeAndIdempotent() {
        let random = SeededRandom(seed: 4242)
        let origins = ["a", "b", "c"]
        var writes: [String: VersionStamp] = [:]
        func randomStamp() -> VersionStamp {
            let origin = origins[Int(random.next(below: 3))]
            let sequence = 1 + random.next(below: 4)
            let key = "\(origin)#\(sequence)"
            if let known = writes[key] { return known }
            var vector = VersionVector()
            for o in origins where random.next(below: 2) == 0 { vector[o] = 1 + random.next(below: 4) }
            vector[origin] = sequence
            let stamp = VersionStamp(hlc: HLCTimestamp(milliseconds: 100 + Int64(random.next(below: 3)), counter: Int(random.next(below: 2))),
                                     origin: origin, sequence: sequence, vector: vector, deleted: random.next(below: 4) == 0)
            writes[key] = stamp
            return stamp
        }
        func hasSeen(_ x: VersionStamp, _ y: VersionStamp) -> Bool { x.vector[y.origin] >= y.sequence }
        /// The version a replica holds after merging `remote` into `local`.
        func merged(_ local: VersionStamp, _ remote: VersionStamp) -> VersionStamp {
            switch Merge.decide(local: local, remote: remote) {
            case .identical, .keepLocal: return local
            case .takeRemote: return remote
            }
        }

        for _ in 0..<3_000 {
            let a = randomStamp(), b = randomStamp(), c = randomStamp()
            #expect(Merge.decide(local: a, remote: a) == .identical)
            let ab = Merge.decide(local: a, remote: b), ba = Merge.decide(local: b, remote: a)
            switch (ab, ba) {
            case (.identical, .identical):
                #expect(sameWrite(a, b))
            case let (.takeRemote(c1), .keepLocal(c2)), let (.keepLocal(c1), .takeRemote(c2)):
                #expect(!sameWrite(a, b))
                #expect(c1 == c2)
                // The loser is a conflict exactly when the winner's writer had not seen it.
                let (winner, loser) = lwwLess(a, b) ? (b, a) : (a, b)
                #expect(c1 == !hasSeen(winner, loser), "\(winner) over \(loser)")
            default:
                Issue.record("not commutative: \(a) vs \(b): \(ab) / \(ba)")
            }
            // The winner is the LWW maximum.
            if !sameWrite(a, b) {
                #expect(sameWrite(merged(a, b), lwwLess(a, b) ? b : a))
            }
            // Idempotent: merging a version in again changes nothing.
            let m = merged(a, b)
            #expect(merged(m, b) == m)
            #expect(merged(m, a) == m)
            #expect(merged(m, m) == m)
            // Associative.
            #expect(merged(merged(a, b), c) == merged(a, merged(b, c)), "\(a) \(b) \(c)")
            #expect(merged(merged(a, b), c) == merged(merged(c, a), b))
        }
    }
}
