import Foundation
import Glibc
import Testing
import TestSupport

/// The LifeLog HTTP API of a real `lifesync serve --http` process, driven by curl.
@Suite(.serialized) struct HTTPAPITests {
    /// The LifeLog document's Drafts action, as written: `id: UUID.make()` (uppercase, no
    /// prefix), `device_id: device.model`, category from the first tag.
    static func draftsPayload(_ uuid: String) -> String {
        """
        {"id": "\(uuid)", "timestamp": "2026-11-22T08:30:00.000Z", "recorded_at": "2026-11-22T08:30:01.000Z",
         "source": "drafts", "device_id": "iPhone", "category": "journal",
         "data": {"text": "Buy groceries after work", "tags": ["journal"]}}
        """
    }

    @Test(.timeLimit(.minutes(3)))
    func draftsActionWorksAsWrittenAndIsIdempotent() throws {
        let api = try HTTPNode()
        let uuid = UUID().uuidString  // uppercase, as Drafts makes it
        let created = try api.curl.request("POST", "/api/entries", body: Self.draftsPayload(uuid))
        #expect(created.status == 201, "\(created.body)")
        #expect(created.headers["access-control-allow-origin"] == "*")
        let id = "lifelog_" + uuid.lowercased()  // the one rule of every way in (LogEntry+LifeLogInput)
        #expect(created.object["id"] as? String == id && created.object["status"] as? String == "created", "\(created.body)")

        let again = try api.curl.request("POST", "/api/entries", body: Self.draftsPayload(uuid))
        #expect(again.status == 200 && again.object["status"] as? String == "already present", "\(again.body)")

        let got = try api.curl.request("GET", "/api/entries/\(id)")
        #expect(got.status == 200 && got.headers["etag"]?.hasPrefix("\"") == true)
        let entry = got.object
        #expect(entry["source"] as? String == "drafts" && entry["device_id"] as? String == "iPhone" && entry["category"] as? String == "journal")
        #expect(entry["timestamp"] as? String == "2026-11-22T08:30:00.000Z")
        #expect((entry["data"] as? [String: Any])?["tags"] as? [String] == ["journal"])
        // A local write like `lifesync add`: the CLI sees it in the same file.
        #expect(try LifeSyncBinary.run(["get", id, "--db", api.node.db]).status == 0)
    }

