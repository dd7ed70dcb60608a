import Foundation
import Testing
import TestSupport

/// The LifeLog iOS app's own client code (the document's `LogEntry`, `LogData`, `Metric`,
/// `Location` and `APIClient`, kept as written under Tests/Clients/LifeLogApp), compiled with
/// swiftc and run against a real `serve --http` node. Linux has URLSession in FoundationNetworking.
///
/// Two things the document's code cannot do as it stands, and what is done about them:
/// - `Tests/Clients/LifeLogApp/Linux/Shim.swift` defines what the document uses and never
///   defines (`APIError`, `JSONEncoder.iso8601`, `JSONDecoder.iso8601`) and imports what Linux
///   keeps apart (FoundationNetworking).
/// - `APIClient` is `public` over an internal model (the app keeps it in another module,
///   LifeLogKit, where the model is public too); compiled into one program, its `public` words
///   are dropped, or swiftc refuses the file. Nothing else is touched.
@Suite(.serialized) struct LifeLogAppClientTests {
    /// The client built once per test run.
    static let client: Result<String, Error> = Result {
        let folder = NSTemporaryDirectory() + "lifelog-app-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sources = Readme.root + "/Tests/Clients/LifeLogApp"
        let apiClient = try String(contentsOfFile: sources + "/APIClient.swift", encoding: .utf8)
        try apiClient.replacingOccurrences(of: "public ", with: "").write(toFile: folder + "/APIClient.swift", atomically: true, encoding: .utf8)
        let built = try Captured.run("/usr/bin/env", ["swiftc", "-module-name", "LifeLogApp", "-o", folder + "/app",
                                                      sources + "/LogEntry.swift", folder + "/APIClient.swift",
                                                      sources + "/Linux/Shim.swift", sources + "/Linux/main.swift"], timeout: 300)
        guard built.status == 0 else { throw ServeError("swiftc: \(built.stderr.prefix(2000))") }
        return folder + "/app"
    }

    func run(_ node: HTTPNode, key: String, _ mode: String) throws -> [String: Any] {
        let result = try Captured.run(try Self.client.get(), ["http://127.0.0.1:\(node.port)/", key, mode], timeout: 60)
        guard result.status == 0, let report = try parseJSON(result.stdout) as? [String: Any] else {
            throw ServeError("the app client: exit \(result.status): \(result.stdout) \(result.stderr)")
        }
        return report
    }

