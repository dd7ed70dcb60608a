import LifeSync

/// How the simulator chooses among faults, attacks and workload steps: one row per choice with
/// its weight, one roll of a seeded stream per pick. A new fault is one new row; the rows keep
/// their order, so a table whose rows and weights are unchanged picks the same for every seed.
///
///     static let faults = WeightedTable<Fault>([(.isolate, 20), (.crash, 20), (.reset, 60)])
///     switch Self.faults.pick(faultRandom) { case .isolate: … }
struct WeightedTable<Choice: Sendable>: Sendable {
    private let rows: [(choice: Choice, weight: UInt64)]
    /// The sum of the weights: a pick draws one value below it.
    let totalWeight: UInt64

    init(_ rows: [(Choice, UInt64)]) {
        precondition(!rows.isEmpty && rows.allSatisfy { $0.1 > 0 }, "a table has rows, each with a weight")
        self.rows = rows.map { (choice: $0.0, weight: $0.1) }
        totalWeight = rows.reduce(0) { $0 + $1.1 }
    }

    /// The row a roll of `random` lands on, each as likely as its weight.
    func pick(_ random: RandomSource) -> Choice {
        var roll = random.next(below: totalWeight)
        for row in rows {
            if roll < row.weight { return row.choice }
            roll -= row.weight
        }
        preconditionFailure("a roll below the total weight lands on a row")
    }
}
