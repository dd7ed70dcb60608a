import LifeSync
import LifeSyncSimulation
import Testing

/// The default scenario with a hostile node on the network (`HostileNode`): forged and mutated
/// frames, lying vectors, claimed identities, faked transfers; and strangers (`StrangerNode`),
/// whose keys nobody trusts. Every honest node must keep every invariant, and the adversaries
/// must really have done each kind of attack.
@Suite struct HostileScenarioTests {
    static let seeds: ClosedRange<UInt64> = 1...50

    static func options(excluding excluded: Set<String> = []) -> SimulationOptions {
        var options = SimulationOptions()
        options.hostile = true
        options.hostileExclusions = excluded
        return options
    }

    static func report(_ result: SimulationResult) -> String {
        "seed \(result.seed): \(result.violations.prefix(2))\n\(result.traceExcerpt.suffix(12).joined(separator: "\n"))"
    }

    @Test func everyHonestNodeKeepsEveryInvariant() async {
        var failures: [String] = []
        var kinds = Set<String>()
        for seed in Self.seeds {
            await Task.yield()
            let result = Simulator(seed: seed, options: Self.options()).run()
            if !result.ok { failures.append(Self.report(result)) }
            kinds.formUnion(result.faults.filter { $0.value > 0 }.keys)
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        // A silently idle adversary cannot pass: each attack happened in these seeds. Vouching
        // as another node needs a session under that node's identity, which the trust store
        // now refuses at the handshake: that refusal is what must happen instead.
        // The rare ones are the next test's.
        for attack in SimulationOptions.hostileAttacks where attack != "hostile_vouch_as_other" && !Self.rare.contains(attack) {
            #expect(kinds.contains(attack), "no \(attack) in seeds \(Self.seeds)")
        }
        #expect(kinds.contains("hostile_claimed_identity_refused"), "no claimed identity was refused")
        // The resource attacks reached the bound they test: parked frames spent a node's input
        // budget, bytes waited, and frames stalled meanwhile were closed.
        for bound in ["input_budget_spent", "input_budget_held_back", "input_budget_stalled_closed"] {
            #expect(kinds.contains(bound), "no \(bound) in seeds \(Self.seeds)")
        }
        #expect(!kinds.contains("hostile_vouch_as_other"), "a session under a claimed identity got through")
        #expect(!kinds.contains("hostile_own_identity_refused"), "the hostile node's own, trusted identity was refused")
        // Strangers (keys nobody trusts) tried every way in, and were refused every way: as
        // themselves, impersonating a trusted node, with fresh keys (filling the pending list to
        // its bound), and on a squatted address (the honest dialler sent no HELLO). That they
        // read and wrote nothing is the checker's (`checkStrangers`), in every seed above.
        for name in SimulationOptions.strangerCounts {
            #expect(kinds.contains(name), "no \(name) in seeds \(Self.seeds)")
        }
    }

    /// Attacks that need what a run seldom gives the hostile node: a delete of its own to twin,
    /// a recording's metadata to offer under its own name. In seeds 1...50 of every attack each
    /// came in 2–4% of seeds, so a change to the traces could leave them out; with the other
    /// timed attacks left out they come in a third of the seeds or more.
    static let rare: Set<String> = ["hostile_twin_of_tombstone", "hostile_chunk_out_of_order"]

    @Test func rareAttacksHappenWhenTheOthersAreLeftOut() async {
        let kept: Set<String> = Self.rare.union(["hostile_own_writes", "hostile_duplicate_seq", "hostile_hello_own", "hostile_vouch_as_other"])
        let options = Self.options(excluding: Set(SimulationOptions.hostileAttacks).subtracting(kept))
        var failures: [String] = []
        var kinds = Set<String>()
        for seed in UInt64(1)...20 {
            await Task.yield()
            let result = Simulator(seed: seed, options: options).run()
            if !result.ok { failures.append(Self.report(result)) }
            kinds.formUnion(result.faults.filter { $0.value > 0 }.keys)
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        for attack in Self.rare { #expect(kinds.contains(attack), "no \(attack) in seeds 1...20") }
        #expect(!kinds.contains("hostile_vouch_as_other"), "a session under a claimed identity got through")
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

    @Test func heavyReorderingStillConverges() async {
        var options = SimulationOptions()
        options.duplicationAndReorderingPerMille = 150
        var failures: [String] = []
        for seed in UInt64(40)...UInt64(79) {
            await Task.yield()
            let result = Simulator(seed: seed, options: options).run()
            if !result.ok { failures.append(Self.report(result)) }
        }
        #expect(failures.isEmpty, "\(failures.count) failed: \(failures.prefix(3))")
    }
}
