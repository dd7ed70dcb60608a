import Foundation
import Testing
import TestSupport

/// Where options may go, the ways to name the replica, and `--help`.
@Suite struct ArgumentTests {
    static let commands = ["init", "add", "import", "get", "update", "delete", "list", "export", "stats", "status", "conflicts"]

    @Test func optionsBeforeOrAfterPositionals() throws {
        let sandbox = try Sandbox()
        let id = try sandbox.add(["--text", "where do options go", "--timestamp", "2026-11-22T08:00:00Z"])
        let after = try LifeSyncBinary.run(["get", id, "--db", sandbox.db])
        let before = try LifeSyncBinary.run(["get", "--db", sandbox.db, id])
        let equals = try LifeSyncBinary.run(["get", "--db=\(sandbox.db)", id])
        let equalsAfter = try LifeSyncBinary.run(["get", id, "--db=\(sandbox.db)"])
        #expect(after.status == 0, "\(after.stderr)")
        #expect(!after.stdout.isEmpty)
        for other in [before, equals, equalsAfter] {
            #expect(other.status == 0, "\(other.stderr)")
            #expect(other.stdout == after.stdout)
        }

        // update: positional between options, and --json=PATCH with '=' inside the value.
        let update = try LifeSyncBinary.run(["update", "--json", #"{"data": {"text": "a=b"}}"#, id, "--db", sandbox.db])
        #expect(update.status == 0, "\(update.stderr)")
        let inline = try LifeSyncBinary.run(["update", "--db=\(sandbox.db)", id, #"--json={"category": "x=y"}"#])
        #expect(inline.status == 0, "\(inline.stderr)")
        let entry = try sandbox.get(id)
        #expect((entry["data"] as? [String: Any])?["text"] as? String == "a=b")
        #expect(entry["category"] as? String == "x=y")

        // list: the flag before and after --db.
        let listA = try LifeSyncBinary.run(["list", "--json", "--db", sandbox.db])
        let listB = try LifeSyncBinary.run(["list", "--db", sandbox.db, "--json"])
        #expect(listA.status == 0 && listA.stdout == listB.stdout)

        // delete with the ID last.
        let delete = try LifeSyncBinary.run(["delete", "--db", sandbox.db, id])
        #expect(delete.status == 0 && delete.stdout == "deleted \(id)\n")
    }

    @Test func optionValuesMayStartWithADash() throws {
        let sandbox = try Sandbox()
        let id = try sandbox.add(["--text", "-5 degrees outside", "--metric", "temp=-5"])
        let data = try #require(try sandbox.get(id)["data"] as? [String: Any])
        #expect(data["text"] as? String == "-5 degrees outside")
        #expect(double((data["metric"] as? [String: Any])?["value"]) == -5)
    }

    @Test func environmentVariableNamesTheDefaultReplica() throws {
        let directory = TemporaryDirectory("lifesync-e2e-env")
        let db = directory.file("from-env.sqlite")
        let env = ["LIFESYNC_DB": db]
        let initResult = try LifeSyncBinary.run(["init", "--role", "watch"], environment: env, directory: directory.path)
        #expect(initResult.status == 0, "\(initResult.stderr)")
        #expect(fileExists(db))
        #expect(!fileExists(directory.file("lifesync.sqlite")), "$LIFESYNC_DB wins over ./lifesync.sqlite")

        let add = try LifeSyncBinary.run(["add", "--text", "via env"], environment: env)
        #expect(add.status == 0, "\(add.stderr)")
        let id = add.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let get = try LifeSyncBinary.run(["get", id], environment: env)
        #expect(get.status == 0 && get.stdout.contains("via env"))
        let status = try #require(try parseJSON(try LifeSyncBinary.run(["status", "--json"], environment: env).stdout) as? [String: Any])
        #expect(status["db"] as? String == db)
        #expect(integer(status["entries"]) == 1)

        // --db overrides the environment.
        let other = directory.file("explicit.sqlite")
        #expect(try LifeSyncBinary.run(["init", "--role", "mac", "--db", other], environment: env).status == 0)
        let explicit = try #require(try parseJSON(try LifeSyncBinary.run(["status", "--json", "--db", other], environment: env).stdout) as? [String: Any])
        #expect(explicit["db"] as? String == other)
        #expect(explicit["role"] as? String == "mac")
        #expect(integer(explicit["entries"]) == 0)

        // An empty $LIFESYNC_DB falls back to ./lifesync.sqlite.
        let empty = try LifeSyncBinary.run(["status"], environment: ["LIFESYNC_DB": ""], directory: directory.path)
        expectRefused(empty, status: 1, mentioning: ["lifesync.sqlite", "lifesync init"])
    }

    @Test func withoutDbOrEnvironmentTheReplicaIsInTheCurrentDirectory() throws {
        let directory = TemporaryDirectory("lifesync-e2e-cwd")
        let result = try LifeSyncBinary.run(["init", "--role", "phone"], directory: directory.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(fileExists(directory.file("lifesync.sqlite")))
        let add = try LifeSyncBinary.run(["add", "--text", "here"], directory: directory.path)
        #expect(add.status == 0, "\(add.stderr)")
        let list = try LifeSyncBinary.run(["list", "--json"], directory: directory.path)
        #expect((try parseJSON(list.stdout) as? [Any])?.count == 1)
    }

    @Test(arguments: commands)
    func helpOnEveryCommand(command: String) throws {
        let directory = TemporaryDirectory("lifesync-e2e-help")
        // --help needs no replica, and wins over missing arguments.
        let result = try LifeSyncBinary.run([command, "--help"], directory: directory.path)
        #expect(result.status == 0, "\(command) --help: \(result.stderr)")
        #expect(result.stdout.contains("Usage: lifesync \(command)"), "\(result.stdout)")
        #expect(result.stdout.contains("--help"))
        #expect(result.stderr.isEmpty)
        // It creates nothing.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        // Anywhere on the line.
        let late = try LifeSyncBinary.run([command, "--db", directory.file("x.sqlite"), "--help"], directory: directory.path)
        #expect(late.status == 0 && late.stdout == result.stdout)
    }

    @Test func topLevelHelpListsEveryCommand() throws {
        for form in ["--help", "help", "-h"] {
            let result = try LifeSyncBinary.run([form])
            #expect(result.status == 0)
            #expect(result.stdout.contains("Usage:"))
            for command in Self.commands { #expect(result.stdout.contains("  \(command) "), "\(form) lacks \(command)") }
        }
        let bare = try LifeSyncBinary.run([])
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("Usage:"))
    }
}
