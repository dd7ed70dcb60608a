import Foundation
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// `lifesync conflicts`, `conflicts resolve` and `conflicts dismiss`, run as a user would on two
/// replicas whose concurrent edits of one entry conflicted.
@Suite struct ConflictCommandTests {
    /// A phone and a mac (made by `lifesync init`), one entry edited on both without either
    /// seeing the other: both change the text and the tags, and the mac's edit (later) wins
    /// both; the phone also set the category, which the mac left alone, so that survives.
    struct Conflicted {
        let phone = try! Sandbox(role: "phone", fileName: "phone.sqlite")
        let mac = try! Sandbox(role: "mac", fileName: "mac.sqlite")
        let id: String

        init() throws {
            id = try phone.addJSON(#"{"category": "note", "data": {"text": "buy milk", "tags": ["home"]}}"#)
            let (p, m) = (try open(phone), try open(mac))
            try ReplicaFixtures.sync(from: p, to: m)
            try p.update(id: id, patch: .object([("category", .string("shopping")), ("data", .object([
                ("text", .string("buy oat milk")), ("tags", .array([.string("home"), .string("shop")]))]))]))
            usleep(5_000)  // the mac's edit is the later one by the wall clock
            try m.update(id: id, patch: .object([("data", .object([
                ("text", .string("buy soy milk")), ("tags", .array([.string("home"), .string("errand")]))]))]))
            try exchange(p, m)
        }

        func open(_ sandbox: Sandbox) throws -> Replica { try Replica(path: sandbox.db, clock: SystemClock(), random: SystemRandom()) }

        /// Both ways, naming each side's node to the other as a handshake would.
        func exchange(_ p: Replica, _ m: Replica) throws {
            try m.recordOrigin(p.identity.incarnation, nodeID: p.identity.nodeID, role: .phone)
            try p.recordOrigin(m.identity.incarnation, nodeID: m.identity.nodeID, role: .mac)
            try ReplicaFixtures.sync(from: p, to: m)
            try ReplicaFixtures.sync(from: m, to: p)
        }
    }

