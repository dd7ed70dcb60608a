import Foundation
import Testing
import TestSupport

/// The LifeLog document's Drafts action (Tests/Clients/Drafts/LogToLifeLog.js, as written) run
/// under `node` with Drafts' scripting API (Tests/Clients/Drafts/drafts.js) against a real node,
/// with only its two constants changed, twice on one draft: what README promises a re-run does.
@Suite(.serialized) struct DraftsActionTests {
    static let clients = Readme.root + "/Tests/Clients/Drafts"
    /// README's two lines that make a re-run find the entry it wrote, each replacing the action's own.
    static let idempotentEdits = [["id: UUID.make(),", "id: draft.uuid,"],
                                  ["timestamp: new Date().toISOString(),", "timestamp: draft.createdAt.toISOString(),"]]

    func runAction(_ api: HTTPNode, draft: String, edits: [[String]] = []) throws -> [String: Any] {
        let folder = NSTemporaryDirectory() + "drafts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try draft.write(toFile: folder + "/draft.json", atomically: true, encoding: .utf8)
        var arguments = [Self.clients + "/drafts.js", Self.clients + "/LogToLifeLog.js", folder + "/draft.json",
                         "http://127.0.0.1:\(api.port)/api/entries", api.key]
        if !edits.isEmpty {
            try String(decoding: JSONSerialization.data(withJSONObject: edits), as: UTF8.self).write(toFile: folder + "/edits.json", atomically: true, encoding: .utf8)
            arguments.append(folder + "/edits.json")
        }
        let result = try Captured.run("/usr/bin/env", ["node"] + arguments, timeout: 60)
        guard result.status == 0, let shown = try parseJSON(result.stdout) as? [String: Any] else {
            throw ServeError("node: exit \(result.status): \(result.stdout) \(result.stderr)")
        }
        return shown
    }

    static let draft = """
        {"content": "Buy groceries after work", "tags": ["journal"], "uuid": "6F9619FF-8B86-4D11-B42D-00C04FC964FF",
         "createdAt": "2026-11-28T09:15:00.000Z"}
        """

    func entries(_ api: HTTPNode) throws -> [[String: Any]] {
        try parseJSON(try api.node.cli(["list", "--json"]).stdout) as? [[String: Any]] ?? []
    }

    @Test(.timeLimit(.minutes(2)))
    func asWrittenEachRunLogsANewEntryAndSaysSo() throws {
        let api = try HTTPNode(role: "mac")
        for run in 1...2 {
            let shown = try runAction(api, draft: Self.draft)
            #expect(shown["success"] as? String == "Logged!" && shown["failed"] as? Bool == false, "run \(run): \(shown)")
        }
        // README: "UUID.make() is a new UUID on every run, so running the action twice on one draft writes two entries."
        let written = try entries(api)
        #expect(written.count == 2 && written.allSatisfy { ($0["data"] as? [String: Any])?["text"] as? String == "Buy groceries after work" })
        #expect(written.allSatisfy { ($0["id"] as? String)?.hasPrefix("lifelog_") == true && $0["category"] as? String == "journal" })
        #expect(try Readme.text().contains("running the action twice on one draft writes two entries"))
    }

    @Test(.timeLimit(.minutes(2)))
    func withReadmesTwoLinesARerunFindsTheEntryItWrote() throws {
        let readme = try Readme.text()
        for edit in Self.idempotentEdits { #expect(readme.contains("`\(edit[1].dropLast())`"), "README no longer suggests \(edit[1])") }
        let api = try HTTPNode(role: "mac")
        let first = try runAction(api, draft: Self.draft, edits: Self.idempotentEdits)
        #expect(first["status"] as? Int == 201 && first["success"] as? String == "Logged!", "\(first)")
        let again = try runAction(api, draft: Self.draft, edits: Self.idempotentEdits)
        #expect(again["status"] as? Int == 200 && again["success"] as? String == "Logged!", "\(again)")
        #expect((again["body"] as? String)?.contains("already present") == true, "\(again)")
        let written = try entries(api)
        #expect(written.count == 1 && written.first?["id"] as? String == "lifelog_6f9619ff-8b86-4d11-b42d-00c04fc964ff", "\(written)")
        #expect(written.first?["timestamp"] as? String == "2026-11-28T09:15:00.000Z")
    }
}
