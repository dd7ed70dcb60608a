import Foundation
import LifeSyncRuntime
import Testing
import TestSupport

/// The change feed, its SSE stream, the streamed export and recording content, with the real
/// `lifesync serve` and curl.
@Suite(.serialized) struct HTTPFeedTests {
    static func entry(_ text: String, at time: String = "2026-11-22T10:00:00Z") -> String {
        #"{"timestamp": "\#(time)", "category": "note", "data": {"text": "\#(text)"}}"#
    }

    static func post(_ api: HTTPNode, _ text: String, at time: String = "2026-11-22T10:00:00Z") throws -> String {
        let made = try api.curl.request("POST", "/api/entries", body: entry(text, at: time))
        return try #require(made.object["id"] as? String, "\(made.status) \(made.body)")
    }

    /// `curl -N` on the event stream, writing to a file until stopped.
    final class EventStreamReader {
        let process: Subprocess
        let file: String
        init(_ api: HTTPNode, file: String, headers: [String] = [], query: String = "") throws {
            self.file = file
            var arguments = ["-sS", "-N", "--max-time", "60", "-H", "Authorization: Bearer \(api.key)"]
            for header in headers { arguments += ["-H", header] }
            process = try Subprocess("/usr/bin/curl", arguments + ["http://127.0.0.1:\(api.port)/api/changes/stream\(query)"], standardOutput: file)
        }
        var text: String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
        /// The `data:` lines so far, parsed.
        var items: [[String: Any]] {
            text.components(separatedBy: "\n").filter { $0.hasPrefix("data: ") }.compactMap { try? parseJSON(String($0.dropFirst(6))) as? [String: Any] }
        }
        var ids: [String] { items.compactMap { $0["id"] as? String } }
        deinit { _ = process.kill(timeout: 5) }
    }

    @Test(.timeLimit(.minutes(3)))
    func theFeedPagesWithCursorsShowsDeletesAndRefusesBadCursors() throws {
        let api = try HTTPNode()
        let ids = try (1...3).map { try Self.post(api, "note \($0)") }
        let first = try api.curl.request("GET", "/api/changes?limit=2")
        #expect(first.status == 200, "\(first.body)")
        let page = try #require(first.object["changes"] as? [[String: Any]])
        #expect(page.compactMap { $0["id"] as? String } == Array(ids.prefix(2)) && first.object["has_more"] as? Bool == true)
        let entry = try #require(page.first?["entry"] as? [String: Any])
        let single = try api.curl.request("GET", "/api/entries/\(ids[0])")
        #expect(NSDictionary(dictionary: entry) == NSDictionary(dictionary: single.object), "the item's entry is GET /api/entries/:id's")
        #expect(page.first?["deleted_at"] is NSNull)
        let cursor = try #require(first.object["next_cursor"] as? String)

        let second = try api.curl.request("GET", "/api/changes?since=\(cursor)")
        #expect((second.object["changes"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[2]])
        #expect(second.object["has_more"] as? Bool == false)
        let caughtUp = try #require(second.object["next_cursor"] as? String)

        // Changes after the cursor: a delete and an edit of entries read before.
        #expect(try api.curl.request("DELETE", "/api/entries/\(ids[1])").status == 200)
        #expect(try api.curl.request("PATCH", "/api/entries/\(ids[0])", body: #"{"data": {"text": "edited"}}"#).status == 200)
        let after = try api.curl.request("GET", "/api/changes?since=\(caughtUp)")
        let changes = try #require(after.object["changes"] as? [[String: Any]], "\(after.body)")
        #expect(changes.compactMap { $0["id"] as? String } == [ids[1], ids[0]])
        #expect(changes.first?["entry"] is NSNull && (changes.first?["deleted_at"] as? String)?.hasSuffix("Z") == true)
        #expect(((changes.last?["entry"] as? [String: Any])?["data"] as? [String: Any])?["text"] as? String == "edited")
        // Compacted: from the start, each entry once, at its latest change.
        let all = try api.curl.request("GET", "/api/changes")
        #expect((all.object["changes"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[2], ids[1], ids[0]])

        let tag = try #require(caughtUp.split(separator: "-").last)
        for (bad, word) in [("nonsense", "not a change cursor"), ("1-0badc0de", "another replica"), ("999999-\(tag)", "future")] {
            let refused = try api.curl.request("GET", "/api/changes?since=\(bad)")
            #expect(refused.status == 400 && (refused.object["error"] as? String)?.contains(word) == true, "\(bad): \(refused.body)")
        }
        #expect(try api.curl.request("GET", "/api/changes?limit=0").status == 400)
        #expect(try api.curl.request("GET", "/api/changes?limit=1001").status == 400)
        #expect(try api.anonymous.request("GET", "/api/changes").status == 401)
    }

