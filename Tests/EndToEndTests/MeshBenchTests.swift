import Foundation
import LifeSyncRuntime
import Testing
import TestSupport

/// `lifesync bench mesh` runs end to end: every node converges, the one write reaches all of
/// them, and the report says what each node received beyond what it lacked. Never its timing.
/// (It holds a test thread while the processes run: kept small, about 15 s alone, 5 of them the idle wait.)
@Suite struct MeshBenchTests {
    @Test(.timeLimit(.minutes(3))) func threeNodesConvergeAndAreReported() throws {
        let directory = TemporaryDirectory("lifesync-bench-mesh")
        let result = try LifeSyncBinary.run(["bench", "mesh", "--nodes", "3", "--count", "200", "--json", "--dir", directory.path], timeout: 170)
        try #require(result.status == 0, "bench mesh failed: \(result.stderr)")
        let report = try #require(try parseJSON(result.stdout) as? [String: Any])
        let figures = try #require(report["figures"] as? [String: Any])
        for name in ["two nodes converge", "3 nodes converge", "ratio to two nodes", "one write reaches every node",
                     "idle RSS, median node", "idle RSS, largest node"] {
            let value = try #require(double(figures[name]), "no \(name) in \(figures.keys.sorted())")
            #expect(value > 0, "\(name)")
        }
        // Every node received at least what it lacked: the counters saw every change arrive.
        let received = try #require(double(figures["received / lacked, worst node"]))
        #expect(received >= 1, "\(received)")
        #expect(try #require(double(figures["changes received more than once"])) >= 0)
        // Read from each node's /metrics: 1 until some change comes twice; relay choice keeps it
        // at 2 at most (PROTOCOL.md §7.4), and three nodes have one relay to choose at most.
        let copies = try #require(double(figures["most copies of one change, any node"]))
        #expect((1...2).contains(copies), "\(copies)")
    }
}
