import LifeSync

/// One check of a node's wire behaviour, keyed to the section of Protocol/PROTOCOL.md that
/// requires it. A case opens its own connections (each a fresh session) and returns what it found.
package struct ConformanceCase: Sendable {
    /// MUST-level deviations fail every run; SHOULD-level ones (timers outside tolerance, what
    /// the spec describes as the reference's choice) fail only under `--strict`.
    package enum Level: String, Sendable { case must, should }

    /// "7.2", "5.9.3": what the section filter (`--section 7`) matches by prefix.
    package let section: String
    /// "handshake.hello-answered": stable, what reports and tests name.
    package let id: String
    /// One line: what a conforming node does.
    package let expectation: String
    package let level: Level
    let body: @Sendable (ConformanceTarget) throws -> ConformanceOutcome

    init(_ section: String, _ id: String, _ expectation: String, level: Level = .must,
         _ body: @escaping @Sendable (ConformanceTarget) throws -> ConformanceOutcome) {
        precondition(!section.isEmpty && !id.isEmpty && !expectation.isEmpty, "a case names its section, id and expectation")
        self.section = section
        self.id = id
        self.expectation = expectation
        self.level = level
        self.body = body
    }

    /// Whether `--section S` selects this case: "7" takes 7.2 and 7.4, "7.4" not 7.41.
    package func isIn(section filter: String) -> Bool {
        section == filter || section.hasPrefix(filter + ".")
    }
}

/// What a case found.
package enum ConformanceOutcome: Equatable, Sendable {
    /// With a short note of what was seen (counts, the version spoken), or nil.
    case pass(String?)
    /// What differed, with the frames sent and received around it.
    case fail(String)
    case skipped(String)
}

/// A case's check did not hold: what was expected and what came instead, with the connection's
/// last frames. Thrown by the helpers so a case reads as a list of steps.
package struct ConformanceFailure: Error, CustomStringConvertible {
    package var description: String

    init(_ what: String, _ connection: ProbeConnection? = nil) {
        guard let connection, !connection.transcript.isEmpty else {
            description = what
            return
        }
        description = what + "\n  frames (> sent, < received, hex):\n" + ProbeTranscript.render(connection.transcript)
    }
}

/// The case cannot say anything about this target (a capability it lacks, data it does not hold).
package struct ConformanceSkip: Error {
    package var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// One case's result.
package struct ConformanceResult: Sendable {
    package let testCase: ConformanceCase
    package let outcome: ConformanceOutcome
    package let seconds: Double

    /// Counted as a failure: any MUST failure, and SHOULD failures under `--strict`.
    package func failed(strict: Bool) -> Bool {
        guard case .fail = outcome else { return false }
        return testCase.level == .must || strict
    }
}
