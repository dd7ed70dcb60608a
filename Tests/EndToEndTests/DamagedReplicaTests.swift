import Foundation
import Testing
import TestSupport

/// Files that are not (usable) replicas: refused with exit 1 and a message saying what to do,
/// never a crash, and never modified.
@Suite struct DamagedReplicaTests {
    /// Every command that opens the replica, with arguments that would otherwise be valid.
    static func commands(id: String = newEntryID("phone")) -> [(arguments: [String], input: String?)] {
        [
            (["status"], nil), (["status", "--json"], nil), (["list"], nil), (["list", "--json"], nil),
            (["add", "--text", "hello"], nil), (["add", "--json", #"{"category": "note"}"#], nil),
            (["get", id], nil), (["update", id, "--json", "{}"], nil), (["delete", id], nil),
            (["import", "-"], #"{"timestamp": "2026-11-22T08:00:00Z"}"#),
            (["export"], nil), (["export", "--format", "csv"], nil), (["stats"], nil), (["conflicts"], nil),
        ]
    }

    /// Names of the files in `directory`.
    static func listing(_ directory: TemporaryDirectory) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    @Test func aMissingReplicaPointsToInit() throws {
        let directory = TemporaryDirectory("lifesync-e2e-missing")
        let db = directory.file("absent.sqlite")
        for (arguments, input) in Self.commands() {
            let result = try LifeSyncBinary.run(arguments + ["--db", db], input: input)
            expectRefused(result, status: 1, mentioning: ["no replica at \(db)", "lifesync init --role"])
            #expect(!fileExists(db), "\(arguments) created the replica file")
        }
        // The default ./lifesync.sqlite too.
        let result = try LifeSyncBinary.run(["list"], directory: directory.path)
        expectRefused(result, status: 1, mentioning: ["lifesync.sqlite", "lifesync init"])
        #expect(try Self.listing(directory).isEmpty)
    }

    @Test func initInAMissingDirectoryIsRefused() throws {
        let directory = TemporaryDirectory("lifesync-e2e-missing")
        let db = directory.file("no/such/dir/replica.sqlite")
        expectRefused(try LifeSyncBinary.run(["init", "--role", "phone", "--db", db]), status: 1, mentioning: ["cannot open", db])
        #expect(try Self.listing(directory).isEmpty)
    }

    @Test func anEmptyFileIsNotAReplicaUntilInit() throws {
        let sandbox = try Sandbox(role: nil)
        #expect(FileManager.default.createFile(atPath: sandbox.db, contents: Data()))
        expectRefused(try sandbox.run(["status"]), status: 1, mentioning: ["no replica at", "lifesync init"])
        expectRefused(try sandbox.run(["add", "--text", "x"]), status: 1, mentioning: ["lifesync init"])
        let initResult = try sandbox.run(["init", "--role", "watch"])
        #expect(initResult.status == 0, "\(initResult.stderr)")
        #expect(isIdentifier(initResult.stdout.trimmingCharacters(in: .whitespacesAndNewlines), role: "watch"))
        try sandbox.add(["--text", "now it works"])
        #expect(try sandbox.entryCount() == 1)
    }

    @Test(arguments: [
        ("random bytes", Data((0..<8192).map { _ in UInt8.random(in: 0...255) })),
        ("a CSV file", Data("id,text\n1,\"hello, world\"\n".utf8)),
        ("a long text file", Data(String(repeating: "Dear diary, today I synced nothing.\n", count: 200).utf8)),
    ])
    func aFileThatIsNotSQLiteIsRefusedUntouched(kind: String, contents: Data) throws {
        let sandbox = try Sandbox(role: nil)
        #expect(FileManager.default.createFile(atPath: sandbox.db, contents: contents))
        let files = try Self.listing(sandbox.directory)
        for (arguments, input) in Self.commands() + [(["init", "--role", "phone"], nil)] {
            let result = try sandbox.run(arguments, input: input)
            expectRefused(result, status: 1, mentioning: ["not a LifeSync replica", "not a SQLite database"])
            #expect(fileBytes(sandbox.db) == contents, "\(arguments) modified \(kind)")
            #expect(try Self.listing(sandbox.directory) == files, "\(arguments) left files beside \(kind)")
        }
    }

    @Test func aSQLiteDatabaseOfAnotherProgramIsRefusedUntouched() throws {
        let sandbox = try Sandbox(role: nil)
        let made = try SQLiteShell.run(sandbox.db, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES ('soup');")
        try #require(made.status == 0, "\(made.stderr)")
        let before = try #require(fileBytes(sandbox.db))
        for (arguments, input) in Self.commands() + [(["init", "--role", "mac"], nil)] {
            let result = try sandbox.run(arguments, input: input)
            expectRefused(result, status: 1, mentioning: ["not a LifeSync replica", "another program", "recipes"])
            #expect(fileBytes(sandbox.db) == before, "\(arguments) modified the other program's database")
        }
        #expect(try sandbox.sqlite("SELECT name FROM recipes").stdout == "soup\n")
    }

    /// Many programs version their SQLite files with `PRAGMA user_version` too.
    @Test(arguments: [1, 3])
    func aVersionedSQLiteDatabaseOfAnotherProgramIsRefusedUntouched(userVersion: Int) throws {
        let sandbox = try Sandbox(role: nil)
        let made = try SQLiteShell.run(sandbox.db, "CREATE TABLE recipes(name TEXT); PRAGMA user_version = \(userVersion);")
        try #require(made.status == 0, "\(made.stderr)")
        let before = try #require(fileBytes(sandbox.db))
        for (arguments, input) in [(["status"], nil), (["list"], nil), (["init", "--role", "mac"], nil)] as [([String], String?)] {
            let result = try sandbox.run(arguments, input: input)
            expectRefused(result, status: 1, mentioning: ["not a LifeSync replica", "another program", "recipes"])
            #expect(fileBytes(sandbox.db) == before, "\(arguments) modified the other program's database")
        }
        #expect(try sandbox.sqlite("PRAGMA journal_mode").stdout == "delete\n")
        #expect(try sandbox.sqlite("SELECT name FROM sqlite_master").stdout == "recipes\n")
        #expect(try sandbox.sqlite("PRAGMA user_version").stdout == "\(userVersion)\n")
    }

    /// A replica of 40 entries, checkpointed into the main file so truncating it loses data.
    static func populatedReplica() throws -> Sandbox {
        let sandbox = try Sandbox()
        let padding = String(repeating: "x", count: 400)
        let records = (0..<40).map { i in #"{"timestamp": "2026-11-22T08:00:\#(String(format: "%02d", i))Z", "data": {"text": "entry \#(i) \#(padding)"}}"# }
        let result = try sandbox.run(["import", "-"], input: records.joined(separator: "\n"))
        try #require(result.status == 0, "\(result.stderr)")
        try #require(try sandbox.sqlite("PRAGMA wal_checkpoint(TRUNCATE)").status == 0)
        try #require(!fileExists(sandbox.db + "-wal") || (try FileManager.default.attributesOfItem(atPath: sandbox.db + "-wal")[.size] as? Int) == 0)
        return sandbox
    }

    @Test(arguments: ["50 bytes", "one page", "half", "all but the last page"])
    func aTruncatedReplicaIsRefusedUntouched(cut: String) throws {
        let sandbox = try Self.populatedReplica()
        let full = try #require(fileBytes(sandbox.db))
        try #require(full.count >= 8 * 4096, "the replica is only \(full.count) bytes")
        let keep = switch cut {
        case "50 bytes": 50
        case "one page": 4096
        case "half": full.count / 2 / 4096 * 4096
        default: full.count - 4096
        }
        let truncated = full.prefix(keep)
        try truncated.write(to: URL(fileURLWithPath: sandbox.db))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: sandbox.db + suffix) }

        for (arguments, input) in Self.commands() {
            let result = try sandbox.run(arguments, input: input)
            expectRefused(result, status: 1, mentioning: ["not a LifeSync replica", "damaged"])
            #expect(fileBytes(sandbox.db) == truncated, "\(arguments) modified the truncated replica")
        }
    }

    @Test func aNewerSchemaIsRefusedUntouched() throws {
        let sandbox = try Self.populatedReplica()
        let bumped = try sandbox.sqlite("PRAGMA user_version = 99")
        try #require(bumped.status == 0, "\(bumped.stderr)")
        let before = try #require(fileBytes(sandbox.db))
        for (arguments, input) in Self.commands() + [(["init", "--role", "phone"], nil)] {
            let result = try sandbox.run(arguments, input: input)
            expectRefused(result, status: 1, mentioning: ["schema version 99 is newer", "upgrade lifesync"])
            #expect(fileBytes(sandbox.db) == before, "\(arguments) modified the newer replica")
        }
        #expect(try sandbox.sqlite("PRAGMA user_version").stdout == "99\n")
        #expect(try sandbox.sqlite("SELECT count(*) FROM entries").stdout == "40\n")
    }
}
