import LifeSync
import LifeSyncRuntime

/// Runs cases one after another against one target and reports each as it ends.
package enum ConformanceRunner {
    /// The cases under the given sections (all when none is given), in the order they are listed.
    package static func select(sections: [String], from cases: [ConformanceCase] = ConformanceCases.all) -> [ConformanceCase] {
        guard !sections.isEmpty else { return cases }
        return cases.filter { testCase in sections.contains { testCase.isIn(section: $0) } }
    }

    package static func run(_ cases: [ConformanceCase], on target: ConformanceTarget,
                           progress: (ConformanceResult) -> Void = { _ in }) -> [ConformanceResult] {
        cases.map { testCase in
            let started = MonotonicClock.seconds()
            let outcome: ConformanceOutcome
            do {
                outcome = try testCase.body(target)
            } catch let skip as ConformanceSkip {
                outcome = .skipped(skip.reason)
            } catch let failure as ConformanceFailure {
                outcome = .fail(failure.description)
            } catch {
                // A connection that failed or timed out is the target's doing as much as a wrong frame.
                outcome = .fail("the case could not complete: \(error)")
            }
            let result = ConformanceResult(testCase: testCase, outcome: outcome, seconds: MonotonicClock.seconds() - started)
            progress(result)
            return result
        }
    }
}

/// How results are shown: one line per case, the summary, a JSON report, a JUnit XML report.
package struct ConformanceReport {
    package let results: [ConformanceResult]
    package let strict: Bool
    package let target: String

    package init(results: [ConformanceResult], strict: Bool, target: String) {
        self.results = results
        self.strict = strict
        self.target = target
    }

    package var failed: Int { results.filter { $0.failed(strict: strict) }.count }
    package var skipped: Int { results.filter { if case .skipped = $0.outcome { return true }; return false }.count }
    /// SHOULD-level deviations that did not fail the run (`--strict` would have).
    package var warnings: Int { results.filter { if case .fail = $0.outcome { return !$0.failed(strict: strict) }; return false }.count }
    /// Everything that neither failed nor was skipped: a SHOULD-level warning counts as passed.
    package var passed: Int { results.count - failed - skipped }

    /// `N passed, M failed, K skipped`: the line scripts read.
    package var summary: String { "\(passed) passed, \(failed) failed, \(skipped) skipped" }

    package static func verdict(_ result: ConformanceResult, strict: Bool) -> String {
        switch result.outcome {
        case .pass: return "PASS"
        case .skipped: return "SKIP"
        case .fail: return result.failed(strict: strict) ? "FAIL" : "WARN"
        }
    }

    /// `PASS 7.2 handshake.hello-answered — …`, and under a failure its detail, indented.
    package static func line(_ result: ConformanceResult, strict: Bool) -> String {
        let c = result.testCase
        var line = "\(verdict(result, strict: strict)) \(c.section) \(c.id) — \(c.expectation)"
        switch result.outcome {
        case .pass(let note?): line += " (\(note))"
        case .pass(nil): break
        case .skipped(let reason): line += "\n  skipped: \(reason)"
        case .fail(let detail): line += "\n  " + detail.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ")
        }
        return line
    }

    package var json: JSONValue {
        .object([
            ("target", .string(target)), ("strict", .bool(strict)),
            ("passed", .number(Double(passed))), ("failed", .number(Double(failed))), ("skipped", .number(Double(skipped))),
            ("cases", .array(results.map { result in
                var members: [(String, JSONValue)] = [
                    ("id", .string(result.testCase.id)), ("section", .string(result.testCase.section)),
                    ("level", .string(result.testCase.level.rawValue)), ("expectation", .string(result.testCase.expectation)),
                    ("result", .string(Self.verdict(result, strict: strict).lowercased())),
                    ("seconds", .number((result.seconds * 1000).rounded() / 1000)),
                ]
                switch result.outcome {
                case .pass(let note): if let note { members.append(("note", .string(note))) }
                case .fail(let detail): members.append(("detail", .string(detail)))
                case .skipped(let reason): members.append(("reason", .string(reason)))
                }
                return .object(members)
            })),
        ])
    }

    /// JUnit XML: one testsuite, a testcase per case (classname = its section), `failure` and
    /// `skipped` elements, every text escaped.
    package var junit: String {
        let total = results.reduce(0) { $0 + $1.seconds }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuite name=\"lifesync conformance \(Self.escaped(target))\" tests=\"\(results.count)\" failures=\"\(failed)\" errors=\"0\" skipped=\"\(skipped)\" time=\"\(Self.seconds(total))\">\n"
        for result in results {
            let c = result.testCase
            xml += "  <testcase classname=\"PROTOCOL.md §\(Self.escaped(c.section))\" name=\"\(Self.escaped(c.id))\" time=\"\(Self.seconds(result.seconds))\">"
            switch result.outcome {
            case .pass: break
            case .skipped(let reason): xml += "\n    <skipped message=\"\(Self.escaped(reason))\"/>\n  "
            case .fail(let detail):
                let element = result.failed(strict: strict) ? "failure" : "system-out"
                let attribute = element == "failure" ? " message=\"\(Self.escaped(c.expectation))\" type=\"\(c.level.rawValue)\"" : ""
                xml += "\n    <\(element)\(attribute)>\(Self.escaped(detail))</\(element)>\n  "
            }
            xml += "</testcase>\n"
        }
        return xml + "</testsuite>\n"
    }

    static func seconds(_ value: Double) -> String { String((value * 1000).rounded() / 1000) }

    /// XML text and attribute escaping; characters XML 1.0 cannot carry at all become U+FFFD.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
            default:
                out.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF ? "\u{FFFD}" : scalar)
            }
        }
        return out
    }
}
