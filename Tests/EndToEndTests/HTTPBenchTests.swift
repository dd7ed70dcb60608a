import Foundation
import LifeSyncRuntime
import Testing
import TestSupport

/// `lifesync bench http` runs end to end: every POSTed entry lands, every read is answered, and
/// the report has its figures. Never its timing: speed targets live in the benchmark.
@Suite struct HTTPBenchTests {
    @Test(.timeLimit(.minutes(3))) func everyWriteLandsAndEveryReadIsAnswered() throws {
        let directory = TemporaryDirectory("lifesync-bench-http")
        // Without datasette on the PATH: the comparison is named as skipped, never faked.
        let result = try LifeSyncBinary.run(["bench", "http", "--count", "2500", "--clients", "3", "--requests", "8", "--json", "--dir", directory.path],
                                            environment: ["PATH": "/usr/bin:/bin"], timeout: 170)
        try #require(result.status == 0, "bench http failed: \(result.stderr)")
        let report = try #require(try parseJSON(result.stdout) as? [String: Any])
        let figures = try #require(report["figures"] as? [String: Any])
        for name in ["raw SQLite inserts", "lifesync import (process)", "POST /api/entries, batches of 1000", "ratio POST / import",
                     "GET /api/entries requests/s", "GET /api/entries p50", "GET /api/entries p99", "  p50 category", "  p50 text"] {
            let value = try #require(double(figures[name]), "no \(name) in \(figures.keys.sorted())")
            #expect(value > 0, "\(name)")
        }
        #expect(figures.keys.allSatisfy { !$0.hasPrefix("datasette") }, "\(figures.keys.sorted())")
        let verdict = try #require(report["verdict"] as? String)
        #expect(verdict.contains("POST ≥ 0.5× import") && verdict.contains("datasette not on PATH"), "\(verdict)")
    }
}
