import LifeSync
import LifeSyncSimulation
import Testing

/// The default scenario with a hostile node on the network (`HostileNode`): forged and mutated
/// frames, lying vectors, claimed identities, faked transfers. Every honest node must keep every
/// invariant, and the adversary must really have done each kind of attack.
@Suite struct HostileScenarioTests {
    static let seeds: ClosedRange<UInt64> = 1...50

    /// Attacks that break an invariant today: each is an open finding in the core, reproduced in
    /// `HostileFindingTests` and, through the simulator, in `eachKnownFindingStillBreaksARun`.
    /// They are left out of the green runs; remove one once the core withstands it. (Fixed so
    /// far: claimed incarnations, origin-table squatting, forged version vectors, claims on a
    /// node's own history, the tombstone twin's trap, the ceiling-pinned clock, the busy timer.)
    static let knownFindings: Set<String> = [
        "hostile_twin_of_tombstone",  // the twin stays a current version at the hub, never relayed: divergence
        "hostile_duplicate_seq",      // a twin in a freed slot beats the edit that had seen it, never relayed
        "hostile_hlc_at_maximum",     // an edit at the ceiling loses to the older version by origin order
        "hostile_vouch_as_other",     // an OFFER under the mac's node ID counts as the mac's copy
    ]

    static func options(excluding excluded: Set<String> = knownFindings) -> SimulationOptions {
        var options = SimulationOptions()
        options.hostile = true
        options.hostileExclusions = excluded
        return options
    }

    static func report(_ result: SimulationResult) -> String {
        "seed \(result.seed): \(result.violations.prefix(2))\n\(result.traceExcerpt.suffix(12).joined(separator: "\n"))"
    }

    @Test func everyHonestNodeKeepsEveryInvariant() {
        var failures: [String] = []
        var kinds = Set<String>()
        for seed in Self.seeds {
            let result = Simulator(seed: seed, options: Self.options()).run()
            if !result.ok { failures.append(Self.report(result)) }
            kinds.formUnion(result.faults.filter { $0.value > 0 }.keys)
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        // A silently idle adversary cannot pass: each attack happened in these seeds.
        for attack in SimulationOptions.hostileAttacks where !Self.knownFindings.contains(attack) {
            #expect(kinds.contains(attack), "no \(attack) in seeds \(Self.seeds)")
        }
    }

    @Test func theSameSeedGivesTheSameTrace() {
        for seed in UInt64(1)...3 {
            let a = Simulator(seed: seed, options: Self.options(excluding: [])).run()
            let b = Simulator(seed: seed, options: Self.options(excluding: [])).run()
            #expect(a.traceHash == b.traceHash, "seed \(seed)")
            #expect(a.faults == b.faults)
        }
        let plain = Simulator(seed: 1, options: SimulationOptions()).run()
        #expect(plain.faults.keys.allSatisfy { !$0.hasPrefix("hostile_") }, "the hostile node is off by default")
        #expect(plain.traceHash != Simulator(seed: 1, options: Self.options()).run().traceHash)
    }

    /// Each known finding still breaks a run when its attack is the only known one let in: this
    /// fails (known issue not recorded) once the core withstands it — then drop it from
    /// `knownFindings`.
    @Test(arguments: knownFindings.sorted())
    func eachKnownFindingStillBreaksARun(_ attack: String) {
        let options = Self.options(excluding: Self.knownFindings.subtracting([attack]))
        var broken: SimulationResult?
        for seed in UInt64(1)...40 {
            let result = Simulator(seed: seed, options: options).run()
            if !result.ok { broken = result; break }
        }
        withKnownIssue("\(attack) breaks an invariant of an honest node") {
            #expect(broken == nil, "\(broken.map { Self.report($0) } ?? "")")
        }
    }

    /// Duplicated and reordered frames on honest links (a buggy middlebox), far more often than
    /// the default: a reordered OFFER drops the transfer under way at the receiver without a
    /// word, chunks that follow are ignored, and the sender, which has no progress timeout,
    /// waits for the rest of the session — which keepalives keep open for ever (the recording
    /// never reaches the full replicas). At the default rate it shows too, rarely: `lifesync
    /// simulate --seed 190 --hostile` with the known findings skipped (an honest link's fault).
    @Test func heavyReorderingStillConverges() {
        var options = SimulationOptions()
        options.duplicationAndReorderingPerMille = 150
        let result = Simulator(seed: 59, options: options).run()
        #expect((result.faults["reorder"] ?? 0) > 20)
        withKnownIssue("a transfer dropped by a reordered OFFER wedges its session") {
            #expect(result.ok, "\(Self.report(result))")
        }
    }
}