    @Test(.timeLimit(.minutes(3)))
    func theEventStreamDeliversHTTPAndPeerWritesLiveAndResumes() throws {
        let api = try HTTPNode(listen: true)
        let mac = try api.group.node("mac", role: "mac")
        try mac.start(peers: [api.node.address], listen: false)
        let before = try Self.post(api, "before the stream")
        let reader = try EventStreamReader(api, file: api.node.db + ".sse-1")
        #expect(eventually(timeout: 10, interval: 0.05) { reader.ids == [before] }, "\(reader.text)")
        #expect(reader.text.hasPrefix("id: ") && reader.text.contains("\nevent: change\ndata: {"), "\(reader.text)")

        let overHTTP = try Self.post(api, "over HTTP")
        #expect(eventually(timeout: 10, interval: 0.05) { reader.ids == [before, overHTTP] }, "\(reader.text)")

        // Written on the mac by another process; the mac's node notices and pushes it here.
        let added = try LifeSyncBinary.run(["add", "--text", "from the mac", "--db", mac.db])
        try #require(added.status == 0, "\(added.stderr)")
        let fromPeer = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(eventually(timeout: 20, interval: 0.05) { reader.ids == [before, overHTTP, fromPeer] },
                "\(reader.text)\nphone log:\n\(api.node.allOutput)\nmac log:\n\(mac.allOutput)")

        // Written to this node's own file by another process: the node notices (its poll of the
        // file) and says the replica changed, the one notice that wakes the stream.
        let written = try LifeSyncBinary.run(["add", "--text", "by another process here", "--db", api.node.db])
        try #require(written.status == 0, "\(written.stderr)")
        let byProcess = written.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(eventually(timeout: 10, interval: 0.05) { reader.ids == [before, overHTTP, fromPeer, byProcess] }, "\(reader.text)")

        // Resuming after the first event: the rest, not the first again.
        let firstID = try #require(reader.text.components(separatedBy: "\n").first { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) })
        let resumed = try EventStreamReader(api, file: api.node.db + ".sse-2", headers: ["Last-Event-ID: \(firstID)"])
        #expect(eventually(timeout: 10, interval: 0.05) { resumed.ids == [overHTTP, fromPeer, byProcess] }, "\(resumed.text)")
        let bySince = try EventStreamReader(api, file: api.node.db + ".sse-3", query: "?since=\(firstID)")
        #expect(eventually(timeout: 10, interval: 0.05) { bySince.ids == [overHTTP, fromPeer, byProcess] }, "\(bySince.text)")
        let headers = try api.curl.request("HEAD", "/api/changes/stream")
        #expect(headers.status == 200 && headers.headers["content-type"]?.hasPrefix("text/event-stream") == true, "\(headers)")
        let refused = try api.curl.request("GET", "/api/changes/stream?since=1-0badc0de")
        #expect(refused.status == 400)
    }

    @Test(.timeLimit(.minutes(3)))
    func theExportIsLifesyncExportsBytes() throws {
        let api = try HTTPNode()
        // As JSON string contents: a formula with a comma and quotes, a line break.
        for (i, text) in ["plain", #"=1+2, \"quoted\""#, #"line\nbreak"#].enumerated() {
            _ = try Self.post(api, text, at: "2026-11-2\(i + 1)T10:00:00Z")
        }
        for format in ["json", "csv"] {
            for filter in ["", "&since=2026-11-22"] {
                let out = api.node.db + ".export.\(format)"
                let cli = try LifeSyncBinary.run(["export", "--format", format, "--out", out, "--db", api.node.db]
                                                 + (filter.isEmpty ? [] : ["--since", "2026-11-22"]))
                try #require(cli.status == 0, "\(cli.stderr)")
                let expected = try String(contentsOfFile: out, encoding: .utf8)
                let got = try api.curl.request("GET", "/api/export?format=\(format)\(filter)")
                #expect(got.status == 200 && got.body == expected, "\(format)\(filter): \(got.body) vs \(expected)")
                #expect(got.headers["content-disposition"]?.hasPrefix("attachment") == true && got.headers["transfer-encoding"] == "chunked")
            }
        }
        #expect(try api.curl.request("GET", "/api/export?format=xml").status == 400)
    }

