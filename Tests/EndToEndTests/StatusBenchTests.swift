import Foundation
import LifeSyncRuntime
import Testing
import TestSupport

/// `lifesync bench status` runs end to end: the replica is made, every process and request it
/// times answers, and the report has its figures and floors. Never its timing: the targets live
/// in the benchmark's verdict.
@Suite struct StatusBenchTests {
    @Test(.timeLimit(.minutes(3))) func everyQuestionIsAnsweredAndReported() throws {
        let directory = TemporaryDirectory("lifesync-bench-status")
        let result = try LifeSyncBinary.run(["bench", "status", "--count", "3000", "--runs", "2", "--json", "--dir", directory.path], timeout: 170)
        try #require(result.status == 0, "bench status failed: \(result.stderr)")
        let report = try #require(try parseJSON(result.stdout) as? [String: Any])
        let figures = try #require(report["figures"] as? [String: Any])
        for name in ["status (process)", "stats (process)", "GET /api/status", "GET /api/entries/stats", "dashboard first render"] {
            for suffix in [" median", " min", " max"] {
                let value = try #require(double(figures[name + suffix]), "no \(name + suffix) in \(figures.keys.sorted())")
                #expect(value > 0, "\(name + suffix)")
            }
        }
        #expect(figures.keys.contains { $0.hasPrefix("  floor: sqlite3 count(*)") }, "\(figures.keys.sorted())")
        let verdict = try #require(report["verdict"] as? String)
        #expect(verdict.hasPrefix("each under 100 ms by the median"), "\(verdict)")
    }
}
