import LifeSync
import Testing
import TestSupport

private let t0 = ReplicaFixtures.epoch

// MARK: - Random histories

@Suite struct MergePropertyTests {
    static let seeds: [UInt64] = Array(1...60)

    @Test func randomHistoriesConverge() throws {
        var totalWrites = 0, totalConflicts = 0, fieldMerged = 0
        for seed in Self.seeds {
            let random = SeededRandom(seed: seed)
            let cluster = try Cluster(seed: seed, count: 3 + Int(random.next(below: 3)), poolSize: 4 + Int(random.next(below: 5)),
                                      skew: seed % 3 == 0 ? 120_000 : 2_000)
            let steps = 40 + Int(random.next(below: 31))
            for _ in 0..<steps {
                cluster.tickClocks()
                if cluster.chance(55) {
                    try cluster.randomWrite(on: Int(cluster.random.next(below: UInt64(cluster.replicas.count))))
                } else {
                    try cluster.randomSync()
                }
            }
            try cluster.quiesce()
            try checkConverged(cluster, seed: seed)

            // Idempotence: more syncs and re-delivered duplicates change nothing.
            let before = try cluster.hashes()
            #expect(try cluster.quiesce() == 1, "seed \(seed)")
            let everything = try cluster.replicas[0].changes(after: VersionVector())
            let outcome = try cluster.replicas[1].apply(everything + everything, through: VersionVector())
            #expect(outcome.applied == 0, "seed \(seed)")
            #expect(try cluster.hashes() == before, "seed \(seed)")

            // Entries that read as neither side alone: an edit of another field survived.
            fieldMerged += cluster.writes.values.filter { writes in
                FieldMerge.merge(fieldWrites(writes)).content != writes.max { lwwLess($0.stamp, $1.stamp) }!.entry
            }.count
            totalWrites += cluster.writes.values.map(\.count).reduce(0, +)
            totalConflicts += try cluster.replicas.map { try $0.conflicts().count }.reduce(0, +)
        }
        // The histories are not trivial: plenty of writes, and concurrent ones among them.
        #expect(totalWrites > 60 * 10)
        #expect(totalConflicts > 20)
        #expect(fieldMerged > 10, "\(fieldMerged) entries merged fields of concurrent writes")
    }

    /// The checker itself must be able to fail: a write that never reached the others is caught.
    @Test func theConvergenceCheckDetectsAnUndeliveredWrite() throws {
        let cluster = try Cluster(seed: 999, count: 3, poolSize: 3)
        for _ in 0..<10 { try cluster.randomWrite(on: 0) }
        try cluster.quiesce()
        try checkConverged(cluster, seed: 999)
        // One more write on replica 2, never synced.
        #expect(try cluster.randomWrite(on: 2))
        let found = try convergenceViolations(cluster, seed: 999)
        #expect(found.contains { $0.contains("replicas differ after quiescence") } && found.contains { $0.contains("vectors differ") },
                "replica 2 holds a write the others never received, and the check must say so: \(found)")
        try cluster.quiesce()
        try checkConverged(cluster, seed: 999)
    }

    /// Deliveries in any order, with duplicates and as arbitrary subsets, end in the same state.
    @Test func deliveryOrderAndDuplicatesDoNotMatter() throws {
        for seed in UInt64(101)...140 {
            let cluster = try Cluster(seed: seed, count: 3, poolSize: 5, skew: 5_000)
            var delivered: [Change] = []
            for _ in 0..<35 {
                cluster.tickClocks()
                if cluster.chance(60) {
                    try cluster.randomWrite(on: Int(cluster.random.next(below: 3)))
                } else {
                    try cluster.randomSync()
                }
                // Snapshot what some writer holds now: older versions end up in the pool too.
                if cluster.chance(30) { delivered += try cluster.pick(cluster.replicas).changes(after: VersionVector()) }
            }
            try cluster.quiesce()
            try checkConverged(cluster, seed: seed)
            let expected = try cluster.replicas[0].canonicalHash()
            for replica in cluster.replicas { delivered += try replica.changes(after: VersionVector()) }

            let random = cluster.random.derive("delivery")
            func shuffled(_ changes: [Change]) -> [Change] {
                var result = changes
                for i in stride(from: result.count - 1, to: 0, by: -1) {
                    result.swapAt(i, Int(random.next(below: UInt64(i + 1))))
                }
                return result
            }

            // Two receivers: every change, shuffled differently, some twice, one at a time or in batches.
            var receiverHashes: [String] = []
            for k in 0..<2 {
                let receiver = try ReplicaFixtures.replica(role: .mac, seed: seed &* 7_919 &+ UInt64(k), clock: ManualClock(milliseconds: t0 - 50_000))
                var stream = shuffled(delivered)
                stream += shuffled(stream.filter { _ in random.next(below: 3) == 0 })
                var index = 0
                while index < stream.count {
                    let size = k == 0 ? 1 : 1 + Int(random.next(below: 4))
                    let batch = Array(stream[index..<min(index + size, stream.count)])
                    try receiver.apply(batch, through: VersionVector())
                    index += size
                }
                receiverHashes.append(try receiver.canonicalHash())
                // A final full sync from a writer changes nothing more.
                let outcome = try ReplicaFixtures.sync(from: cluster.replicas[Int(random.next(below: 3))], to: receiver)
                #expect(outcome.applied == 0, "seed \(seed): receiver \(k) had not converged")
                #expect(try receiver.canonicalHash() == expected, "seed \(seed): receiver \(k)")
            }
            #expect(receiverHashes == [expected, expected], "seed \(seed)")

            // A receiver given only a shuffled subset converges after a full sync.
            let partial = try ReplicaFixtures.replica(role: .phone, seed: seed &* 7_919 &+ 5)
            try partial.apply(shuffled(delivered).filter { _ in random.next(below: 2) == 0 }, through: VersionVector())
            try ReplicaFixtures.sync(from: cluster.replicas[1], to: partial)
            #expect(try partial.canonicalHash() == expected, "seed \(seed): partial receiver")
        }
    }

    /// Partitions: two groups write separately for a while, then heal.
    @Test func partitionedGroupsConvergeAfterHealing() throws {
        for seed in UInt64(201)...215 {
            let cluster = try Cluster(seed: seed, count: 4, poolSize: 6, skew: 90_000)
            let groups = [[0, 1], [2, 3]]
            for _ in 0..<40 {
                cluster.tickClocks()
                let group = cluster.pick(groups)
                if cluster.chance(60) {
                    try cluster.randomWrite(on: cluster.pick(group))
                } else {
                    try ReplicaFixtures.sync(from: cluster.replicas[group[0]], to: cluster.replicas[group[1]])
                    try ReplicaFixtures.sync(from: cluster.replicas[group[1]], to: cluster.replicas[group[0]])
                }
            }
            // Heal through a single relay path 0 → 2 → 3 → 1 and back, then everything.
            for (a, b) in [(0, 2), (2, 3), (3, 1), (1, 3), (3, 2), (2, 0)] {
                try ReplicaFixtures.sync(from: cluster.replicas[a], to: cluster.replicas[b])
            }
            let afterRelay = try cluster.hashes()
            #expect(Set(afterRelay).count == 1, "seed \(seed): a relay round trip should already converge")
            try cluster.quiesce()
            try checkConverged(cluster, seed: seed)
        }
    }
}
