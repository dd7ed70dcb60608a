import LifeSync
import Testing
import TestSupport

private let t0 = ReplicaFixtures.epoch

// MARK: - Helpers

/// The LWW order of PROTOCOL.md §8, written out independently of the library: HLC, then the sum
/// of the vector's sequences, then origin, then sequence.
func lwwLess(_ a: VersionStamp, _ b: VersionStamp) -> Bool {
    if a.hlc != b.hlc { return a.hlc < b.hlc }
    let sum = { (stamp: VersionStamp) in stamp.vector.entries.map { UInt128($0.sequence) }.reduce(0, +) }
    if sum(a) != sum(b) { return sum(a) < sum(b) }
    if a.origin != b.origin { return a.origin < b.origin }
    return a.sequence < b.sequence
}

func sameWrite(_ a: VersionStamp, _ b: VersionStamp) -> Bool {
    a.origin == b.origin && a.sequence == b.sequence
}

/// One local write as the writer saw it right after making it.
struct Write {
    var id: String
    var stamp: VersionStamp
    var entry: LogEntry?
}

/// Replicas on their own manual clocks, with a record of every local write.
final class Cluster {
    let replicas: [Replica]
    let clocks: [ManualClock]
    let random: SeededRandom
    var writes: [String: [Write]] = [:]
    let pool: [String]
    private var counter = 0

    init(seed: UInt64, count: Int, poolSize: Int, skew: Int64 = 0) throws {
        random = SeededRandom(seed: seed)
        let setup = random.derive("setup")
        var replicas: [Replica] = [], clocks: [ManualClock] = []
        for i in 0..<count {
            // Clocks start apart, some beyond the drift bound.
            let offset = skew == 0 ? 0 : Int64(setup.next(below: UInt64(2 * skew + 1))) - skew
            let clock = ManualClock(milliseconds: t0 + offset)
            clocks.append(clock)
            replicas.append(try ReplicaFixtures.replica(role: Role.allCases[i % 3], seed: seed &* 1_000 &+ UInt64(i) &+ 1, clock: clock))
        }
        self.replicas = replicas
        self.clocks = clocks
        let ids = setup.derive("ids")
        pool = (0..<poolSize).map { _ in Identifier.make(role: .phone, random: ids) }
    }

    func pick<T>(_ items: [T]) -> T { items[Int(random.next(below: UInt64(items.count)))] }
    func chance(_ percent: UInt64) -> Bool { random.next(below: 100) < percent }

    private func record(_ r: Int, _ id: String) throws {
        let stamp = try #require(try replicas[r].versionStamp(id: id))
        let entry = stamp.deleted ? nil : try replicas[r].entry(id: id)
        writes[id, default: []].append(Write(id: id, stamp: stamp, entry: entry))
    }

    /// Pool IDs replica `r` holds live.
    func liveIDs(_ r: Int) throws -> [String] {
        try pool.filter { try replicas[r].versionStamp(id: $0).map { !$0.deleted } ?? false }
    }

    /// One random local write on replica `r`: an add of an ID it has never seen, or an update or
    /// delete of one it holds live. Returns false when there was nothing to do.
    @discardableResult
    func randomWrite(on r: Int) throws -> Bool {
        let replica = replicas[r]
        counter += 1
        let live = try liveIDs(r)
        let unseen = try pool.filter { try replica.versionStamp(id: $0) == nil }
        let op = random.next(below: 10)
        if (op < 3 || live.isEmpty), !unseen.isEmpty {
            let id = pick(unseen)
            try replica.add(LogEntry(id: id, timestamp: Timestamp(millisecondsSince1970: t0 + Int64(random.next(below: 86_400_000))),
                                     recordedAt: replica.now, source: replica.identity.role.rawValue, deviceId: replica.identity.nodeID,
                                     category: pick(["a", "b", "c"]), data: LogData(text: "add \(counter) on \(r)")))
            try record(r, id)
            return true
        }
        guard !live.isEmpty else { return false }
        let id = pick(live)
        if op < 8 {
            // The text, the tags or both (each new), so concurrent edits of different fields and
            // of the same field both occur; sometimes the category as well.
            let edits = random.next(below: 3)
            var data: [(String, JSONValue)] = []
            if edits != 1 { data.append(("text", .string("update \(counter) on \(r)"))) }
            if edits != 0 { data.append(("tags", .array([.string("t\(counter)")]))) }
            var members: [(String, JSONValue)] = [("data", .object(data))]
            if chance(30) { members.append(("category", chance(50) ? .null : .string(pick(["x", "y"])))) }
            _ = try replica.update(id: id, patch: .object(members))
        } else {
            try replica.delete(id: id)
        }
        try record(r, id)
        return true
    }

    /// Moves the clocks: everyone a little, sometimes one a lot (backwards, or ahead beyond the drift).
    func tickClocks() {
        for clock in clocks { clock.advance(by: Int64(random.next(below: 40))) }
        if chance(10) {
            let clock = pick(clocks)
            clock.advance(by: chance(50) ? -Int64(random.next(below: 30_000)) : Int64(random.next(below: 180_000)))
        }
    }

