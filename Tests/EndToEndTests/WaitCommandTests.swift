import Foundation
import Testing
import TestSupport

/// `lifesync wait --for ID`: returns once the replica holds every ID, and otherwise gives up
/// after its timeout naming what is missing. (Waiting for an ID a peer syncs is the Quick
/// start's, in ReadmeExampleTests.)
@Suite struct WaitCommandTests {
    @Test func returnsAtOnceForWhatIsThereAndNamesWhatIsNotAfterTheTimeout() throws {
        let sandbox = try Sandbox(role: "phone")
        let here = try sandbox.add(["--text", "here"])
        let deleted = try sandbox.add(["--text", "soon gone"])
        #expect(try sandbox.run(["delete", deleted]).status == 0)
        let present = try sandbox.run(["wait", "--for", here, "--for", deleted, "--timeout", "0"])
        #expect(present.status == 0, "\(present.stderr)")
        #expect(present.stdout.isEmpty)

        let absent = "watch_550e8400-e29b-41d4-a716-446655440000"
        let started = Date()
        let missing = try sandbox.run(["wait", "--for", here, "--for", absent, "--timeout", "0.3"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("after 0.3 s: \(absent)") && !missing.stderr.contains(here), "\(missing.stderr)")
        #expect(missing.stderr.contains("no lifesync serve is serving this replica"))
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test(arguments: [
        (["wait"], "--for"),
        (["wait", "--for", "not-an-id"], "--for"),
        (["wait", "--for", "watch_550e8400-e29b-41d4-a716-446655440000", "--timeout", "-1"], "--timeout"),
        (["wait", "--for", "watch_550e8400-e29b-41d4-a716-446655440000", "--timeout", "3601"], "--timeout"),
    ])
    func refusesABadCommandLineNamingTheOption(arguments: [String], option: String) throws {
        let sandbox = try Sandbox(role: "phone")
        let result = try sandbox.run(arguments)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(option), "\(result.stderr)")
    }
}
