import Foundation
import LifeSyncRuntime
import Testing
import TestSupport

/// A temporary directory with one replica file in it, and shortcuts for running the built
/// `lifesync` binary against that file the way a user would.
final class Sandbox {
    let directory: TemporaryDirectory
    let db: String
    /// The node ID `init` printed, when the sandbox was initialised.
    private(set) var nodeID = ""

    /// A sandbox whose replica is initialised with `role` (none when `role` is nil).
    init(role: String? = "phone", fileName: String = "replica.sqlite", sourceLocation: SourceLocation = #_sourceLocation) throws {
        directory = TemporaryDirectory("lifesync-e2e")
        db = directory.file(fileName)
        if let role {
            let result = try LifeSyncBinary.run(["init", "--role", role, "--db", db])
            try #require(result.status == 0, "init failed: \(result.stderr)", sourceLocation: sourceLocation)
            nodeID = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    func file(_ name: String) -> String { directory.file(name) }

    /// Runs `lifesync arguments… --db DB`.
    @discardableResult
    func run(_ arguments: [String], input: String? = nil) throws -> LifeSyncBinary.Result {
        try LifeSyncBinary.run(arguments + ["--db", db], input: input)
    }

    /// Adds an entry with `add` flags and returns the printed ID; the add must succeed.
    @discardableResult
    func add(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(["add"] + arguments)
        try #require(result.status == 0, "add \(arguments) failed: \(result.stderr)", sourceLocation: sourceLocation)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Adds an entry from a JSON object text and returns the printed ID.
    @discardableResult
    func addJSON(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try add(["--json", json], sourceLocation: sourceLocation)
    }

    /// `status --json`, parsed.
    func status(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let result = try run(["status", "--json"])
        try #require(result.status == 0, "status failed: \(result.stderr)", sourceLocation: sourceLocation)
        return try #require(try parseJSON(result.stdout) as? [String: Any], sourceLocation: sourceLocation)
    }

    /// The live entry count `status --json` reports.
    func entryCount(sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        try #require(integer(try status(sourceLocation: sourceLocation)["entries"]), sourceLocation: sourceLocation)
    }

    /// `list --json` with extra filter arguments, parsed.
    func list(_ arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        let result = try run(["list", "--json"] + arguments)
        try #require(result.status == 0, "list \(arguments) failed: \(result.stderr)", sourceLocation: sourceLocation)
        return try #require(try parseJSON(result.stdout) as? [[String: Any]], sourceLocation: sourceLocation)
    }

    /// `get ID`, parsed.
    func get(_ id: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let result = try run(["get", id])
        try #require(result.status == 0, "get \(id) failed: \(result.stderr)", sourceLocation: sourceLocation)
        return try #require(try parseJSON(result.stdout) as? [String: Any], sourceLocation: sourceLocation)
    }

    /// Runs a statement through the system's sqlite3 shell against the replica.
    func sqlite(_ sql: String) throws -> SQLiteShell.Result { try SQLiteShell.run(db, sql) }
}

/// The system's `sqlite3` command line shell, run as a separate process.
enum SQLiteShell {
    static let path = "/usr/bin/sqlite3"

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Output lines without the trailing empty one.
        var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty } }
    }

    static func run(_ database: String, _ sql: String, timeout: Double = 20) throws -> Result {
        let result = try Captured.run(path, ["-batch", database, sql], timeout: timeout)
        return Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }
}

/// A `lifesync` process started without waiting, its output going to files so it never blocks.
final class BackgroundRun {
    let arguments: [String]
    let process: Subprocess
    let outFile: String
    let errFile: String

    init(_ arguments: [String], in directory: TemporaryDirectory, label: String) throws {
        self.arguments = arguments
        outFile = directory.file("\(label).out")
        errFile = directory.file("\(label).err")
        let environment = LifeSyncBinary.environment
        process = try Subprocess(LifeSyncBinary.path, arguments, environment: environment, standardOutput: outFile, standardError: errFile)
    }