    func randomSync() throws {
        let from = Int(random.next(below: UInt64(replicas.count)))
        var to = Int(random.next(below: UInt64(replicas.count - 1)))
        if to >= from { to += 1 }
        try ReplicaFixtures.sync(from: replicas[from], to: replicas[to])
    }

    /// All-pairs syncs until a whole round applies nothing. Returns the rounds it took.
    @discardableResult
    func quiesce(maxRounds: Int = 10) throws -> Int {
        for round in 1...maxRounds {
            var applied = 0
            for i in replicas.indices {
                for j in replicas.indices where i != j {
                    applied += try ReplicaFixtures.sync(from: replicas[i], to: replicas[j]).applied
                }
            }
            if applied == 0 { return round }
        }
        Issue.record("no quiescence after \(maxRounds) rounds of all-pairs syncs")
        return maxRounds
    }

    func hashes() throws -> [String] { try replicas.map { try $0.canonicalHash() } }
}

/// An entry's writes as the per-field merge takes them, in the order they were made: each write
/// stamped the fields it changed from the entry as its writer read it, which is the merge of the
/// writes it had seen (its vector covers them).
func fieldWrites(_ writes: [Write]) -> [EntryWrite] {
    var result: [EntryWrite] = []
    for write in writes {
        let seen = result.filter { !sameWrite($0.stamp, write.stamp) && write.stamp.vector[$0.stamp.origin] >= $0.stamp.sequence }
        let before = seen.isEmpty ? nil : FieldMerge.merge(seen).content
        let fields = write.entry.map { after in before.map { FieldMask.changed(from: $0, to: after) } ?? .all } ?? .all
        result.append(EntryWrite(stamp: write.stamp, fields: fields, entry: write.entry))
    }
    return result
}

/// The checks every converged cluster must pass.
func checkConverged(_ cluster: Cluster, seed: UInt64, sourceLocation: SourceLocation = #_sourceLocation) throws {
    for violation in try convergenceViolations(cluster, seed: seed) { Issue.record(Comment(rawValue: violation), sourceLocation: sourceLocation) }
}

/// What is wrong with the cluster's state after quiescence (none when it converged on the merge
/// of every write ever made): the check `checkConverged` records, as data, so a test can also
/// show it finds a fault.
func convergenceViolations(_ cluster: Cluster, seed: UInt64) throws -> [String] {
    var violations: [String] = []
    func require(_ condition: Bool, _ message: @autoclosure () -> String) { if !condition { violations.append(message()) } }
    let hashes = try cluster.hashes()
    require(Set(hashes).count == 1, "seed \(seed): replicas differ after quiescence")
    let vectors = try cluster.replicas.map { try $0.replicaVector() }
    require(Set(vectors).count == 1, "seed \(seed): replica vectors differ")

    var allConflicts: [(origin: String, sequence: UInt64, id: String)] = []
    for replica in cluster.replicas {
        allConflicts += try replica.conflicts().map { ($0.loser.origin, $0.loser.sequence, $0.entryID) }
    }

    for (id, writes) in cluster.writes {
        // Convergence to the LWW maximum of all writes ever made, reading as the per-field merge
        // of them all: nothing acknowledged is lost.
        let winner = writes.max { lwwLess($0.stamp, $1.stamp) }!
        let merged = FieldMerge.merge(fieldWrites(writes))
        for replica in cluster.replicas {
            let stamp = try replica.versionStamp(id: id)
            require(stamp.map { sameWrite($0, winner.stamp) && $0.hlc == winner.stamp.hlc && $0.deleted == winner.stamp.deleted } == true,
                    "seed \(seed): \(id) holds \(String(describing: stamp)), expected the write \(winner.stamp)")
            if let entry = merged.content {
                require(winner.entry != nil, "seed \(seed): \(id) outlived its greatest write, a delete")
                require((try? replica.entry(id: id)) == entry, "seed \(seed): content of \(id)")
            } else {
                do {
                    _ = try replica.entry(id: id)
                    violations.append("seed \(seed): \(id) must stay deleted")
                } catch ReplicaError.notFound(id: id) {
                } catch {
                    violations.append("seed \(seed): \(id): \(error)")
                }
            }
        }
        for w in writes where !sameWrite(w.stamp, winner.stamp) {
            // Every other write was seen by a later write, still wins a field, or lost and was
            // kept as a conflict somewhere.
            let seenLater = writes.contains { !sameWrite($0.stamp, w.stamp) && $0.stamp.vector[w.stamp.origin] >= w.stamp.sequence }
            let kept = allConflicts.contains { $0.id == id && $0.origin == w.stamp.origin && $0.sequence == w.stamp.sequence }
            require(seenLater || kept || merged.holds(w.stamp), "seed \(seed): write \(w.stamp) of \(id) vanished")
        }
        // Causality: a write that had seen another is ordered after it, whatever the clocks said.
        for earlier in writes {
            for later in writes where !sameWrite(earlier.stamp, later.stamp)
                && later.stamp.vector[earlier.stamp.origin] >= earlier.stamp.sequence {
                require(lwwLess(earlier.stamp, later.stamp), "seed \(seed): \(later.stamp) had seen \(earlier.stamp) but does not order after it")
            }
        }
    }
    return violations
}
