import FoundationEssentials
import LifeSync
import LifeSyncRuntime
import LifeSyncSimulation

extension LifeSyncCommandLine {
    static let simulateCommand = Command(
        spec: CommandSpec(
            name: "simulate", summary: "deterministic partition/crash/clock-skew simulation of many nodes",
            options: [
                OptionSpec(name: "--seed", kind: .value, valueName: "N", help: "the seed (default 1)"),
                OptionSpec(name: "--runs", kind: .value, valueName: "M", help: "sweep seeds N…N+M−1; exit 1 if any fails"),
                OptionSpec(name: "--nodes", kind: .value, valueName: "ROLES", help: "comma-separated roles (default phone,mac,watch,watch)"),
                OptionSpec(name: "--duration", kind: .value, valueName: "SECONDS", help: "simulated length of the fault phase (default 120)"),
                OptionSpec(name: "--operations", kind: .value, valueName: "N", help: "local writes in the fault phase (default 120)"),
                OptionSpec(name: "--no-faults", kind: .flag, help: "no partitions, crashes or clock jumps"),
                OptionSpec(name: "--restores", kind: .flag, help: "also copy replicas aside (half by lifesync backup) and put them back later, the replica alone or the whole device (write marks and recordings too)"),
                OptionSpec(name: "--hostile", kind: .flag, help: "add a hostile node (forged and mutated frames, lying vectors, claimed identities) and strangers (keys nobody trusts)"),
                OptionSpec(name: "--hostile-skip", kind: .repeated, valueName: "ATTACK", help: "leave one of the hostile node's attacks out (its fault-count name)"),
                OptionSpec(name: "--scenario", kind: .value, valueName: "FILE", help: "run a scripted scenario (JSON)"),
                OptionSpec(name: "--check-determinism", kind: .flag, help: "run each seed twice and compare trace hashes"),
                OptionSpec(name: "--trace", kind: .flag, help: "print every event of the run as it happens, not only the end a failure shows"),
                OptionSpec(name: "--plant", kind: .repeated, valueName: "BUG", help: "plant a known bug to see the checker catch it: \(PlantedBugNames.all.joined(separator: ", "))"),
                CommandSpec.jsonFlag,
            ],
            details: """
            Each run has a fault phase (writes, partitions, one-way blocks, crashes and restarts, clock jumps,
            connection resets cutting frames in half, lost-segment delays) and a liveness phase that heals
            everything and requires convergence. Checked: convergence, no acknowledged write lost, causality,
            no resurrection, determinism. A failure prints the broken invariant, the end of the trace and the
            command that replays it.
            """),
        run: { arguments, context in
            let seed = UInt64(try arguments.integer("--seed", default: 1, range: 0...Int(Int32.max)))
            let runs = try arguments.integer("--runs", default: 1, range: 1...1_000_000)
            var options = SimulationOptions()
            if let file = arguments.value("--scenario") {
                let json: JSONValue
                do { json = try JSONValue.parse(bytes: try readInput(file, context: context)) } catch let error as JSONParseError {
                    throw CLIError.refused("\(file): \(error)")
                }
                do { options = try Scenario.options(from: json) } catch { throw CLIError.refused("\(file): \(error)") }
            }
            if let nodes = arguments.value("--nodes") {
                options.roles = try nodes.split(separator: ",").map { text in
                    guard let role = Role(rawValue: String(text)) else { throw CLIError.refused("--nodes: '\(text)' is not watch, phone or mac") }
                    return role
                }
                guard !options.roles.isEmpty, options.roles.count <= 40 else { throw CLIError.refused("--nodes takes 1–40 roles") }
            }
            if arguments.value("--duration") != nil {
                options.duration = Int64(try arguments.integer("--duration", default: 120, range: 1...2_592_000)) * 1000
            }
            options.operations = try arguments.integer("--operations", default: options.operations, range: 0...100_000)
            if arguments.flag("--no-faults") { options.faults = false }
            if arguments.flag("--hostile") { options.hostile = true }
            if arguments.flag("--restores") { options.restores = true }
            if arguments.flag("--trace") { options.traceEcho = { print("  \($0)") } }
            for name in arguments.all("--hostile-skip") {
                guard SimulationOptions.hostileAttacks.contains(name) else {
                    throw CLIError.refused("--hostile-skip: unknown attack '\(name)' (\(SimulationOptions.hostileAttacks.joined(separator: ", ")))")
                }
                options.hostileExclusions.insert(name)
            }
            for name in arguments.all("--plant") {
                guard let bug = PlantedBugNames.bug(named: name) else {
                    throw CLIError.refused("--plant: unknown bug '\(name)' (\(PlantedBugNames.all.joined(separator: ", ")))")
                }
                options.plantedBugs.insert(bug)
            }
            var failures = 0
            let started = MonotonicClock.seconds()
            var simulated: Int64 = 0
            for s in seed..<(seed + UInt64(runs)) {
                let result = Simulator(seed: s, options: options).run()
                simulated += result.simulatedMilliseconds
                var problems = result.violations
                if arguments.flag("--check-determinism") {
                    let again = Simulator(seed: s, options: options).run()
                    if again.traceHash != result.traceHash {
                        problems.append("determinism: seed \(s) gave trace \(result.traceHash.prefix(16)) then \(again.traceHash.prefix(16))")
                    }
                }
                if !problems.isEmpty { failures += 1 }
                if arguments.flag("--json") {
                    var json = result.json
                    if case .object(var members) = json {
                        members.removeAll { $0.0 == "violations" || $0.0 == "ok" }
                        members.append(("ok", .bool(problems.isEmpty)))
                        members.append(("violations", .array(problems.map(JSONValue.string))))
                        json = .object(members)
                    }
                    context.console.print(json.canonicalText)
                } else {
                    let faults = result.faults.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                    context.console.print("seed \(s): \(problems.isEmpty ? "ok" : "FAILED")  trace \(result.traceHash.prefix(16))  \(result.events) events  \(result.simulatedMilliseconds / 1000) s simulated  \(result.writes) writes  faults: \(faults.isEmpty ? "none" : faults)")
                }
                if !problems.isEmpty && !arguments.flag("--json") {
                    for problem in problems { context.console.print("  violated: \(problem)") }
                    context.console.print("  last events:")
                    for line in result.traceExcerpt.suffix(25) { context.console.print("    \(line)") }
                    context.console.print("  replay: \(replayCommand(arguments, seed: s))")
                }
            }
            let wall = MonotonicClock.seconds() - started
            if runs > 1 && !arguments.flag("--json") {
                context.console.print("\(runs - failures) passed, \(failures) failed")
                context.console.print("\((Double(runs) / wall * 60).fixed(1)) seeds/min, \((Double(simulated) / 1000 / wall).fixed(0))× real time")
            }
            return failures == 0 ? 0 : 1
        })