    @Test(.timeLimit(.minutes(5)))
    func theAppsOwnClientCreatesAndFetchesEntriesWithAnAppKey() throws {
        let api = try HTTPNode()
        // Entries made on the node itself, one with the fields the app spells in camelCase.
        let phoneID = try api.node.cli(["add", "--json", """
            {"category": "health", "data": {"text": "walked", "metric": {"name": "pain", "value": 3, "scale_min": 1, "scale_max": 10},
             "location": {"latitude": 48.85, "longitude": 2.35, "place_name": "Paris"}, "tags": ["a"]}}
            """]).stdout
        _ = try api.node.cli(["add", "--text", "plain note"])

        // With a key of the document's form, the app cannot read one entry: the reason for the presentation.
        let plain = try run(api, key: api.key, "fetch")
        #expect((plain["fetch_error"] as? String)?.contains("UUID") == true, "\(plain)")

        let made = try api.node.cli(["keys", "create", "iphone", "--presentation", "lifelog-app"]).stdout
        let appKey = made.trimmingCharacters(in: .whitespacesAndNewlines)
        let report = try run(api, key: appKey, "sync")
        #expect(report["create_error"] == nil && report["fetch_error"] == nil && report["filter_error"] == nil, "\(report)")
        #expect(report["created"] as? Int == 20)
        // Every entry on the node decodes (2 made here, 20 sent, 1 of the refused batch), all `synced`.
        #expect(report["fetched"] as? Int == 22, "\(report)")
        #expect(report["all_synced"] as? Bool == true)
        #expect((report["missing_or_changed"] as? [String])?.isEmpty == true, "\(report)")
        #expect(report["filtered_ok"] as? Bool == true && (report["filtered"] as? Int ?? 0) > 0, "\(report)")
        // A batch holding a refused entry is a failure to the app: it marks nothing synced.
        #expect((report["refused_batch"] as? String)?.hasPrefix("threw") == true, "\(report)")

        // Every entry it sent is on the node, under the ID its UUID names.
        let stored = try api.node.cli(["list", "--json", "--limit", "1000"]).stdout
        let ids = Set(((try parseJSON(stored) as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String })
        for uuid in report["sent_ids"] as? [String] ?? [] { #expect(ids.contains("lifelog_" + uuid.lowercased()), "\(uuid) is not on the node") }
        let batch = report["refused_batch_ids"] as? [String] ?? []
        #expect(batch.count == 2 && ids.contains("lifelog_" + batch[0].lowercased()) && !ids.contains("lifelog_" + batch[1].lowercased()))

        // The `id` the app reads for an entry made on the node addresses it on every route.
        var app = api.curl
        app.key = appKey
        let appID = String(phoneID.split(separator: "_")[1]).uppercased()
        let got = try app.request("GET", "/api/entries/\(appID)")
        #expect(got.status == 200 && got.object["id"] as? String == appID, "\(got.body)")
        #expect(((got.object["data"] as? [String: Any])?["location"] as? [String: Any])?["placeName"] as? String == "Paris")
        // Sent back as read (whole seconds, camelCase, its UUID, synced): nothing moves.
        let before = try api.node.cli(["get", phoneID]).stdout
        let put = try app.request("PUT", "/api/entries/\(appID)", body: got.body)
        #expect(put.status == 200, "\(put.body)")
        let after = try api.node.cli(["get", phoneID]).stdout
        let fields = { (text: String) in (try? parseJSON(text) as? NSDictionary).map { d in ["timestamp", "recorded_at", "data"].map { d[$0] ?? NSNull() } as NSArray } }
        #expect(fields(before) != nil && fields(before) == fields(after), "\(before) → \(after)")
        let patched = try app.request("PATCH", "/api/entries/\(appID.lowercased())", body: #"{"data": {"text": "walked far"}}"#)
        #expect(patched.status == 200 && patched.object["id"] as? String == appID, "\(patched.body)")
        #expect(try app.request("DELETE", "/api/entries/\(appID)").status == 200)
        let gone = try LifeSyncBinary.run(["get", phoneID, "--db", api.node.db])
        #expect(gone.status != 0 && gone.stderr.contains("no entry with id"), "\(gone.stderr)")
        // The document's form is unchanged for the other key.
        let listed = try api.curl.request("GET", "/api/entries?limit=1")
        #expect(((listed.json as? [[String: Any]])?.first?["id"] as? String)?.hasPrefix("lifelog_") == true, "\(listed.body)")
    }

    @Test func aKeysPresentationIsChangedForTheKeyAClientHolds() throws {
        let api = try HTTPNode()
        _ = try api.node.cli(["add", "--text", "one"])
        #expect(try api.curl.request("GET", "/api/entries").body.contains("\"recorded_at\""))
        let changed = try api.node.cli(["keys", "present", "curl", "--presentation", "lifelog-app"])
        #expect(changed.stdout.contains("lifelog-app"))
        let entries = try api.curl.request("GET", "/api/entries").json as? [[String: Any]]
        #expect(entries?.first?["recordedAt"] != nil && entries?.first?["synced"] as? Bool == true, "\(String(describing: entries))")
        let listed = try api.node.cli(["keys", "list", "--json"]).stdout
        #expect(listed.contains("\"presentation\": \"lifelog-app\""), "\(listed)")
        let unknown = try LifeSyncBinary.run(["keys", "present", "curl", "--presentation", "xml", "--db", api.node.db])
        #expect(unknown.status != 0 && unknown.stderr.contains("lifesync, lifelog-app"), "\(unknown.stderr)")
    }
}
