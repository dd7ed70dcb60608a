import Foundation
import Testing
import TestSupport

/// README's main command must keep telling its story and exit by itself.
@Suite struct DemoTests {
    @Test(.timeLimit(.minutes(2))) func theDemoConvergesResolvesAConflictAndExits() throws {
        let started = Date()
        let result = try LifeSyncBinary.run(["demo"], timeout: 90)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for line in ["✓ converged: phone and mac hold all 3 entries", "the voice note went watch → phone → mac",
                     "✓ converged again", "✓ the conflict resolved the same way everywhere",
                     "✓ edits of different fields merge", "✓ nothing lost"] {
            #expect(result.stdout.contains(line), "missing: \(line)\n\(result.stdout)")
        }
        #expect(!result.stdout.contains("✗"))
        #expect(Date().timeIntervalSince(started) < 60)
    }

    @Test func theDemoKeepsItsReplicasWhenAskedTo() throws {
        let dir = TemporaryDirectory()
        let result = try LifeSyncBinary.run(["demo", "--dir", dir.path], timeout: 90)
        #expect(result.status == 0)
        for role in ["watch", "phone", "mac"] {
            #expect(FileManager.default.fileExists(atPath: dir.file("\(role).sqlite")))
        }
        let status = try LifeSyncBinary.run(["status", "--json", "--db", dir.file("mac.sqlite")])
        #expect(status.stdout.contains("\"entries\": 4"))
    }
}
