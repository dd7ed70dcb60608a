import Foundation
import Testing
import TestSupport

/// init, add, get, update, delete, status and conflicts, run as a user would.
@Suite struct EntryLifecycleTests {
    @Test func initPrintsARoleIdentifierAndStatusReportsIt() throws {
        for role in ["watch", "phone", "mac"] {
            let sandbox = try Sandbox(role: role)
            #expect(isIdentifier(sandbox.nodeID, role: role), "init printed \(sandbox.nodeID)")
            let status = try sandbox.status()
            #expect(status["node_id"] as? String == sandbox.nodeID)
            #expect(status["role"] as? String == role)
            #expect(isUUIDv4(status["incarnation"] as? String ?? ""), "incarnation: \(status["incarnation"] ?? "nil")")
            #expect(integer(status["entries"]) == 0)
            #expect((status["vector"] as? [String: Any])?.isEmpty == true, "a new replica has written nothing")
        }
    }

    @Test func addWithFlagsThenGetPrintsSnakeCaseJSON() throws {
        let sandbox = try Sandbox(role: "watch")
        let id = try sandbox.add(["--category", "mood", "--metric", "mood=7", "--scale", "1..10", "--unit", "points",
                                  "--text", "slept well", "--tag", "morning", "--tag", "home",
                                  "--lat", "52.5", "--lon", "13.4", "--accuracy", "12", "--altitude", "34", "--place", "Berlin",
                                  "--timestamp", "2026-11-22T09:30:00+01:00"])
        #expect(isIdentifier(id, role: "watch"), "add printed \(id)")

        let raw = try sandbox.run(["get", id])
        #expect(raw.status == 0)
        #expect(raw.stderr.isEmpty)
        for key in ["\"recorded_at\"", "\"device_id\"", "\"scale_min\"", "\"scale_max\"", "\"place_name\""] {
            #expect(raw.stdout.contains(key), "get output lacks \(key): \(raw.stdout)")
        }
        #expect(!raw.stdout.contains("recordedAt") && !raw.stdout.contains("deviceId") && !raw.stdout.contains("placeName"))

        let entry = try #require(try parseJSON(raw.stdout) as? [String: Any])
        #expect(Set(entry.keys) == ["id", "timestamp", "recorded_at", "source", "device_id", "category", "data"])
        #expect(entry["id"] as? String == id)
        #expect(entry["timestamp"] as? String == "2026-11-22T08:30:00.000Z", "the offset time is stored in UTC")
        #expect(entry["source"] as? String == "watch")
        #expect(entry["device_id"] as? String == sandbox.nodeID)
        #expect(entry["category"] as? String == "mood")
        let data = try #require(entry["data"] as? [String: Any])
        #expect(data["text"] as? String == "slept well")
        #expect(data["tags"] as? [String] == ["morning", "home"])
        let metric = try #require(data["metric"] as? [String: Any])
        #expect(metric["name"] as? String == "mood")
        #expect(double(metric["value"]) == 7)
        #expect(metric["unit"] as? String == "points")
        #expect(double(metric["scale_min"]) == 1 && double(metric["scale_max"]) == 10)
        let location = try #require(data["location"] as? [String: Any])
        #expect(double(location["latitude"]) == 52.5 && double(location["longitude"]) == 13.4)
        #expect(double(location["accuracy"]) == 12 && double(location["altitude"]) == 34)
        #expect(location["place_name"] as? String == "Berlin")
        let recordedAt = try #require(entry["recorded_at"] as? String)
        #expect(recordedAt.hasSuffix("Z") && recordedAt.count == "2026-11-22T08:30:00.000Z".count)
    }

