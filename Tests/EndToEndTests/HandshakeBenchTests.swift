import Foundation
import LifeSyncRuntime
import Testing
import TestSupport

/// `lifesync bench handshake` runs end to end: every cycle completes and the report has its
/// figures and verdict. Never its timing: speed targets live in the benchmark, not in tests.
@Suite struct HandshakeBenchTests {
    @Test(.timeLimit(.minutes(2))) func everyCycleCompletesAndTheReportHasItsShape() throws {
        let directory = TemporaryDirectory("lifesync-bench-handshake")
        let result = try LifeSyncBinary.run(["bench", "handshake", "--cycles", "20", "--json", "--dir", directory.path])
        try #require(result.status == 0, "bench handshake failed: \(result.stderr)")
        let report = try #require(try parseJSON(result.stdout) as? [String: Any])
        let figures = try #require(report["figures"] as? [String: Any])
        #expect(integer(figures["cycles completed"]) == 20)
        for name in ["median cycle", "p90 cycle", "max cycle", "median of the first 10 cycles", "median of the last 10 cycles"] {
            let value = try #require(double(figures[name]), "no \(name) in \(figures.keys)")
            #expect(value > 0, "\(name)")
        }
        // The node's RSS, read from its /proc/PID/status while it serves.
        for name in ["node RSS after 10 cycles", "node RSS after 20 cycles"] {
            let value = try #require(double(figures[name]), "no \(name) in \(figures.keys)")
            #expect(value > 1, "\(name)")
        }
        let verdict = try #require(report["verdict"] as? String)
        #expect(verdict.hasPrefix("meets the targets") || verdict.hasPrefix("misses the targets"), "\(verdict)")
    }

    @Test func anUnknownBenchmarkNamesHandshake() throws {
        let result = try LifeSyncBinary.run(["bench", "nonesuch"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("handshake"), "\(result.stderr)")
    }
}
