import LifeSync
import LifeSyncConformance
import LifeSyncRuntime

/// `lifesync conformance`: drives a live node of any implementation through cases keyed to
/// Protocol/PROTOCOL.md and says, case by case, where it departs from the spec.
extension LifeSyncCommandLine {
    static let conformanceCommand = Command(
        spec: CommandSpec(
            name: "conformance", summary: "check a live node against the wire protocol, case by case (PROTOCOL.md)",
            options: [
                OptionSpec(name: "--db", kind: .value, valueName: "PATH", help: "the runner's own replica: its identity and trust store (created, role mac, if absent)"),
                OptionSpec(name: "--target", kind: .value, valueName: "HOST:PORT", help: "the node under test (it must be serving there)"),
                OptionSpec(name: "--listen", kind: .value, valueName: "HOST:PORT", help: "wait for the node under test to dial in, and check it as a dialler"),
                OptionSpec(name: "--section", kind: .repeated, valueName: "S", help: "only the cases of PROTOCOL.md section S and its subsections (repeatable)"),
                OptionSpec(name: "--strict", kind: .flag, help: "SHOULD-level deviations fail too (else they are WARN lines)"),
                OptionSpec(name: "--timeout", kind: .value, valueName: "S", help: "the longest wait of any one step, in seconds (default 5)"),
                CommandSpec.jsonFlag,
                OptionSpec(name: "--junit", kind: .value, valueName: "FILE", help: "also write a JUnit XML report to FILE"),
                OptionSpec(name: "--list", kind: .flag, help: "list the cases and exit (with --listen: the dialler's cases)"),
            ],
            details: """
            Pair the runner with the node under test first, both ways, as any two nodes:
              lifesync trust "$(lifesync id --db runner.sqlite)" --db node.sqlite
              lifesync trust "$(lifesync id --db node.sqlite)" --db runner.sqlite
            Each case opens its own connections. The runner writes test entries (IDs conformance_…)
            and tombstones under three origins of its own node ID, the same every run: point it at a
            node whose replica you can spare. One line per case (PASS, FAIL with the frames
            around the failure in hex, SKIP with the reason, WARN for a SHOULD-level deviation), then
            `N passed, M failed, K skipped`. Exit 0 when nothing failed, 1 otherwise.
            Example: lifesync conformance --db runner.sqlite --target 127.0.0.1:7002 --section 7.4
            """),
        run: { arguments, context in
            let sections = arguments.all("--section")
            if arguments.flag("--list") {
                let listed = arguments.value("--listen") == nil ? ConformanceCases.all : ConformanceCases.client
                for c in ConformanceRunner.select(sections: sections, from: listed) {
                    context.console.print("\(c.section) \(c.id)\(c.level == .should ? " (should)" : "") — \(c.expectation)")
                }
                return 0
            }
            let targetText = arguments.value("--target"), listenText = arguments.value("--listen")
            guard (targetText == nil) != (listenText == nil) else {
                throw CLIError.usage("give --target HOST:PORT (a serving node) or --listen HOST:PORT (a node that dials in), one of them", command: arguments.spec)
            }
            let timeout = try arguments.number("--timeout") ?? 5
            guard timeout >= 0.1, timeout <= 600 else { throw CLIError.usage("--timeout: 0.1 to 600 seconds, got \(timeout)", command: arguments.spec) }
            let cases = ConformanceRunner.select(sections: sections, from: listenText == nil ? ConformanceCases.all : ConformanceCases.client)
            guard !cases.isEmpty else { throw CLIError.usage("no case is under --section \(sections.joined(separator: ", ")) (see --list)", command: arguments.spec) }
            let address: SocketAddress
            do { address = try SocketAddress(parsing: targetText ?? listenText!) } catch {
                throw CLIError.usage("\(targetText == nil ? "--listen" : "--target"): \(error)", command: arguments.spec)
            }

            let replica: Replica
            do { replica = try context.openReplica(arguments) } catch ReplicaError.notInitialized {
                replica = try Replica.create(path: context.databasePath(arguments), role: .mac, clock: context.clock, random: context.random)
            }
            let key = try NodeKey.loadOrCreate(path: NodeKey.path(forReplica: replica.path), nodeID: replica.identity.nodeID)
            let runnerPairing = PairingString(nodeID: replica.identity.nodeID, fingerprint: key.fingerprint, addresses: []).description
            let json = arguments.flag("--json"), strict = arguments.flag("--strict")
            let progress: (ConformanceResult) -> Void = { result in
                if !json { context.console.print(ConformanceReport.line(result, strict: strict)) }
            }
            let target: ConformanceTarget
            do {
                if targetText != nil {
                    target = try .dialling(address, key: key, runner: replica.identity, trustedPeers: try replica.trustedPeers(),
                                           timeout: timeout, random: context.random, wallClock: context.clock)
                } else {
                    target = try .listening(address, key: key, runner: replica.identity, trustedPeers: try replica.trustedPeers(),
                                            timeout: timeout, random: context.random, wallClock: context.clock) { bound in
                        if !json { context.console.print("listening on \(bound) for the node under test to dial in (within \(timeout) s)") }
                    }
                }
            } catch let problem as ConformanceTarget.PairingProblem {
                throw CLIError.refused(pairingAdvice(problem, address: address, runnerPairing: runnerPairing, runnerDB: replica.path))
            } catch {
                throw CLIError.refused("cannot start against \(address): \(error)")
            }
            if !json {
                context.console.print("\(targetText == nil ? "dialler" : "target") \(target.trusted.nodeID) (\(target.trusted.role.rawValue)) at \(address), "
                                      + "runner \(replica.identity.nodeID); \(cases.count) cases")
            }
            let results = ConformanceRunner.run(cases, on: target, progress: progress)
            let report = ConformanceReport(results: results, strict: strict, target: targetText ?? listenText!)
            if let file = arguments.value("--junit") {
                do { try UserFile.replace(file, with: Array(report.junit.utf8)) } catch { throw CLIError.refused("--junit: \(error)") }
            }
            if json {
                context.console.print(report.json.prettyText)
            } else {
                if report.warnings > 0 { context.console.print("\(report.warnings) SHOULD-level deviation\(report.warnings == 1 ? "" : "s") (WARN; --strict fails them)") }
                context.console.print(report.summary)
            }
            return report.failed == 0 ? 0 : 1
        })

    /// What to run so the two nodes trust each other: the runner's own line in full, the
    /// target's as the command to run there.
    static func pairingAdvice(_ problem: ConformanceTarget.PairingProblem, address: SocketAddress, runnerPairing: String, runnerDB: String) -> String {
        let both = """
        Pair them both ways:
          on the node under test:  lifesync trust '\(runnerPairing)' --db NODE.sqlite
          here:                    lifesync trust "$(lifesync id --db NODE.sqlite --addr \(address))" --db \(runnerDB)
        """
        switch problem {
        case .runnerDoesNotTrust(let key):
            return "the runner does not trust the key the node at \(address) proved (\(key.hex.prefix(16))…). " + both
        case .targetDoesNotTrust(let text):
            return "the node at \(address) does not trust the runner (ERROR not_trusted: \(text)). " + both
        }
    }
}
