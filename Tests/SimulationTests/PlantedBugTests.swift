import LifeSync
import LifeSyncSimulation
import Testing

/// A checker that cannot fail is a defect: each planted bug must be reported as the invariant it
/// breaks within a bounded number of seeds.
@Suite struct PlantedBugTests {
    /// The first violation found for `bug` within `seeds`, or nil.
    static func firstViolation(_ bug: PlantedBugs, seeds: ClosedRange<UInt64> = 1...30, options: SimulationOptions = SimulationOptions()) async -> String? {
        var options = options
        options.plantedBugs = bug
        for seed in seeds {
            await Task.yield()
            let result = Simulator(seed: seed, options: options).run()
            if let violation = result.violations.first { return violation }
        }
        return nil
    }

    @Test func acknowledgingBeforeCommitIsCaught() async throws {
        let violation = try #require(await Self.firstViolation(.ackBeforeCommit))
        #expect(violation.contains("liveness") || violation.contains("lost"), "\(violation)")
    }

    @Test func aRelayDroppingForeignChangesIsCaught() async throws {
        let violation = try #require(await Self.firstViolation(.relayDropsForeignChanges))
        #expect(violation.contains("liveness: full replicas did not converge"), "\(violation)")
    }

    @Test func stampingWithoutRegardForCausalityIsCaught() async throws {
        var options = SimulationOptions()
        options.clockSkew = 600_000
        var found: [String] = []
        for seed in UInt64(1)...40 {
            await Task.yield()
            options.plantedBugs = .stampIgnoresCausality
            found += Simulator(seed: seed, options: options).run().violations
        }
        #expect(found.contains { $0.hasPrefix("causality") || $0.hasPrefix("no resurrection") || $0.contains("liveness") }, "\(found.prefix(3))")
    }

    /// The per-field invariant sees a field value lost: a merge that keeps only the latest write
    /// drops a concurrent edit of another field without a conflict copy.
    @Test func droppingEarlierFieldWinnersIsCaught() throws {
        var found: [String] = []
        for seed in UInt64(1)...3 {
            var options = SimulationOptions()
            options.plantedBugs = .dropsFieldWinners
            found += Simulator(seed: seed, options: options).run().violations
        }
        #expect(found.contains { $0.hasPrefix("no acknowledged write lost") && ($0.contains("the category of") || $0.contains("the data.")) },
                "\(found.prefix(3))")
    }

    /// A receiver that stores what no seal of its origin vouches for takes the hostile node's
    /// forgeries in honest nodes' names: the checker finds them stored, and the same seeds pass
    /// without the bug.
    @Test func ignoringSealsIsCaught() async {
        var options = HostileScenarioTests.options()
        options.plantedBugs = .ignoresSeals
        // A run with the bug rarely converges (forged writes never settle): a minute of healing
        // is enough to see what was stored, not fifteen.
        options.settleLimit = 60_000
        var caught: [(seed: UInt64, violation: String)] = []
        for seed in UInt64(1)...40 where caught.count < 2 {
            await Task.yield()
            if let violation = Simulator(seed: seed, options: options).run().violations.first(where: { $0.hasPrefix("forged write stored") }) {
                caught.append((seed, violation))
            }
        }
        #expect(!caught.isEmpty, "no forgery stored in seeds 1…40 with seals ignored")
        for (seed, _) in caught {
            #expect(Simulator(seed: seed, options: HostileScenarioTests.options()).run().ok, "seed \(seed) without the bug")
        }
    }

    @Test func aWatchRemovingARecordingBeforeItsConfirmationIsCaught() async throws {
        let violation = try #require(await Self.firstViolation(.watchRemovesBeforeConfirmation, seeds: 1...10))
        #expect(violation.contains("before a phone confirmed it"), "\(violation)")
    }

    /// Only a hostile peer says `deleted` about a recording nobody deleted: with the hostile node
    /// on, a sender that takes that word as a user delete (the tombstone replicates, every copy
    /// goes) is caught, and the same seeds pass without the bug.
    @Test func trustingAFailureDeletedIsCaught() async {
        var options = HostileScenarioTests.options()
        options.plantedBugs = .trustsFailureDeleted
        var caught: [(seed: UInt64, violation: String)] = []
        for seed in UInt64(1)...12 where caught.count < 2 {
            await Task.yield()
            if let violation = Simulator(seed: seed, options: options).run().violations.first { caught.append((seed, violation)) }
        }
        #expect(caught.count >= 2, "\(caught)")
        #expect(caught.allSatisfy { $0.violation.contains("no user deleted") }, "\(caught.prefix(2))")
        for (seed, _) in caught {
            #expect(Simulator(seed: seed, options: HostileScenarioTests.options()).run().ok, "seed \(seed) without the bug")
        }
        // Honest peers say `deleted` only of what a user deleted: without the hostile node the
        // bug goes unnoticed, which is why the adversary is needed.
        var honest = SimulationOptions()
        honest.plantedBugs = .trustsFailureDeleted
        let first = caught.first?.seed ?? 1
        let unnoticed = Simulator(seed: first, options: honest).run()
        #expect(unnoticed.ok, "\(unnoticed.violations.prefix(2))")
    }

    @Test func withoutPlantedBugsTheSameSeedsPass() async {
        for seed in UInt64(1)...30 { await Task.yield(); #expect(Simulator(seed: seed, options: SimulationOptions()).run().ok, "seed \(seed)") }
    }
}
