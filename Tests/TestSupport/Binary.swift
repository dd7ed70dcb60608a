import Foundation
import LifeSyncRuntime

/// Runs the built `lifesync` binary as a user would, capturing what it prints.
package enum LifeSyncBinary {
    /// The binary beside the test bundle in the build folder (`.build/debug/lifesync`).
    package static var path: String {
        if let override = ProcessInfo.processInfo.environment["LIFESYNC_BINARY"] { return override }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = url.appendingPathComponent("lifesync").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            url = url.deletingLastPathComponent()
        }
        return FileManager.default.currentDirectoryPath + "/.build/debug/lifesync"
    }

    /// The environment a test runs the binary with: the test's own, less `LIFESYNC_DB`, the
    /// write marks (`FileWriteMarks`) in a folder of the test run's, not the user's state folder,
    /// and UTC for the times the CLI shows and the days it reads (a test of local time sets TZ).
    package static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "LIFESYNC_DB")
        env["TZ"] = "UTC"
        if env["LIFESYNC_STATE_DIR"] == nil { env["LIFESYNC_STATE_DIR"] = NSTemporaryDirectory() + "lifesync-test-state" }
        return env
    }

    package struct Result: Sendable {
        package var status: Int32
        package var stdout: String
        package var stderr: String
    }

    /// Runs `lifesync arguments…` with `input` on stdin; kills it after `timeout` seconds (its
    /// status is then that of a SIGKILL, 137).
    @discardableResult
    package static func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:],
                           directory: String? = nil, timeout: Double = 60) throws -> Result {
        var env = Self.environment
        for (key, value) in environment { env[key] = value }
        return try Captured.run(path, arguments, input: input, environment: env, directory: directory, timeout: timeout)
    }
}

/// A child run to its end with its input from, and its output to, temporary files (never pipes,
/// see `Subprocess`), every wait bounded.
package enum Captured {
    package static func run(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil,
                           directory: String? = nil, timeout: Double = 60) throws -> LifeSyncBinary.Result {
        let base = NSTemporaryDirectory() + "lifesync-run-\(UUID().uuidString)"
        let inFile = base + ".in", outFile = base + ".out", errFile = base + ".err"
        defer { for file in [inFile, outFile, errFile] { try? FileManager.default.removeItem(atPath: file) } }
        guard FileManager.default.createFile(atPath: inFile, contents: Data((input ?? "").utf8)) else {
            throw Subprocess.SpawnError(executable: executable, code: errno)  // its standard input could not be written
        }
        let child = try Subprocess(executable, arguments, environment: environment, directory: directory,
                                   standardInput: inFile, standardOutput: outFile, standardError: errFile)
        let ended = child.wait(timeout: timeout) ?? child.kill() ?? .unknown
        return LifeSyncBinary.Result(status: ended.exitStatus,
                                     stdout: (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? "",
                                     stderr: (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? "")
    }
}
