import Foundation
import Testing
import TestSupport

/// The routes the dashboard manages the node with, refused as every input is: keys only with
/// an admin key, bodies read strictly, a resolution only where a conflict is; and the
/// dashboard's files, served from the binary under a policy that admits only them.
@Suite struct HTTPManageTests {
    @Test func keysAreManagedOnlyWithAnAdminKeyAndBodiesAreReadStrictly() throws {
        let api = try HTTPNode()
        let plain = try api.curl.request("GET", "/api/keys")
        #expect(plain.status == 403 && plain.body.contains("needs an admin key (lifesync keys create NAME --admin)"), "\(plain.body)")
        let made = try LifeSyncBinary.run(["keys", "create", "boss", "--admin", "--db", api.node.db])
        try #require(made.status == 0, "\(made.stderr)")
        let boss = Curl(base: "http://127.0.0.1:\(api.port)", key: made.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let listed = try boss.request("GET", "/api/keys")
        let keys = listed.json as? [[String: Any]] ?? []
        #expect(listed.status == 200 && keys.contains { $0["name"] as? String == "boss" && $0["admin"] as? Bool == true }
                && keys.contains { $0["name"] as? String == "curl" && $0["admin"] as? Bool == false }, "\(listed.body)")
        for (body, status, needle) in [(#"{"name": "x", "colour": 1}"#, 400, "colour: unknown field"), (#"{"admin": true}"#, 400, "name: a string is required"),
                                      (#"{"name": "y", "admin": "yes"}"#, 400, "admin: expected true or false"),
                                      (#"{"name": "z", "presentation": "xml"}"#, 400, "presentation: expected one of"),
                                      (#"{"name": "boss"}"#, 400, "a key called \\\"boss\\\" exists"), (#"[1]"#, 400, "must be a JSON object")] {
            let refused = try boss.request("POST", "/api/keys", body: body)
            #expect(refused.status == status && refused.body.contains(needle), "\(body): \(refused.status) \(refused.body)")
        }
        let created = try boss.request("POST", "/api/keys", body: #"{"name": "app", "presentation": "lifelog-app"}"#)
        #expect(created.status == 201 && (created.object["key"] as? String)?.hasPrefix("lsk_") == true, "\(created.body)")
        let list = try LifeSyncBinary.run(["keys", "list", "--db", api.node.db]).stdout
        #expect(list.contains("app  presentation lifelog-app\n  sha256 ") && list.contains("boss  admin\n  sha256 "), "\(list)")
        #expect(try boss.request("DELETE", "/api/keys/app").status == 200)
        let gone = try boss.request("DELETE", "/api/keys/app")
        #expect(gone.status == 400 && gone.object["error"] as? String == "name: no key called \"app\" (lifesync keys list shows them)", "\(gone.body)")
        expectRefused(try LifeSyncBinary.run(["keys", "list", "--admin", "--db", api.node.db]), status: 2, mentioning: ["--admin goes with create"])
    }

    @Test func aResolutionNeedsAConflictAndAKnownSide() throws {
        let api = try HTTPNode()
        let id = try #require(api.curl.request("POST", "/api/entries", body: #"{"category": "note", "data": {"text": "x"}}"#).object["id"] as? String)
        let none = try api.curl.request("POST", "/api/conflicts/\(id)/resolve", body: #"{"keep": "loser"}"#)
        #expect(none.status == 400 && none.body.contains("no conflict is recorded for \(id)"), "\(none.body)")
        let side = try api.curl.request("POST", "/api/conflicts/\(id)/resolve", body: #"{"keep": "both"}"#)
        #expect(side.status == 400 && side.body.contains("keep: expected winner or loser"), "\(side.body)")
        #expect(try api.curl.request("GET", "/api/conflicts/\(id)/resolve").status == 405)
    }

    @Test func theDashboardsFilesComeFromTheNodeOnly() throws {
        let api = try HTTPNode()
        for (path, type) in [("/dashboard", "text/html"), ("/dashboard/dashboard.css", "text/css"), ("/dashboard/dashboard.js", "text/javascript"),
                             ("/dashboard/world.json", "application/json")] {
            let file = try api.anonymous.request("GET", path)
            #expect(file.status == 200 && file.headers["content-type"]?.hasPrefix(type) == true, "\(path): \(file.status) \(file.headers)")
            let policy = file.headers["content-security-policy"] ?? ""
            #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"), "\(policy)")
        }
        #expect(try api.anonymous.request("GET", "/dashboard/../api/status", extra: ["--path-as-is"]).status == 404)
        #expect(try api.anonymous.request("GET", "/dashboard/secret.txt").status == 404)
        let world = try api.anonymous.request("GET", "/dashboard/world.json")
        #expect(world.body.utf8.count < 300_000 && world.body.contains("Natural Earth"), "a small outline: \(world.body.utf8.count) bytes")
        // A day's stats, by the API's own filters.
        _ = try api.curl.request("POST", "/api/entries", body: #"[{"timestamp": "2026-11-22T08:30:00Z", "category": "mood"}, {"timestamp": "2026-11-23T08:30:00Z", "category": "mood"}]"#)
        let day = try api.curl.request("GET", "/api/entries/stats?since=2026-11-22T00:00:00Z&until=2026-11-22T23:59:59Z")
        #expect(day.object["total"] as? Int == 1, "\(day.body)")
        #expect(try api.curl.request("GET", "/api/entries/stats?colour=red").status == 400)
        #expect((try api.curl.request("GET", "/api/status").object["change_cursor"] as? String)?.hasPrefix("2-") == true)
        // A month's chart: each metric's summary per day; and only the entries with a place.
        _ = try api.curl.request("POST", "/api/entries", body: #"[{"timestamp": "2026-11-22T09:00:00Z", "data": {"metric": {"name": "mood", "value": 4}}}, {"timestamp": "2026-11-22T19:00:00Z", "data": {"metric": {"name": "mood", "value": 8}}}, {"timestamp": "2026-11-22T10:00:00Z", "data": {"location": {"latitude": 1, "longitude": 2}}}]"#)
        let perDay = try api.curl.request("GET", "/api/entries/stats?per_day=true&since=2026-11-22&until=2026-11-22").object
        let mood = ((perDay["metrics_by_day"] as? [String: Any])?["mood"] as? [String: Any])?["2026-11-22"] as? [String: Any]
        #expect(mood?["count"] as? Int == 2 && mood?["average"] as? Double == 6 && mood?["min"] as? Double == 4, "\(perDay)")
        #expect(try api.curl.request("GET", "/api/entries/stats?per_day=yes").status == 400)
        let placed = try api.curl.request("GET", "/api/entries?has=location").json as? [[String: Any]]
        #expect(placed?.count == 1, "\(placed ?? [])")
        let wrongField = try api.curl.request("GET", "/api/entries?has=metric")
        #expect(wrongField.status == 400 && wrongField.body.contains("has: the one field it takes is location"), "\(wrongField.body)")
    }
}
