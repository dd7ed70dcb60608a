import LifeSync

/// The outcome of one seed.
public struct SimulationResult: Sendable {
    public var seed: UInt64
    public var ok: Bool { violations.isEmpty }
    /// Broken invariants, each naming the invariant and the record or node.
    public var violations: [String]
    public var traceHash: String
    public var simulatedMilliseconds: Int64
    public var events: Int
    public var faults: [String: Int]
    public var writes: Int
    /// The last trace lines before the end (for failures).
    public var traceExcerpt: [String]

    public var json: JSONValue {
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
