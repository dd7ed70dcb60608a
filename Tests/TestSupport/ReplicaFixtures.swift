import LifeSync
import LifeSyncRuntime

/// Replicas for tests: in-memory or in a temporary file, on a manual clock and a seeded random
/// source, so every test run sees the same IDs and times.
package enum ReplicaFixtures {
    /// 2026-11-22T00:00:00Z, the default starting time of test clocks.
    package static let epoch: Int64 = 1_795_305_600_000

    /// With its node's key (`TestKeys`), so it can seal what it sends.
    package static func replica(role: Role, seed: UInt64 = 1, clock: ManualClock? = nil, path: String = ":memory:") throws -> Replica {
        let replica = try Replica.create(path: path, role: role, clock: clock ?? ManualClock(milliseconds: epoch), random: SeededRandom(seed: seed))
        TestKeys.adopt(replica)
        return replica
    }

    /// A real node key (ECDSA P-256) that signs the recordings tests attach: the replicas check
    /// them with the real verifier. One key for every test, made once.
    package static let signer: NodeKey = {
        do { return try NodeKey.generate(nodeID: "phone_00000000-0000-4000-8000-000000000000") } catch { fatalError("no test key: \(error)") }
    }()

    /// A valid entry JSON with `text`, optional category and timestamp.
    package static func entryJSON(text: String, category: String = "note", timestamp: String = "2026-11-22T08:00:00Z") -> JSONValue {
        .object([("category", .string(category)), ("timestamp", .string(timestamp)), ("data", .object([("text", .string(text))]))])
    }

    /// Delivers everything `from` has that `to` lacks, as a sync session would.
    @discardableResult
    package static func sync(from: Replica, to: Replica) throws -> ApplyOutcome {
        let vector = try to.replicaVector()
        return try to.apply(try from.changes(after: vector), through: try from.replicaVector())
    }
}