    @Test func addJSONFromArgumentAndFromStandardInput() throws {
        let sandbox = try Sandbox(role: "mac")
        let fromArgument = try sandbox.addJSON(#"{"category": "note", "data": {"text": "hello"}}"#)
        #expect(isIdentifier(fromArgument, role: "mac"))
        let result = try sandbox.run(["add", "--json", "-"], input: #"{"category": "work", "timestamp": "2026-01-02T03:04:05Z", "data": {"text": "from stdin"}}"#)
        #expect(result.status == 0, "\(result.stderr)")
        let fromStdin = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(isIdentifier(fromStdin, role: "mac"))
        #expect(fromStdin != fromArgument)

        let entry = try sandbox.get(fromStdin)
        #expect(entry["category"] as? String == "work")
        #expect(entry["timestamp"] as? String == "2026-01-02T03:04:05.000Z")
        #expect((entry["data"] as? [String: Any])?["text"] as? String == "from stdin")
        #expect((try sandbox.get(fromArgument)["data"] as? [String: Any])?["text"] as? String == "hello")
        #expect(try sandbox.entryCount() == 2)
    }

    @Test func addJSONKeepsAnIDFromAnotherSource() throws {
        let sandbox = try Sandbox()
        let id = newEntryID("drafts")
        let printed = try sandbox.addJSON(#"{"id": "\#(id)", "source": "drafts", "data": {"text": "imported idea"}}"#)
        #expect(printed == id)
        #expect(try sandbox.get(id)["source"] as? String == "drafts")
        let again = try sandbox.run(["add", "--json", #"{"id": "\#(id)", "data": {"text": "again"}}"#])
        expectRefused(again, status: 1, mentioning: ["id", "already exists"])
        #expect(try sandbox.entryCount() == 1)
    }

    @Test func updateAppliesAMergePatch() throws {
        let sandbox = try Sandbox()
        let id = try sandbox.add(["--category", "note", "--text", "first draft", "--tag", "a", "--timestamp", "2026-11-22T08:00:00Z"])
        let result = try sandbox.run(["update", id, "--json", #"{"category": "work", "data": {"text": "better", "tags": null}}"#])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == id + "\n")

        let entry = try sandbox.get(id)
        #expect(entry["category"] as? String == "work")
        #expect(entry["timestamp"] as? String == "2026-11-22T08:00:00.000Z", "fields the patch leaves out stay")
        let data = try #require(entry["data"] as? [String: Any])
        #expect(data["text"] as? String == "better")
        #expect(data["tags"] == nil, "null removes a field")

        // A patch from standard input works too.
        let fromStdin = try sandbox.run(["update", id, "--json", "-"], input: #"{"data": {"text": "best"}}"#)
        #expect(fromStdin.status == 0, "\(fromStdin.stderr)")
        #expect((try sandbox.get(id)["data"] as? [String: Any])?["text"] as? String == "best")
        #expect(try sandbox.entryCount() == 1)
    }

    @Test func updateRefusalsChangeNothing() throws {
        let sandbox = try Sandbox()
        let id = try sandbox.add(["--text", "keep me", "--timestamp", "2026-11-22T08:00:00Z"])
        let before = try sandbox.run(["get", id]).stdout

        expectRefused(try sandbox.run(["update", id, "--json", #"{"id": "\#(newEntryID("phone"))"}"#]),
                      status: 1, mentioning: ["id", "cannot be changed"])
        expectRefused(try sandbox.run(["update", id, "--json", #"{"data": {"location": {"latitude": 91, "longitude": 0}}}"#]),
                      status: 1, mentioning: ["data.location.latitude"])
        expectRefused(try sandbox.run(["update", id, "--json", #"{"colour": "red"}"#]),
                      status: 1, mentioning: ["colour", "unknown field"])
        expectRefused(try sandbox.run(["update", id, "--json", #"{"data": "#]), status: 1, mentioning: ["--json"])
        expectRefused(try sandbox.run(["update", id]), status: 2, mentioning: ["--json", "Usage:"])
        let missing = newEntryID("phone")
        expectRefused(try sandbox.run(["update", missing, "--json", "{}"]), status: 1, mentioning: ["no entry with id \(missing)"])

        #expect(try sandbox.run(["get", id]).stdout == before)
        let vector = try #require(try sandbox.status()["vector"] as? [String: Any])
        #expect(vector.values.compactMap { integer($0) } == [1], "only the add was written: \(vector)")
    }

    @Test func deleteRemovesTheEntryAndLeavesATombstone() throws {
        let sandbox = try Sandbox()
        let keep = try sandbox.add(["--text", "keep", "--timestamp", "2026-11-22T08:00:00Z"])
        let gone = try sandbox.add(["--text", "remove", "--timestamp", "2026-11-22T09:00:00Z"])

        let result = try sandbox.run(["delete", gone])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "deleted \(gone)\n")

        expectRefused(try sandbox.run(["get", gone]), status: 1, mentioning: ["no entry with id \(gone)"])
        #expect(try sandbox.list().compactMap { $0["id"] as? String } == [keep])
        let status = try sandbox.status()
        #expect(integer(status["entries"]) == 1)
        #expect(integer(status["tombstones"]) == 1)

        expectRefused(try sandbox.run(["delete", gone]), status: 1, mentioning: ["no entry with id \(gone)"])
        expectRefused(try sandbox.run(["add", "--json", #"{"id": "\#(gone)", "data": {"text": "again"}}"#]), status: 1, mentioning: ["id", "deleted"])
        expectRefused(try sandbox.run(["update", gone, "--json", "{}"]), status: 1, mentioning: ["no entry with id"])
        #expect(try sandbox.entryCount() == 1)
    }

    @Test func statusCountsWritesInTheVector() throws {
        let sandbox = try Sandbox(role: "watch")
        let a = try sandbox.add(["--text", "one"])
        try sandbox.add(["--text", "two"])
        #expect(try sandbox.run(["update", a, "--json", #"{"data": {"text": "uno"}}"#]).status == 0)
        #expect(try sandbox.run(["delete", a]).status == 0)

        let status = try sandbox.status()
        let incarnation = try #require(status["incarnation"] as? String)
        let vector = try #require(status["vector"] as? [String: Any])
        #expect(vector.count == 1)
        #expect(integer(vector[incarnation]) == 4, "two adds, an update and a delete: \(vector)")
        #expect(integer(status["entries"]) == 1)
        #expect(integer(status["tombstones"]) == 1)
        #expect(integer(status["conflicts"]) == 0)
        #expect(status["db"] as? String == sandbox.db)

        let text = try sandbox.run(["status"])
        #expect(text.status == 0)
        #expect(text.stdout.contains(sandbox.nodeID))
        #expect(text.stdout.contains("(watch)"))
        #expect(text.stdout.contains("1 live, 1 deleted, 0 conflicts"))
        #expect(text.stdout.contains("\(incarnation)  4  (this node)"))
    }

    @Test func conflictsOnASingleReplicaAreEmpty() throws {
        let sandbox = try Sandbox()
        try sandbox.add(["--text", "solo"])
        let text = try sandbox.run(["conflicts"])
        #expect(text.status == 0)
        #expect(text.stdout == "no conflicts\n")
        let json = try sandbox.run(["conflicts", "--json"])
        #expect(json.status == 0)
        #expect((try parseJSON(json.stdout) as? [Any])?.isEmpty == true, "conflicts --json: \(json.stdout)")
    }

    @Test func theReplicaIsAPlainSQLiteFile() throws {
        let sandbox = try Sandbox()
        let a = try sandbox.add(["--category", "mood", "--text", "alpha", "--timestamp", "2026-11-20T08:00:00Z"])
        let b = try sandbox.add(["--category", "note", "--text", "beta", "--timestamp", "2026-11-21T08:00:00Z"])
        let c = try sandbox.add(["--text", "gamma", "--timestamp", "2026-11-22T08:00:00Z"])
        #expect(try sandbox.run(["delete", b]).status == 0)

        let result = try sandbox.sqlite("SELECT id, timestamp, category, data FROM entries ORDER BY timestamp")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.lines
        #expect(lines.count == 2, "\(result.stdout)")
        #expect(lines.first?.hasPrefix("\(a)|2026-11-20T08:00:00.000Z|mood|") == true, "\(result.stdout)")
        #expect(lines.first?.contains("alpha") == true)
        #expect(lines.last?.hasPrefix("\(c)|2026-11-22T08:00:00.000Z||") == true, "\(result.stdout)")
        #expect(lines.last?.contains("gamma") == true)
        #expect(!result.stdout.contains(b) && !result.stdout.contains("beta"), "a deleted entry is not in entries")

        // The data column holds the entry's JSON, readable by SQLite's own JSON functions.
        let text = try sandbox.sqlite("SELECT json_extract(data, '$.text') FROM entries WHERE id = '\(a)'")
        #expect(text.stdout == "alpha\n")
        let tomb = try sandbox.sqlite("SELECT id FROM tombstones")
        #expect(tomb.stdout == b + "\n")
        #expect(try sandbox.sqlite("PRAGMA integrity_check").stdout == "ok\n")
    }
}
