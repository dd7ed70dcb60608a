import Foundation
import Glibc
import LifeSyncRuntime
import Testing
import TestSupport

/// `ProcessControl.stopProcess`, which the process tests use to measure a node "while frozen":
/// a busy writer, stopped, must not write another byte (plain `kill(pid, SIGSTOP)` returns
/// before the process has stopped, and a file measured right after it could still grow).
@Suite(.serialized) struct ProcessControlTests {
    /// `dd` writing 4 MiB at a time to `path` (64 MiB at most): it spends most of its time inside
    /// write(2), where a stop signal takes effect only once the write is done.
    private static func busyWriter(_ path: String) throws -> Subprocess {
        try Subprocess("/bin/dd", ["if=/dev/zero", "of=\(path)", "bs=4M", "count=16"], standardError: "/dev/null")
    }

    private static func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : -1
    }

    @Test(.timeLimit(.minutes(3)))
    func aStoppedWriterWritesNothingMoreFromTheMomentStopReturns() throws {
        let directory = TemporaryDirectory("lifesync-stop")
        var measured = 0
        for round in 0..<12 {
            let path = directory.file("out-\(round)")
            let writer = try Self.busyWriter(path)
            defer { writer.kill() }
            let pid = writer.pid
            let started = Date().addingTimeInterval(10)
            for _ in 0..<100_000 {
                if Self.size(path) >= 1 || Date() >= started { break }
                usleep(100)
            }
            try #require(Self.size(path) >= 1, "the writer never wrote")

            guard ProcessControl.stopProcess(pid) else {
                // It may have finished before the stop: nothing to measure this round.
                let state = ProcessControl.state(of: pid)
                try #require(state == nil || state == "Z", "round \(round): the writer did not stop (state \(state.map(String.init) ?? "-"))")
                continue
            }
            #expect(ProcessControl.isStopped(pid))
            let noted = Self.size(path)
            usleep(20_000)
            #expect(Self.size(path) == noted, "round \(round): the file grew from \(noted) to \(Self.size(path)) bytes after the writer was reported stopped")
            measured += 1
        }
        #expect(measured > 0, "the writer always finished before it could be stopped")
    }

    @Test func aProcessThatIsGoneIsNotReportedStopped() throws {
        let process = try Subprocess("/bin/true", [])
        #expect(process.wait(timeout: 10) == .exited(0))
        #expect(!ProcessControl.stopProcess(process.pid, timeout: 1))
        #expect(ProcessControl.state(of: process.pid) == nil)
    }
}
