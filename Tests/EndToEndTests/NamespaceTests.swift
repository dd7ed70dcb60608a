import Foundation
import Testing
import TestSupport

/// Real hosts: runs Tests/Network/namespaces.sh, which builds three network namespaces joined by
/// veth links and syncs nodes across them. Where namespaces cannot be made (not root, no iproute2)
/// the script says SKIP and this test says so too.
@Suite struct NamespaceTests {
    @Test(.timeLimit(.minutes(4))) func nodesConvergeAcrossNetworkNamespaces() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Network/namespaces.sh").path
        let result = try Captured.run("/bin/bash", [script, LifeSyncBinary.path], timeout: 200)
        let output = result.stdout + result.stderr
        if output.contains("SKIP:") {
            print("NamespaceTests: \(output.trimmingCharacters(in: .whitespacesAndNewlines))")
            return
        }
        #expect(result.status == 0, "\(output)")
        #expect(output.contains("1 passed, 0 failed"), "\(output)")
    }
}