    @Test(.timeLimit(.minutes(3)))
    func recordingContentHonoursRanges() throws {
        let api = try HTTPNode()
        let file = api.node.db + ".voice.m4a"
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let attached = try LifeSyncBinary.run(["attach", file, "--db", api.node.db], timeout: 60)
        try #require(attached.status == 0, "\(attached.stderr)")
        let id = attached.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let saved = api.node.db + ".got"
        func fetch(_ range: String?) throws -> (CurlResponse, [UInt8]) {
            try? FileManager.default.removeItem(atPath: saved)
            let arguments = ["-sS", "--max-time", "15", "-D", "-", "-o", saved, "-H", "Authorization: Bearer \(api.key)"]
                + (range.map { ["-H", "Range: \($0)"] } ?? []) + ["http://127.0.0.1:\(api.port)/api/recordings/\(id)/content"]
            let result = try Captured.run("/usr/bin/curl", arguments, timeout: 30)
            try #require(result.status == 0, "\(result.stderr)")
            return (try Curl.parse(result.stdout), Array((try? Data(contentsOf: URL(fileURLWithPath: saved))) ?? Data()))
        }
        let (whole, all) = try fetch(nil)
        #expect(whole.status == 200 && all == bytes && whole.headers["accept-ranges"] == "bytes" && whole.headers["content-type"] == "audio/mp4")
        let (middle, part) = try fetch("bytes=1000-1999")
        #expect(middle.status == 206 && part == Array(bytes[1000...1999]) && middle.headers["content-range"] == "bytes 1000-1999/100000")
        let (open, tail) = try fetch("bytes=99990-")
        #expect(open.status == 206 && tail == Array(bytes[99990...]))
        let (suffix, last) = try fetch("bytes=-5")
        #expect(suffix.status == 206 && last == Array(bytes[99995...]) && suffix.headers["content-range"] == "bytes 99995-99999/100000")
        let (beyond, _) = try fetch("bytes=100000-")
        #expect(beyond.status == 416 && beyond.headers["content-range"] == "bytes */100000")
        #expect(try api.curl.request("GET", "/api/recordings/rec_unknown/content").status == 404)
    }

    @Test(.timeLimit(.minutes(3)))
    func theChangesCommandPrintsTheFeedAndFollowsIt() throws {
        let api = try HTTPNode()
        let first = try Self.post(api, "first")
        let second = try Self.post(api, "second")
        let listed = try LifeSyncBinary.run(["changes", "--json", "--db", api.node.db])
        try #require(listed.status == 0, "\(listed.stderr)")
        let items = listed.stdout.split(separator: "\n").compactMap { try? parseJSON(String($0)) as? [String: Any] }
        let fromAPI = try #require(try api.curl.request("GET", "/api/changes").object["changes"] as? [[String: Any]])
        #expect(items.compactMap { $0["id"] as? String } == [first, second] && items.count == fromAPI.count)
        #expect(zip(items, fromAPI).allSatisfy { NSDictionary(dictionary: $0) == NSDictionary(dictionary: $1) }, "the CLI's items are the API's")
        let cursor = try #require(items.first?["cursor"] as? String)
        let after = try LifeSyncBinary.run(["changes", "--since", cursor, "--ids", "--db", api.node.db])
        #expect(after.status == 0 && after.stdout.hasPrefix(items[1]["cursor"] as? String ?? "?") && after.stdout.contains("\(second)  [note] second"),
                "\(after.stdout)")
        let refused = try LifeSyncBinary.run(["changes", "--since", "7-0badc0de", "--db", api.node.db])
        #expect(refused.status == 1 && refused.stderr.contains("another replica"), "\(refused.stderr)")

        let out = api.node.db + ".follow"
        let follow = try Subprocess(LifeSyncBinary.path, ["changes", "--follow", "--since", cursor, "--ids", "--db", api.node.db], standardOutput: out)
        defer { _ = follow.kill(timeout: 5) }
        let text = { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
        #expect(eventually(timeout: 10, interval: 0.05) { text().contains(second) }, "\(text())")
        try #require(try api.curl.request("DELETE", "/api/entries/\(first)").status == 200)
        #expect(eventually(timeout: 10, interval: 0.05) { text().contains("\(first)  deleted 20") }, "\(text())")
        follow.signal(SIGINT)
        #expect(follow.wait(timeout: 10)?.exitStatus == 0, "changes --follow stops cleanly on SIGINT")
    }
}