    @Test func theListNamesTheDevicesAndShowsEachDifferingFieldSideBySide() throws {
        let c = try Conflicted()
        // Unnamed devices show by role and the start of their IDs; named ones by name.
        let unnamed = try c.phone.run(["conflicts"])
        #expect(unnamed.stdout.contains("  phone_\(c.phone.nodeID.dropFirst(6).prefix(8)) (phone)'s data.text, data.tags\n"), "\(unnamed.stdout)")
        #expect(try c.phone.run(["name", "Kitchen iPad"]).status == 0)
        #expect(try c.phone.run(["peers", "name", c.mac.nodeID, "Work mac"]).status == 0)
        let text = try c.phone.run(["conflicts"])
        #expect(text.status == 0, "\(text.stderr)")
        // What the entry is (its local date, category, first words), then whose sides met.
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d  shopping  "buy soy milk" #home #errand$"#,
                                   options: .regularExpression) != nil, "\(text.stdout)")
        #expect(text.stdout.contains("""
              entry \(c.id)
              Kitchen iPad (phone)'s data.text, data.tags
              lost to Work mac (mac)'s version (detected
            """), "\(text.stdout)")
        #expect(lines.allSatisfy { $0.count <= 80 }, "a line is wider than 80 columns:\n\(text.stdout)")
        let withIDs = try c.phone.run(["conflicts", "--ids"]).stdout
        #expect(withIDs.contains("Kitchen iPad \(c.phone.nodeID) (phone)'s") && withIDs.contains("Work mac \(c.mac.nodeID) (mac)'s"), "\(withIDs)")
        #expect(text.stdout.contains("""
                data.tags
                    now:   ["home","errand"]
                    loser: ["home","shop"]
                data.text
                    now:   "buy soy milk"
                    loser: "buy oat milk"
            """), "\(text.stdout)")
        #expect(!text.stdout.contains("category"), "a field the loser won is not listed")
        for sandbox in [c.phone, c.mac] {
            let entry = try sandbox.get(c.id)
            #expect(entry["category"] as? String == "shopping", "the phone's category survives the mac's edit")
            #expect((entry["data"] as? [String: Any])?["text"] as? String == "buy soy milk")
        }

        let json = try c.mac.run(["conflicts", "--json"])
        let list = try #require(try parseJSON(json.stdout) as? [[String: Any]], "\(json.stdout)")
        let conflict = try #require(list.first)
        #expect((conflict["loser"] as? [String: Any])?["node_id"] as? String == c.phone.nodeID)
        #expect((conflict["winner"] as? [String: Any])?["role"] as? String == "mac")
        #expect((try parseJSON(try c.phone.run(["conflicts", "--json"]).stdout) as? [[String: Any]])
            .flatMap { ($0.first?["winner"] as? [String: Any])?["name"] as? String } == "Work mac")
        #expect((conflict["fields"] as? [[String: Any]])?.map { $0["field"] as? String } == ["data.tags", "data.text"])
    }

    @Test func resolvingOneFieldReplicatesAndClearsTheOtherSide() throws {
        let c = try Conflicted()
        let resolved = try c.phone.run(["conflicts", "resolve", c.id, "--keep", "loser", "--field", "data.text"])
        #expect(resolved.status == 0, "\(resolved.stderr)")
        #expect(resolved.stdout.hasPrefix("resolved \(c.id): kept the loser's data.text as a new version"), "\(resolved.stdout)")
        #expect(try c.phone.run(["conflicts"]).stdout == "no conflicts\n")
        let entry = try c.phone.get(c.id)
        #expect((entry["data"] as? [String: Any])?["text"] as? String == "buy oat milk")
        #expect((entry["data"] as? [String: Any])?["tags"] as? [String] == ["home", "errand"])
        #expect(entry["category"] as? String == "shopping")

        try c.exchange(try c.open(c.phone), try c.open(c.mac))
        #expect(try c.mac.run(["conflicts"]).stdout == "no conflicts\n", "the resolution cleared the mac's record")
        #expect((try c.mac.get(c.id)["data"] as? [String: Any])?["text"] as? String == "buy oat milk")
    }

    @Test func dismissIsLocalAndMistakesAreUsageOrRefusals() throws {
        let c = try Conflicted()
        let dismissed = try c.mac.run(["conflicts", "dismiss", c.id])
        #expect(dismissed.status == 0 && dismissed.stdout == "dismissed 1 conflict record of \(c.id) on this replica\n", "\(dismissed.stdout)\(dismissed.stderr)")
        #expect(try c.phone.run(["conflicts", "--json"]).stdout.contains(c.id), "the phone keeps its record")

        let noAction = try c.phone.run(["conflicts", "resolve"])
        #expect(noAction.status == 2 && noAction.stderr.contains("resolve needs the ENTRY"), "\(noAction.stderr)")
        let badKeep = try c.phone.run(["conflicts", "resolve", c.id, "--keep", "both"])
        #expect(badKeep.status == 2 && badKeep.stderr.contains("--keep takes winner or loser, not 'both'"), "\(badKeep.stderr)")
        let badAction = try c.phone.run(["conflicts", "merge", c.id])
        #expect(badAction.status == 2 && badAction.stderr.contains("unknown action 'merge'"), "\(badAction.stderr)")
        let badField = try c.phone.run(["conflicts", "resolve", c.id, "--keep", "loser", "--field", "data.mood"])
        #expect(badField.status == 1 && badField.stderr.contains("data.mood is not a field of either version"), "\(badField.stderr)")
        let gone = try c.mac.run(["conflicts", "resolve", c.id])
        #expect(gone.status == 1 && gone.stderr.contains("no conflict is recorded for \(c.id)"), "\(gone.stderr)")
    }
}
