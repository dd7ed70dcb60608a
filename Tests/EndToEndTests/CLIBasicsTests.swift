import Foundation
import Testing
import TestSupport

@Suite struct CLIBasicsTests {
    @Test func initPrintsTheSameNodeIDTwice() throws {
        let dir = TemporaryDirectory()
        let db = dir.file("watch.sqlite")
        let first = try LifeSyncBinary.run(["init", "--role", "watch", "--db", db])
        #expect(first.status == 0)
        #expect(first.stdout.hasPrefix("watch_"))
        let second = try LifeSyncBinary.run(["init", "--db", db, "--role", "watch"])
        #expect(second.stdout == first.stdout)
        let other = try LifeSyncBinary.run(["init", "--db", db, "--role", "phone"])
        #expect(other.status == 1)
        #expect(other.stderr.contains("already initialised as watch"))
    }
}
