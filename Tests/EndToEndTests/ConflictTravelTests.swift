import Foundation
import Testing
import TestSupport

/// Issue "nothing lost in the user's world" §2 and §3 with real `serve` processes: a conflict met
/// on the phone is listed on the mac too (which never meets the watch), and a delete that lost to
/// a later edit stays listed through further edits until the user settles it.
@Suite(.serialized) struct ConflictTravelTests {
    private func run(_ arguments: [String], on node: ServeNode) throws -> String { try node.cli(arguments).stdout }

    private func waitFor(_ ids: [String], on node: ServeNode) throws { try node.waitFor(ids) }

    /// The conflicts of `node` as (entry ID, the loser's text or "deleted").
    private func conflicts(_ node: ServeNode) throws -> [(id: String, loser: String)] {
        let text = try run(["conflicts", "--json"], on: node)
        guard let list = try parseJSON(text) as? [[String: Any]] else { return [] }
        return list.map { item in
            let loser = item["loser"] as? [String: Any]
            let entry = loser?["entry"] as? [String: Any], data = entry?["data"] as? [String: Any]
            return (item["entry_id"] as? String ?? "", (loser?["deleted"] as? Bool == true) ? "deleted" : data?["text"] as? String ?? "?")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aConflictMetOnThePhoneIsListedOnTheMacToo() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        let watch = try group.node("watch", role: "watch")
        try phone.start()
        try mac.start(peers: [phone.address])
        try watch.start(peers: [phone.address], listen: false)
        let id = try run(["add", "--category", "note", "--text", "draft"], on: watch)
        try waitFor([id], on: mac)
        watch.terminate()
        _ = try run(["update", id, "--json", #"{"data": {"text": "written on the watch, offline"}}"#], on: watch)
        usleep(20_000)
        _ = try run(["update", id, "--json", #"{"data": {"text": "written on the phone, later"}}"#], on: phone)
        try watch.start(peers: [phone.address], listen: false)
        #expect(eventually(timeout: 20, interval: 0.2) { ((try? conflicts(mac)) ?? []).contains { $0 == (id, "written on the watch, offline") } },
                "the mac lists the watch's losing text: \(String(describing: try? conflicts(mac)))\n\(phone.allOutput)")
        #expect(try conflicts(phone).contains { $0 == (id, "written on the watch, offline") })
        // The phone is lost: the mac resolves on its own, keeping the watch's text.
        phone.terminate()
        _ = try run(["conflicts", "resolve", id, "--keep", "loser"], on: mac)
        #expect(try conflicts(mac).isEmpty)
        #expect(try run(["get", id], on: mac).contains("written on the watch, offline"))
    }

    @Test(.timeLimit(.minutes(2)))
    func aLosingDeleteStaysListedUntilTheUserSettlesIt() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        try phone.start()
        try mac.start(peers: [phone.address])
        let id = try run(["add", "--category", "note", "--text", "buy milk"], on: phone)
        try waitFor([id], on: mac)
        mac.terminate()
        _ = try run(["delete", id], on: phone)
        usleep(20_000)
        _ = try run(["update", id, "--json", #"{"data": {"text": "buy oat milk"}}"#], on: mac)
        try mac.start(peers: [phone.address])
        for node in [phone, mac] {
            #expect(eventually(timeout: 20, interval: 0.2) { ((try? conflicts(node)) ?? []).contains { $0 == (id, "deleted") } },
                    "\(node.name) lists the losing delete\n\(node.allOutput)")
        }
        let said = try run(["conflicts"], on: phone)
        #expect(said.contains("  entry \(id)\n  deleted on phone_") && said.contains("  kept for a concurrent edit on mac_"), "\(said)")
        // An ordinary edit after seeing both decides nothing about the delete.
        _ = try run(["update", id, "--json", #"{"category": "errand"}"#], on: mac)
        usleep(1_500_000)
        for node in [phone, mac] { #expect(try conflicts(node).contains { $0 == (id, "deleted") }, "still listed on \(node.name)") }
        // Keeping the delete deletes the entry everywhere.
        _ = try run(["conflicts", "resolve", id, "--keep", "loser"], on: phone)
        #expect(eventually(timeout: 20, interval: 0.2) {
            (try? LifeSyncBinary.run(["get", id, "--db", mac.db]))?.status == 1 && ((try? conflicts(mac)) ?? [("", "")]).isEmpty
        }, "the mac deleted it too\n\(mac.allOutput)")
        #expect(try conflicts(phone).isEmpty)
    }
}
