import LifeSync

/// The outcome of one seed.
package struct SimulationResult: Sendable {
    package var seed: UInt64
    package var ok: Bool { violations.isEmpty }
    /// Broken invariants, each naming the invariant and the record or node.
    package var violations: [String]
    package var traceHash: String
    package var simulatedMilliseconds: Int64
    package var events: Int
    package var faults: [String: Int]
    package var writes: Int
    /// The last trace lines before the end (for failures).
    package var traceExcerpt: [String]

    package var json: JSONValue {
        .object([
            ("seed", .number(Double(seed))),
            ("ok", .bool(ok)),
            ("trace_hash", .string(traceHash)),
            ("simulated_seconds", .number((Double(simulatedMilliseconds) / 1000).rounded())),
            ("events", .number(Double(events))),
            ("writes", .number(Double(writes))),
            ("faults", .object(faults.sorted { $0.key < $1.key }.map { ($0.key, .number(Double($0.value))) })),
            ("violations", .array(violations.map(JSONValue.string))),
        ])
    }
}