    /// A request without an `id` that names its `timestamp` (a Shortcut's log) gets the ID
    /// `lifesync import` gives the same record, so a retry finds the entry it wrote: 200 "already
    /// present", one entry. Without a timestamp each request is a new log (issue 27 §3).
    @Test(.timeLimit(.minutes(3)))
    func aRetriedRequestWithoutAnIDDoesNotDuplicate() throws {
        let api = try HTTPNode()
        let body = #"{"timestamp": "2026-11-22T09:15:00Z", "source": "shortcut", "device_id": "iPhone", "category": "mood", "data": {"metric": {"name": "mood", "value": 7, "scale_min": 1, "scale_max": 10}}}"#
        let first = try api.curl.request("POST", "/api/entries", body: body)
        let again = try api.curl.request("POST", "/api/entries", body: body)
        #expect(first.status == 201 && again.status == 200 && again.object["status"] as? String == "already present", "\(first.body) \(again.body)")
        #expect(first.object["id"] as? String == again.object["id"] as? String)
        let file = api.node.db + ".ndjson"
        try Data((body + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let imported = try LifeSyncBinary.run(["import", file, "--db", api.node.db])
        #expect(imported.status == 0 && imported.stdout == "imported 0 entries (1 already present)\n", "import finds the same entry: \(imported.stdout)")
        #expect(api.node.entryCount == 1)
        let untimed = #"{"category": "note", "data": {"text": "no time given"}}"#
        #expect(try api.curl.request("POST", "/api/entries", body: untimed).status == 201)
        #expect(try api.curl.request("POST", "/api/entries", body: untimed).status == 201)
        #expect(api.node.entryCount == 3, "without a timestamp each request is a new log")
    }

    /// The client addresses what it created by the ID it holds (the bare UUID, in its case), on
    /// every route and in the CLI (issue 27 §1).
    @Test(.timeLimit(.minutes(3)))
    func anEntryIsAddressedByTheBareUUIDItsClientHolds() throws {
        let api = try HTTPNode()
        let uuid = UUID().uuidString
        let stored = "lifelog_" + uuid.lowercased()
        #expect(try api.curl.request("POST", "/api/entries", body: Self.draftsPayload(uuid)).status == 201)
        let got = try api.curl.request("GET", "/api/entries/\(uuid)")
        #expect(got.status == 200 && got.object["id"] as? String == stored, "\(got.body)")
        let patched = try api.curl.request("PATCH", "/api/entries/\(uuid)", body: #"{"category": "errand"}"#)
        #expect(patched.status == 200 && patched.object["category"] as? String == "errand", "\(patched.body)")
        let cli = try LifeSyncBinary.run(["get", uuid, "--db", api.node.db])
        #expect(cli.status == 0 && cli.stdout.contains(stored), "\(cli.stderr)")
        let updated = try LifeSyncBinary.run(["update", uuid.lowercased(), "--json", #"{"category": "journal"}"#, "--db", api.node.db])
        #expect(updated.status == 0 && updated.stdout.contains(stored), "\(updated.stderr)")
        // Another prefix with the same UUID is another entry: not what the bare UUID names.
        #expect(try api.curl.request("GET", "/api/entries/phone_\(uuid.lowercased())").status == 404)
        let deleted = try api.curl.request("DELETE", "/api/entries/\(uuid)")
        #expect(deleted.status == 200 && deleted.object["id"] as? String == stored, "\(deleted.body)")
        #expect(try api.curl.request("GET", "/api/entries/\(stored)").status == 404)
    }

    @Test(.timeLimit(.minutes(3)))
    func keysAreRequiredAndRevocable() throws {
        let api = try HTTPNode()
        for (curl, reason) in [(api.anonymous, "missing Authorization"),
                               (Curl(base: api.curl.base, key: "lsk_" + String(repeating: "0", count: 64)), "not valid")] {
            let refused = try curl.request("GET", "/api/entries")
            #expect(refused.status == 401 && (refused.object["error"] as? String)?.contains(reason) == true, "\(refused.body)")
            #expect(refused.headers["www-authenticate"] == "Bearer")
        }
        #expect(try api.curl.request("GET", "/api/status").status == 200)
        let listed = try LifeSyncBinary.run(["keys", "list", "--json", "--db", api.node.db])
        let keys = try parseJSON(listed.stdout) as? [[String: Any]] ?? []
        #expect(keys.count == 1 && keys.first?["name"] as? String == "curl" && keys.first?["last_used"] is String, "\(listed.stdout)")
        #expect(!listed.stdout.contains(api.key), "a key is shown only when made")
        // Only the SHA-256 is in the file.
        let stored = try SQLiteShell.run(api.node.db, "SELECT key_hash FROM api_keys").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stored.count == 64 && stored != api.key && !stored.contains(api.key.dropFirst(4)))

        #expect(try LifeSyncBinary.run(["keys", "revoke", "curl", "--db", api.node.db]).status == 0)
        #expect(try api.curl.request("GET", "/api/status").status == 401, "a revoked key is refused from the next request on")
        let unknown = try LifeSyncBinary.run(["keys", "revoke", "curl", "--db", api.node.db])
        #expect(unknown.status == 1 && unknown.stderr.contains("no key called"))
    }

    @Test(.timeLimit(.minutes(3)))
    func batchAnswersPerItemAndAtomicWritesNothingOnARefusal() throws {
        let api = try HTTPNode()
        let good = newEntryID("drafts"), other = newEntryID("drafts")
        let batch = """
            [{"id": "\(good)", "timestamp": "2026-11-22T09:00:00Z", "category": "mood", "data": {"metric": {"name": "mood", "value": 7, "scale_min": 1, "scale_max": 10}}},
             {"timestamp": "2026-11-22T09:05:00Z", "data": {"metric": {"name": "mood", "value": 11, "scale_min": 1, "scale_max": 10}}},
             {"id": "\(good)", "timestamp": "2026-11-22T09:00:00Z", "category": "mood", "data": {"metric": {"name": "mood", "value": 7, "scale_min": 1, "scale_max": 10}}},
             {"id": "\(good)", "timestamp": "2026-11-22T09:00:00Z", "category": "work"},
             {"timestamp": "yesterday"}]
            """
        // A refused item makes the batch answer 422: never a 2xx a client would take for success.
        let answer = try api.curl.request("POST", "/api/entries", body: batch)
        #expect(answer.status == 422, "\(answer.body)")
        #expect(answer.object["stored"] as? [String] == [good, good], "\(answer.body)")
        let results = answer.object["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["status"] as? String } == ["created", "refused", "already present", "refused", "refused"], "\(answer.body)")
        #expect(results[1]["field"] as? String == "data.metric.value", "\(results[1])")
        #expect(results[3]["field"] as? String == "id" && (results[3]["reason"] as? String)?.contains("other content") == true)
        #expect(results[4]["field"] as? String == "timestamp")
        #expect(integer(answer.object["created"]) == 1 && integer(answer.object["refused"]) == 3)
        // A naive client retries the whole batch: the stored item is found, not written twice.
        let retried = try api.curl.request("POST", "/api/entries", body: batch)
        #expect(retried.status == 422, "\(retried.body)")
        let again = retried.object["results"] as? [[String: Any]] ?? []
        #expect(again.map { $0["status"] as? String } == ["already present", "refused", "already present", "refused", "refused"], "\(retried.body)")
        #expect(integer(retried.object["created"]) == 0 && api.node.entryCount == 1)
        // Every item refused: still a client error, nothing stored.
        let allRefused = try api.curl.request("POST", "/api/entries", body: #"[{"data": {"text": 5}}, {"timestamp": "yesterday"}]"#)
        #expect(allRefused.status == 422 && allRefused.object["stored"] as? [String] == [], "\(allRefused.body)")

        let atomic = """
            [{"id": "\(other)", "timestamp": "2026-11-22T10:00:00Z", "data": {"text": "fine"}},
             {"timestamp": "2026-11-22T10:00:00Z", "colour": "red", "data": {"text": "fine"}}]
            """
        let refused = try api.curl.request("POST", "/api/entries?atomic=true", body: atomic)
        #expect(refused.status == 400, "\(refused.body)")
        let statuses = (refused.object["results"] as? [[String: Any]] ?? []).map { $0["status"] as? String ?? "" }
        #expect(statuses.count == 2 && statuses[0].hasPrefix("not written") && statuses[1] == "refused", "\(refused.body)")
        #expect(try api.curl.request("GET", "/api/entries/\(other)").status == 404, "nothing of an atomic batch is written")
        #expect(api.node.entryCount == 1)

        let bad = try api.curl.request("POST", "/api/entries", body: #"{"timestamp": "2026-11-22T10:00:00Z", "data": {"text": 5}}"#)
        #expect(bad.status == 400 && bad.object["field"] as? String == "data.text", "\(bad.body)")
        let notJSON = try api.curl.request("POST", "/api/entries", body: "{oops")
        #expect(notJSON.status == 400 && (notJSON.object["error"] as? String)?.contains("not JSON") == true, "\(notJSON.body)")
    }

    @Test(.timeLimit(.minutes(3)))
    func etagAndIfMatchStopLostUpdates() throws {
        let api = try HTTPNode()
        let made = try api.curl.request("POST", "/api/entries", body: #"{"timestamp": "2026-11-22T10:00:00Z", "category": "note", "data": {"text": "first"}}"#)
        let id = try #require(made.object["id"] as? String, "\(made.body)")
        let first = try #require(try api.curl.request("GET", "/api/entries/\(id)").headers["etag"])
        #expect(try api.curl.request("GET", "/api/entries/\(id)", headers: ["If-None-Match: \(first)"]).status == 304)

        let patched = try api.curl.request("PATCH", "/api/entries/\(id)", body: #"{"data": {"text": "second"}}"#, headers: ["If-Match: \(first)"])
        #expect(patched.status == 200 && (patched.object["data"] as? [String: Any])?["text"] as? String == "second", "\(patched.body)")
        let second = try #require(patched.headers["etag"])
        #expect(second != first)

        let stale = try api.curl.request("PUT", "/api/entries/\(id)", body: #"{"timestamp": "2026-11-22T10:00:00Z", "data": {"text": "lost"}}"#,
                                         headers: ["If-Match: \(first)"])
        #expect(stale.status == 412 && (stale.object["error"] as? String)?.contains("If-Match") == true, "\(stale.body)")
        let replaced = try api.curl.request("PUT", "/api/entries/\(id)", body: #"{"timestamp": "2026-11-22T11:00:00Z", "data": {"text": "third"}}"#,
                                            headers: ["If-Match: \(second)"])
        #expect(replaced.status == 200 && replaced.object["category"] == nil, "PUT replaces whole: \(replaced.body)")
        let renamed = try api.curl.request("PATCH", "/api/entries/\(id)", body: #"{"id": "phone_00000000-0000-4000-8000-000000000000"}"#)
        #expect(renamed.status == 400 && renamed.object["field"] as? String == "id")

        #expect(try api.curl.request("DELETE", "/api/entries/\(id)", headers: ["If-Match: \(second)"]).status == 412)
        #expect(try api.curl.request("DELETE", "/api/entries/\(id)").status == 200)
        #expect(try api.curl.request("GET", "/api/entries/\(id)").status == 404)
        #expect(try api.curl.request("DELETE", "/api/entries/\(id)").status == 404)
        #expect(api.node.scalar("SELECT count(*) FROM tombstones WHERE id = '\(id)'") == 1, "a delete is a tombstone")
    }

    @Test(.timeLimit(.minutes(3)))
    func listFiltersStatsStatusAndCORS() throws {
        let api = try HTTPNode()
        let items = [("2026-11-21T23:59:59Z", "mood", "tired", "watch"), ("2026-11-22T08:00:00Z", "note", "Buy Groceries", "drafts"),
                     ("2026-11-22T20:00:00Z", "note", "call mum", "drafts"), ("2026-11-23T00:00:00Z", "work", "ship it", "mac")]
        let body = "[" + items.map { #"{"timestamp": "\#($0.0)", "category": "\#($0.1)", "source": "\#($0.3)", "data": {"text": "\#($0.2)", "tags": ["t-\#($0.1)"]}}"# }
            .joined(separator: ",") + "]"
        #expect(try api.curl.request("POST", "/api/entries", body: body).status == 200)
        func texts(_ query: String) throws -> [String] {
            let listed = try api.curl.request("GET", "/api/entries" + query)
            #expect(listed.status == 200, "\(query): \(listed.body)")
            return (listed.json as? [[String: Any]] ?? []).map { ($0["data"] as? [String: Any])?["text"] as? String ?? "?" }
        }
        #expect(try texts("") == ["ship it", "call mum", "Buy Groceries", "tired"], "newest first")
        #expect(try texts("?since=2026-11-22&until=2026-11-22") == ["call mum", "Buy Groceries"], "bare dates cover the whole UTC day")
        #expect(try texts("?category=note&limit=1&offset=1") == ["Buy Groceries"])
        #expect(try texts("?search=grocery") == ["Buy Groceries"])
        #expect(try texts("?source=watch") == ["tired"])
        #expect(try texts("?tag=t-work") == ["ship it"])
        #expect(try texts("?until=2026-11-22T08%3A00%3A00%2B00%3A00") == ["Buy Groceries", "tired"])
        for (query, word) in [("?limit=5000", "limit"), ("?since=tomorrow", "since"), ("?catgory=note", "unknown query parameter 'catgory'")] {
            let refused = try api.curl.request("GET", "/api/entries" + query)
            #expect(refused.status == 400 && (refused.object["error"] as? String)?.contains(word) == true, "\(query): \(refused.body)")
        }

        let stats = try api.curl.request("GET", "/api/entries/stats").object
        #expect(integer(stats["total"]) == 4 && integer((stats["by_category"] as? [String: Any])?["note"]) == 2, "\(stats)")
        let status = try api.curl.request("GET", "/api/status").object
        #expect(integer(status["entries"]) == 4 && status["role"] as? String == "phone" && status["peers"] is [Any], "\(status)")

        let head = try api.curl.request("HEAD", "/api/entries")
        #expect(head.status == 200 && head.body.isEmpty && Int(head.headers["content-length"] ?? "") ?? 0 > 0)
        // The Hono app's cors(): any OPTIONS is a preflight, answered before authentication.
        let preflight = try api.anonymous.request("OPTIONS", "/api/entries", headers: ["Origin: https://dash.example", "Access-Control-Request-Method: POST",
                                                                                        "Access-Control-Request-Headers: authorization,content-type"])
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "*")
        #expect(preflight.headers["access-control-allow-methods"] == "GET,HEAD,PUT,POST,DELETE,PATCH")
        #expect(preflight.headers["access-control-allow-headers"] == "authorization,content-type")
    }

    @Test(.timeLimit(.minutes(3)))
    func badRequestsGetClearAnswersAndTheNodeStaysUp() throws {
        let api = try HTTPNode()
        let missing = try api.curl.request("GET", "/api/nothing")
        #expect(missing.status == 404 && (missing.object["error"] as? String)?.contains("no route") == true)
        #expect(try api.anonymous.request("GET", "/").status == 404)
        let wrongMethod = try api.curl.request("DELETE", "/api/entries")
        #expect(wrongMethod.status == 405 && (wrongMethod.object["error"] as? String)?.contains("allowed: GET, HEAD, POST") == true, "\(wrongMethod.body)")
        #expect(try api.curl.request("POST", "/api/status", body: "{}").status == 405)

        // Over the 4 MiB a body may take: curl asks 100-continue, and the answer is 413 at once.
        let big = try api.curl.request("POST", "/api/entries", body: "[" + String(repeating: " ", count: 5 << 20) + "]")
        #expect(big.status == 413 && (big.object["error"] as? String)?.contains("4194304") == true, "\(big.body.prefix(200))")
        let chunked = try api.curl.request("POST", "/api/entries", body: #"{"timestamp": "2026-11-22T10:00:00Z", "data": {"text": "chunked"}}"#,
                                           headers: ["Transfer-Encoding: chunked"])
        #expect(chunked.status == 201, "\(chunked.body)")

        // Keep-alive: two requests in one curl run share one connection.
        let twice = try Captured.run("/usr/bin/curl", ["-sS", "--max-time", "15", "-H", "Authorization: Bearer \(api.key)", "-o", "/dev/null", "-o", "/dev/null",
                                                      "-w", "%{http_code} %{num_connects}\n", api.curl.base + "/api/status", api.curl.base + "/api/status"], timeout: 30)
        #expect(twice.stdout == "200 1\n200 0\n", "\(twice.stdout) \(twice.stderr)")

        // Raw garbage: 400 naming the problem; the node keeps serving.
        let garbage = try rawExchange(port: api.port, "BREW /pot HTCPCP/1.0\r\n\r\n")
        #expect(garbage.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && garbage.contains("must end in HTTP/1.1"), "\(garbage)")
        let noHost = try rawExchange(port: api.port, "GET /api/status HTTP/1.1\r\n\r\n")
        #expect(noHost.hasPrefix("HTTP/1.1 400") && noHost.contains("Host header"), "\(noHost)")
        let after = try api.curl.request("GET", "/api/status")
        #expect(api.node.isRunning && after.status == 200)
    }

    @Test(.timeLimit(.minutes(3)))
    func aWriteOverHTTPReplicatesToAPeer() throws {
        let api = try HTTPNode(listen: true)
        let mac = try api.group.node("mac", role: "mac")
        try mac.start(peers: [api.node.address], listen: false)
        let made = try api.curl.request("POST", "/api/entries", body: #"{"timestamp": "2026-11-22T10:00:00Z", "data": {"text": "over HTTP"}}"#)
        let id = try #require(made.object["id"] as? String, "\(made.body)")
        #expect(eventually(timeout: 15, interval: 0.1) { mac.scalar("SELECT count(*) FROM entries WHERE id = '\(id)'") == 1 },
                "the mac never got \(id): phone log:\n\(api.node.allOutput)\nmac log:\n\(mac.allOutput)")
    }

    @Test(.timeLimit(.minutes(3)))
    func plainHTTPOffLoopbackNeedsConsent() throws {
        let sandbox = try Sandbox(role: "phone")
        let refused = try sandbox.run(["serve", "--http", "0.0.0.0:0"])
        #expect(refused.status == 1 && refused.stderr.contains("--http-insecure"), "\(refused.stderr)")
        let usage = try sandbox.run(["serve", "--http", "nowhere"])
        #expect(usage.status == 2 && usage.stderr.contains("--http"), "\(usage.stderr)")
    }

    /// Sends `text` on a fresh loopback connection and reads the answer until the server closes.
    private func rawExchange(port: UInt16, _ text: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServeError("socket") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { throw ServeError("connect: \(String(cString: strerror(errno)))") }
        _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<256 {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
