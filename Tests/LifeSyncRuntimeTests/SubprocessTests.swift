import Foundation
import Glibc
import LifeSyncRuntime
import Testing
import TestSupport

/// `Subprocess`: every way a child can end is seen without Foundation's `Process`, every wait
/// is bounded, and nothing of ours leaks into the child.
@Suite struct SubprocessTests {
    @Test func exitCodesSignalsAndOutputFiles() throws {
        let directory = TemporaryDirectory("lifesync-subprocess")
        let out = directory.file("out"), input = directory.file("in")
        try Data("from a file\n".utf8).write(to: URL(fileURLWithPath: input))
        let cat = try Subprocess("/bin/cat", [], standardInput: input, standardOutput: out)
        #expect(cat.wait(timeout: 10) == .exited(0))
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "from a file\n")

        let failing = try Subprocess("/bin/sh", ["-c", "echo oops >&2; exit 3"], standardOutput: directory.file("o2"), standardError: directory.file("e2"))
        #expect(failing.wait(timeout: 10)?.exitStatus == 3)
        #expect(try String(contentsOfFile: directory.file("e2"), encoding: .utf8) == "oops\n")
        #expect(try String(contentsOfFile: directory.file("o2"), encoding: .utf8) == "")

        let here = try Subprocess("/bin/pwd", [], directory: directory.path, standardOutput: directory.file("pwd"))
        #expect(here.wait(timeout: 10) == .exited(0))
        #expect(try String(contentsOfFile: directory.file("pwd"), encoding: .utf8) == directory.path + "\n")
    }

    @Test func aWaitIsBoundedAndAKilledChildIsReported() throws {
        let sleeper = try Subprocess("/bin/sleep", ["30"])
        let start = Date()
        #expect(sleeper.wait(timeout: 0.2) == nil)
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(sleeper.isRunning)
        #expect(sleeper.terminate(grace: 5) == .signalled(SIGTERM))
        #expect(sleeper.poll()?.exitStatus == 128 + SIGTERM)
        #expect(!sleeper.isRunning)
        // Ended already: a signal is not sent to a pid that may be someone else's now.
        sleeper.signal(SIGKILL)
        #expect(sleeper.poll() == .signalled(SIGTERM))
    }

    @Test func manyChildrenAtOnceAllReportTheirEnd() throws {
        let children = try (0..<40).map { i in try Subprocess("/bin/sh", ["-c", "exit \(i % 7)"]) }
        for (i, child) in children.enumerated() { #expect(child.wait(timeout: 20) == .exited(Int32(i % 7))) }
    }

    @Test func descriptorsOfOursDoNotLeakIntoTheChild() throws {
        let directory = TemporaryDirectory("lifesync-subprocess-fds")
        // A descriptor opened without O_CLOEXEC, as the tests' sockets are.
        let fd = open(directory.file("held"), O_CREAT | O_WRONLY, 0o644)
        try #require(fd > 2)
        defer { close(fd) }
        let listing = try Subprocess("/bin/ls", ["/proc/self/fd"], standardOutput: directory.file("fds"))
        #expect(listing.wait(timeout: 10) == .exited(0))
        let open = try String(contentsOfFile: directory.file("fds"), encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        // 0, 1, 2, and the one ls opened to read /proc/self/fd.
        #expect(!open.contains(fd) || open.count <= 4, "the child holds \(open)")
        #expect(open.count <= 4, "the child holds \(open)")
    }

    @Test func aMissingExecutableIsAClearError() {
        #expect(throws: Subprocess.SpawnError.self) { try Subprocess("/nonexistent/lifesync", []) }
    }
}
