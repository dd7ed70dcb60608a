import Foundation
import Testing
import TestSupport

/// Device names from the command line (`init --name`, `name`, `peers name`) and how `status`,
/// `peers` and `list` show devices and times to a person: names, 80 columns, local time.
@Suite struct DeviceNameCommandTests {
    @Test func aNameGivenAtInitIsShownAndCanBeChanged() throws {
        let sandbox = try Sandbox(role: nil)
        let created = try LifeSyncBinary.run(["init", "--role", "phone", "--name", "Kitchen iPad", "--db", sandbox.db])
        #expect(created.status == 0, "\(created.stderr)")
        let nodeID = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try sandbox.run(["name"]).stdout == "Kitchen iPad\n")
        #expect(try sandbox.status()["name"] as? String == "Kitchen iPad")
        let status = try sandbox.run(["status"]).stdout
        #expect(status.hasPrefix("node        \"Kitchen iPad\" (phone)\nid          \(nodeID)\n"), "\(status)")

        let renamed = try sandbox.run(["name", "Hall tablet"])
        #expect(renamed.status == 0 && renamed.stdout == "\(nodeID) is now named \"Hall tablet\"\n", "\(renamed.stdout)\(renamed.stderr)")
        #expect(try sandbox.run(["name"]).stdout == "Hall tablet\n")
        // init again with the same role keeps the node and takes the new name.
        #expect(try LifeSyncBinary.run(["init", "--role", "phone", "--name", "Desk", "--db", sandbox.db]).stdout == nodeID + "\n")
        #expect(try sandbox.run(["name"]).stdout == "Desk\n")
    }

    @Test func badNamesAreRefusedNamingTheProblemAndWriteNothing() throws {
        let sandbox = try Sandbox(role: nil)
        expectRefused(try LifeSyncBinary.run(["init", "--role", "mac", "--name", "a\tb", "--db", sandbox.db]), status: 1,
                      mentioning: ["--name", "control characters", "U+0009"])
        #expect(!FileManager.default.fileExists(atPath: sandbox.db), "a refused init created the replica")
        let phone = try Sandbox()
        expectRefused(try phone.run(["name", String(repeating: "n", count: 65)]), status: 1, mentioning: ["at most 64 characters"])
        expectRefused(try phone.run(["name", " "]), status: 1, mentioning: ["must not be empty"])
        expectRefused(try phone.run(["peers", "name", "kitchen", "Mine"]), status: 1, mentioning: ["NODE_ID", "not a node ID"])
        expectRefused(try phone.run(["peers", "rename"]), status: 2, mentioning: ["unknown action 'rename'"])
        #expect(try phone.run(["name"]).stdout.hasPrefix("(no name"))
    }

    @Test func aPeerNamedHereShowsByNameWithItsIDOneFlagAway() throws {
        let phone = try Sandbox(), watch = try Sandbox(role: "watch")
        // Six addresses, more than one 80-column line holds.
        let addresses = (1...6).flatMap { ["--addr", "192.168.100.\(100 + $0):17002"] }
        let pairing = try #require((try parseJSON(try watch.run(["id", "--json"] + addresses).stdout) as? [String: Any])?["pairing"] as? String)
        #expect(try phone.run(["trust", pairing]).status == 0)
        let watchID = watch.nodeID
        let before = try phone.run(["peers"]).stdout
        #expect(before.contains("  watch_\(watchID.dropFirst(6).prefix(8)) (watch)  never connected\n"), "\(before)")
        let named = try phone.run(["peers", "name", watchID, "Running watch"])
        #expect(named.status == 0 && named.stdout.contains("is now shown as \"Running watch\""), "\(named.stderr)")
        let peers = try phone.run(["peers"]).stdout
        #expect(peers.contains("  Running watch (watch)  never connected\n") && !peers.contains(watchID), "\(peers)")
        #expect(peers.split(separator: "\n").allSatisfy { $0.count <= 80 } && peers.contains("192.168.100.106:17002"), "\(peers)")
        #expect(try phone.run(["peers", "--ids"]).stdout.contains("  Running watch \(watchID) (watch)"))
        let json = try #require(try parseJSON(try phone.run(["peers", "--json"]).stdout) as? [String: Any])
        let trusted = try #require((json["trusted"] as? [[String: Any]])?.first)
        #expect(trusted["name"] as? String == "Running watch" && trusted["local_name"] as? String == "Running watch")
        #expect(trusted["announced_name"] is NSNull)
        // Forgotten, the peer shows by its ID again.
        #expect(try phone.run(["peers", "name", watchID]).stdout.contains("has no local name now"))
        #expect(try phone.run(["peers"]).stdout.contains("  watch_\(watchID.dropFirst(6).prefix(8)) (watch)"))
    }

    @Test func peopleReadLocalTimeAndMachinesUTC() throws {
        let phone = try Sandbox()
        _ = try phone.addJSON(#"{"timestamp": "2026-11-22T08:30:00Z", "category": "mood", "data": {"text": "slept well"}}"#)
        // POSIX TZ rules need no zone files: IST-5:30 is five and a half hours east of UTC.
        let list = try LifeSyncBinary.run(["list", "--db", phone.db], environment: ["TZ": "IST-5:30"])
        #expect(list.stdout.hasPrefix("2026-11-22 14:00  mood"), "\(list.stdout)")
        let west = try LifeSyncBinary.run(["list", "--db", phone.db], environment: ["TZ": "EST+5"])
        #expect(west.stdout.hasPrefix("2026-11-22 03:30  mood"), "\(west.stdout)")
        let json = try LifeSyncBinary.run(["list", "--json", "--db", phone.db], environment: ["TZ": "IST-5:30"])
        #expect(json.stdout.contains("\"timestamp\" : \"2026-11-22T08:30:00.000Z\"") || json.stdout.contains("\"timestamp\": \"2026-11-22T08:30:00.000Z\""),
                "\(json.stdout)")
        let export = try LifeSyncBinary.run(["export", "--format", "csv", "--db", phone.db], environment: ["TZ": "IST-5:30"])
        #expect(export.stdout.contains("2026-11-22T08:30:00.000Z"), "\(export.stdout)")
        // A bare date is a local day: 08:30 UTC is the 22nd in India, 03:30 on the 22nd in New York,
        // and 20:00 UTC on the 22nd is the 23rd in India.
        _ = try phone.addJSON(#"{"timestamp": "2026-11-22T20:00:00Z", "category": "note", "data": {"text": "late"}}"#)
        for (zone, day, expected) in [("IST-5:30", "2026-11-22", ["mood"]), ("IST-5:30", "2026-11-23", ["note"]), ("EST+5", "2026-11-22", ["note", "mood"]),
                                      ("UTC", "2026-11-22", ["note", "mood"])] {
            let listed = try LifeSyncBinary.run(["list", "--json", "--since", day, "--until", day, "--db", phone.db], environment: ["TZ": zone])
            let categories = (try parseJSON(listed.stdout) as? [[String: Any]])?.map { $0["category"] as? String ?? "" }
            #expect(categories == expected, "\(zone) \(day): \(listed.stdout)\(listed.stderr)")
        }
        let status = try LifeSyncBinary.run(["status", "--db", phone.db], environment: ["TZ": "IST-5:30"]).stdout
        #expect(status.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(status)")
    }
}
