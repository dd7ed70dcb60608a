import Foundation
import Glibc
import LifeSyncRuntime
import Testing
import TestSupport

/// The README's examples, run as written: the Quick start pasted as one block into bash, the
/// library example, and the simulator's scenario line from the repository root.
@Suite struct ReadmeExampleTests {
    /// The Quick start block, verbatim but for its port (7002 becomes a free one), in a fresh
    /// directory. `swift build -c release` is a stub that checks its arguments (the test runner
    /// built the binary already), and `.build/release/lifesync` there is the built binary.
    @Test(.timeLimit(.minutes(5))) func theQuickStartPastesAsOneBlock() throws {
        let block = try #require(try Readme.codeBlocks(under: "Quick start").first)
        try #require(block.contains("7002"), "the Quick start no longer uses port 7002; update this test")
        // A port another program grabbed between our probe and the phone's bind is tried anew.
        var run = try Self.runQuickStart(block)
        for _ in 0..<2 where run.result.status != 0 && run.result.stderr.contains("cannot listen") {
            run = try Self.runQuickStart(block)
        }
        let (result, directory, stopped) = run
        #expect(result.status == 0, "stdout:\n\(result.stdout)\nstderr:\n\(result.stderr)")
        #expect(stopped, "kill %1 %2 left a serve running")
        #expect(result.stdout.contains("slept well"), "the first list shows the mood")
        #expect(result.stdout.contains("Buy groceries"), "the search finds the note")
        // The nodes' logs went to their files, not into the terminal.
        #expect(!result.stdout.contains("[phone]") && !result.stdout.contains("[watch]") && !result.stdout.contains(") serving "),
                "a node's log reached the terminal:\n\(result.stdout)")
        let phoneLog = (try? String(contentsOfFile: directory.file("phone.log"), encoding: .utf8)) ?? ""
        #expect(phoneLog.contains("serving") && phoneLog.contains("[phone] in sync with"), "phone.log:\n\(phoneLog)")
    }

    /// What the Quick start's first lines expect in `directory`: `swift build -c release` (a stub
    /// in the returned folder, to put first on the PATH, that checks its arguments: the test
    /// runner built the binary already) and `.build/release/lifesync` (the built binary).
    static func quickStartTools(in directory: TemporaryDirectory) throws -> String {
        let bin = directory.file("bin"), release = directory.file(".build/release")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: release, withIntermediateDirectories: true)
        try #"[ "$*" = "build -c release" ] || { echo "unexpected: swift $*" >&2; exit 1; }"#.write(toFile: bin + "/swift", atomically: true, encoding: .utf8)
        chmod(bin + "/swift", 0o755)
        try FileManager.default.createSymbolicLink(atPath: release + "/lifesync", withDestinationPath: LifeSyncBinary.path)
        return bin
    }

    /// Runs `block` with bash -e in a fresh directory (any failing command fails it, as a user
    /// would see it fail); afterwards no serve it started is left running, whatever happened.
    static func runQuickStart(_ block: String) throws -> (result: LifeSyncBinary.Result, directory: TemporaryDirectory, stopped: Bool) {
        let directory = TemporaryDirectory("lifesync-quickstart")
        let bin = try quickStartTools(in: directory)
        let port = try freeLoopbackPort()
        try block.replacingOccurrences(of: "7002", with: String(port)).write(toFile: directory.file("quickstart.sh"), atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "LIFESYNC_DB")
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let result = try Captured.run("/bin/bash", ["-e", "quickstart.sh"], environment: environment, directory: directory.path, timeout: 60)
        // `kill %1 %2` stops the serves; after a failure or the timeout, this does.
        let replicas = [directory.file("phone.sqlite"), directory.file("watch.sqlite")]
        let stopped = waitUntil(timeout: 10) { replicas.allSatisfy { ServeLock.holder(replicaPath: $0) == nil } }
        for replica in replicas { if let pid = ServeLock.holder(replicaPath: replica), pid > 0 { kill(pid, SIGKILL) } }
        return (result, directory, stopped)
    }

    /// The library section's code is Examples/Library/main.swift, which the package builds; run
    /// in a fresh directory with standard input closed, it serves, stops and exits.
    @Test(.timeLimit(.minutes(3))) func theLibraryExampleIsBuiltAndRuns() throws {
        let block = try #require(try Readme.codeBlocks(under: "The library").first)
        let source = try String(contentsOfFile: Readme.root + "/Examples/Library/main.swift", encoding: .utf8)
        #expect(block == source, "README's library example and Examples/Library/main.swift differ")
        let binary = URL(fileURLWithPath: LifeSyncBinary.path).deletingLastPathComponent().appendingPathComponent("library-example").path
        let directory = TemporaryDirectory("lifesync-library")
        let result = try Captured.run(binary, [], directory: directory.path, timeout: 30)
        #expect(result.status == 0, "stdout:\n\(result.stdout)\nstderr:\n\(result.stderr)")
        #expect(result.stdout.contains("1 note(s), the newest tagged [\"x\"]"))
        #expect(result.stdout.contains("serving on 127.0.0.1:"))
        #expect(result.stdout.contains("[phone] shutting down"), "the node stopped cleanly, naming itself:\n\(result.stdout)")
        #expect(FileManager.default.fileExists(atPath: directory.file("phone.sqlite")))
    }

    /// `lifesync simulate --scenario …` exactly as the README's simulator block gives it, from
    /// the repository root.
    @Test(.timeLimit(.minutes(2))) func theScenarioLineRunsFromTheRepositoryRoot() throws {
        let lines = try Readme.codeBlocks(under: "The simulator")[0].split(separator: "\n").filter { $0.contains("--scenario ") }
        try #require(!lines.isEmpty, "the README runs no scenario")
        for line in lines {
            let command = line.split(separator: "#")[0].split(separator: " ").map(String.init)
            try #require(command.first == "lifesync", "not a lifesync command: \(line)")
            let result = try LifeSyncBinary.run(Array(command.dropFirst()), directory: Readme.root, timeout: 90)
            #expect(result.status == 0, "\(line)\n\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains(": ok"), "\(result.stdout)")
        }
    }
}