    var status: Int32 { process.poll()?.exitStatus ?? -1 }
    var stdout: String { (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? "" }
}

struct TimedOut: Error, CustomStringConvertible {
    var count: Int
    var description: String { "\(count) process(es) still running at the deadline; killed" }
}

/// Waits for every process, at most `timeout` seconds in all; stragglers are killed and
/// reported as an error.
func waitBounded(_ processes: [Subprocess], timeout: Double) throws {
    let deadline = Date().addingTimeInterval(timeout)
    var stragglers = 0
    for process in processes where process.wait(timeout: max(0, deadline.timeIntervalSinceNow)) == nil {
        process.kill()
        stragglers += 1
    }
    if stragglers > 0 { throw TimedOut(count: stragglers) }
}

func parseJSON(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}

/// A JSON number as an Int, whichever bridged type Foundation chose for it.
func integer(_ value: Any?) -> Int? {
    switch value {
    case let n as Int: return n
    case let n as Double: return n == n.rounded() ? Int(n) : nil
    case let n as NSNumber: return n.intValue
    default: return nil
    }
}

func double(_ value: Any?) -> Double? {
    switch value {
    case let n as Double: return n
    case let n as Int: return Double(n)
    case let n as NSNumber: return n.doubleValue
    default: return nil
    }
}

/// True for `{role}_{uuid-v4}` in lowercase.
func isIdentifier(_ text: String, role: String) -> Bool {
    guard text.hasPrefix(role + "_") else { return false }
    return isUUIDv4(String(text.dropFirst(role.count + 1)))
}

func isUUIDv4(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    guard bytes.count == 36 else { return false }
    for (i, b) in bytes.enumerated() {
        if [8, 13, 18, 23].contains(i) {
            if b != UInt8(ascii: "-") { return false }
        } else if !((b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66)) {
            return false
        }
    }
    return bytes[14] == UInt8(ascii: "4") && "89ab".utf8.contains(bytes[19])
}

/// A new entry ID with `prefix`, as another source would make it.
func newEntryID(_ prefix: String = "drafts") -> String { prefix + "_" + UUID().uuidString.lowercased() }

/// The process ended by itself with one of the documented codes and printed no crash report.
func expectNoCrash(_ result: LifeSyncBinary.Result, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect([0, 1, 2].contains(result.status), "exit status \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
    for marker in ["Fatal error", "Stack dump", "Current stack trace", "Segmentation fault", "Illegal instruction",
                   "Assertion failed", "Precondition failed", "💣"] {
        #expect(!result.stderr.contains(marker), "stderr shows a crash: \(result.stderr)", sourceLocation: sourceLocation)
    }
}

/// A refusal: exit `status`, stderr mentions every one of `needles`, nothing on stdout, no crash.
func expectRefused(_ result: LifeSyncBinary.Result, status: Int32, mentioning needles: [String],
                   sourceLocation: SourceLocation = #_sourceLocation) {
    expectNoCrash(result, sourceLocation: sourceLocation)
    #expect(result.status == status, "expected exit \(status), got \(result.status); stderr: \(result.stderr)",
            sourceLocation: sourceLocation)
    for needle in needles {
        #expect(result.stderr.contains(needle), "stderr does not mention \"\(needle)\": \(result.stderr)",
                sourceLocation: sourceLocation)
    }
    #expect(result.stdout.isEmpty, "a refused command printed to stdout: \(result.stdout)", sourceLocation: sourceLocation)
}

/// Splits RFC 4180 CSV into records of fields.
func parseCSV(_ text: String) -> [[String]] {
    var records: [[String]] = []
    var record: [String] = []
    var field = ""
    var quoted = false
    var chars = Array(text)[...]
    var atFieldStart = true
    while let c = chars.popFirst() {
        if quoted {
            if c == "\"" {
                if chars.first == "\"" { chars.removeFirst(); field.append("\"") } else { quoted = false }
            } else {
                field.append(c)
            }
            continue
        }
        switch c {
        case "\"" where atFieldStart:
            quoted = true
            atFieldStart = false
        case ",":
            record.append(field); field = ""; atFieldStart = true
        case "\r\n", "\n", "\r":
            record.append(field); field = ""; atFieldStart = true
            records.append(record); record = []
        default:
            field.append(c); atFieldStart = false
        }
    }
    if !field.isEmpty || !record.isEmpty { record.append(field); records.append(record) }
    return records
}

/// The bytes of a file, or nil when it cannot be read.
func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

func fileExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