    /// The exact command that runs one seed again with the same options.
    static func replayCommand(_ arguments: ParsedArguments, seed: UInt64) -> String {
        var parts = ["lifesync", "simulate", "--seed", String(seed)]
        for name in ["--nodes", "--duration", "--operations", "--scenario"] { if let v = arguments.value(name) { parts += [name, v] } }
        if arguments.flag("--no-faults") { parts.append("--no-faults") }
        if arguments.flag("--restores") { parts.append("--restores") }
        if arguments.flag("--hostile") { parts.append("--hostile") }
        for name in arguments.all("--hostile-skip") { parts += ["--hostile-skip", name] }
        for bug in arguments.all("--plant") { parts += ["--plant", bug] }
        return parts.joined(separator: " ")
    }
}

/// Names of the planted bugs on the command line.
enum PlantedBugNames {
    static let table: [(String, PlantedBugs)] = [
        ("ack-before-commit", .ackBeforeCommit),
        ("relay-drops-foreign", .relayDropsForeignChanges),
        ("stamp-ignores-causality", .stampIgnoresCausality),
        ("drops-field-winners", .dropsFieldWinners),
        ("watch-removes-early", .watchRemovesBeforeConfirmation),
        ("trusts-failure-deleted", .trustsFailureDeleted),
        ("ignores-seals", .ignoresSeals),
    ]
    static var all: [String] { table.map(\.0) }
    static func bug(named name: String) -> PlantedBugs? { table.first { $0.0 == name }?.1 }
}
