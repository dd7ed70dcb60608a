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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, LifeSyncBinary.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if output.contains("SKIP:") {
            print("NamespaceTests: \(output.trimmingCharacters(in: .whitespacesAndNewlines))")
            return
        }
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("1 passed, 0 failed"), "\(output)")
    }
}
