import Foundation
import Glibc
import LifeSync
import LifeSyncHTTP
import TestSupport
import Testing

// The LifeLog document's iOS model (seed 004), as written there.
private struct LogEntry: Identifiable, Codable {
    let id: UUID
    let timestamp: Date
    let recordedAt: Date
    let source: String
    let deviceId: String
    var category: String?
    var data: LogData
    var synced: Bool = false
}

private struct LogData: Codable {
    var text: String?
    var metric: Metric?
    var location: Location?
    var tags: [String]?
}

private struct Metric: Codable {
    let name: String
    let value: Double
    var unit: String?
    var scaleMin: Double?
    var scaleMax: Double?

    enum CodingKeys: String, CodingKey {
        case name, value, unit
        case scaleMin = "scale_min"
        case scaleMax = "scale_max"
    }
}

private struct Location: Codable {
    let latitude: Double
    let longitude: Double
    var accuracy: Double?
    var altitude: Double?
    var placeName: String?
}

/// HTTP as the LifeLog apps and everyday clients meet it (issue 27 §2 and §5), with a real
/// `lifesync serve --http`, curl and Python's `http.client` and sockets.
@Suite(.serialized) struct HTTPClientDetailsTests {
    /// What the app's `createEntries` sends: its model through a default `JSONEncoder`, dates
    /// as ISO 8601 (the document's `JSONEncoder.iso8601`).
    private static func appBody(_ entries: [LogEntry]) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(entries), as: UTF8.self)
    }

    private static func mood(_ value: Double, place: String? = nil) -> LogEntry {
        LogEntry(id: UUID(), timestamp: Date(timeIntervalSince1970: 1_795_000_000), recordedAt: Date(timeIntervalSince1970: 1_795_000_001),
                 source: "iphone", deviceId: "iPhone 15", category: "mood",
                 data: LogData(metric: Metric(name: "mood", value: value, scaleMin: 1, scaleMax: 10),
                               location: place.map { Location(latitude: 52.52, longitude: 13.40, accuracy: 10, placeName: $0) }))
    }

    /// The app's model as written is taken (camelCase names are the same fields), and a batch
    /// with a refused item fails the app's own `200..<300` check, so it keeps that entry unsynced.
    @Test(.timeLimit(.minutes(3)))
    func theAppsModelIsTakenAndARefusalIsNoSuccess() throws {
        let api = try HTTPNode()
        let entries = [Self.mood(7, place: "Berlin"), Self.mood(3)]
        let body = try Self.appBody(entries)
        #expect(body.contains("\"recordedAt\"") && body.contains("\"deviceId\"") && body.contains("\"placeName\""), "\(body)")
        let created = try api.curl.request("POST", "/api/entries", body: body)
        #expect(created.status == 200 && integer(created.object["created"]) == 2, "\(created.body)")
        let id = "lifelog_" + entries[0].id.uuidString.lowercased()
        let got = try api.curl.request("GET", "/api/entries/\(id)")
        #expect(got.object["device_id"] as? String == "iPhone 15" && got.object["recorded_at"] as? String == "2026-11-18T11:06:41.000Z", "\(got.body)")
        #expect(((got.object["data"] as? [String: Any])?["location"] as? [String: Any])?["place_name"] as? String == "Berlin", "\(got.body)")
        #expect(got.headers["access-control-expose-headers"]?.contains("ETag") == true, "a script reads the ETag it sends back in If-Match")

        let batch = [Self.mood(5), Self.mood(11)]  // 11 is above the scale
        let refused = try api.curl.request("POST", "/api/entries", body: try Self.appBody(batch))
        #expect(!(200..<300).contains(refused.status), "the app would mark the refused entry synced: \(refused.status)")
        #expect(refused.status == 422 && refused.object["stored"] as? [String] == ["lifelog_" + batch[0].id.uuidString.lowercased()], "\(refused.body)")
        // The app retries it all: the stored one is found again, not duplicated.
        let retried = try api.curl.request("POST", "/api/entries", body: try Self.appBody(batch))
        #expect(retried.status == 422 && integer(retried.object["created"]) == 0 && api.node.entryCount == 3, "\(retried.body)")

        // PUT and PATCH take the same names; both spellings of one field are refused, named.
        let put = try api.curl.request("PUT", "/api/entries/\(id)", body: """
            {"timestamp": "2026-11-19T11:06:40Z", "recordedAt": "2026-11-19T11:07:00Z", "source": "iphone", "deviceId": "iPad",
             "category": "mood", "data": {"metric": {"name": "mood", "value": 8, "scaleMin": 1, "scaleMax": 10}}}
            """)
        #expect(put.status == 200 && put.object["device_id"] as? String == "iPad", "\(put.body)")
        let patch = try api.curl.request("PATCH", "/api/entries/\(id)", body: #"{"data": {"location": {"latitude": 1, "longitude": 2, "placeName": "Home"}}}"#)
        #expect(((patch.object["data"] as? [String: Any])?["location"] as? [String: Any])?["place_name"] as? String == "Home", "\(patch.body)")
        let both = try api.curl.request("PATCH", "/api/entries/\(id)", body: #"{"deviceId": "a", "device_id": "b"}"#)
        #expect(both.status == 400 && both.object["field"] as? String == "device_id"
                && (both.object["reason"] as? String)?.contains("\"deviceId\"") == true, "\(both.body)")
        let unknown = try api.curl.request("PATCH", "/api/entries/\(id)", body: #"{"deviceID": "a"}"#)
        #expect(unknown.status == 400 && unknown.object["field"] as? String == "deviceID", "\(unknown.body)")
    }

    /// Runs a Python client against the node: it prints "ok" or fails with what it saw.
    private static func python(_ api: HTTPNode, _ script: String) throws -> String {
        let prelude = """
            import email.utils, http.client, re, socket, sys, time
            port, key = int(sys.argv[1]), sys.argv[2].encode()
            def until_closed(s):
                data = b''
                while True:
                    chunk = s.recv(65536)
                    if not chunk: return data
                    data += chunk
            def one_response(s):
                data = b''
                while b'\\r\\n\\r\\n' not in data:
                    chunk = s.recv(65536)
                    assert chunk, 'closed before a response: %r' % data
                    data += chunk
                head, _, rest = data.partition(b'\\r\\n\\r\\n')
                length = int(re.search(rb'(?i)\\r\\ncontent-length: (\\d+)', head).group(1))
                while len(rest) < length: rest += s.recv(65536)
                return head.decode()

            """
        let result = try Captured.run("/usr/bin/python3", ["-c", prelude + script, "\(api.port)", api.key], timeout: 40)
        return result.stdout + result.stderr
    }

    /// `Date` (RFC 9110 §6.6.1) on a response, a refusal, and a parse failure, from the node's clock.
    @Test(.timeLimit(.minutes(3)))
    func everyResponseCarriesADate() throws {
        let api = try HTTPNode()
        let out = try Self.python(api, """
            c = http.client.HTTPConnection('127.0.0.1', port, timeout=5)
            for headers, status in [({'Authorization': 'Bearer ' + key.decode()}, 200), ({}, 401)]:
                c.request('GET', '/api/status', headers=headers)
                r = c.getresponse(); r.read()
                date = r.getheader('Date')
                assert r.status == status and date, (r.status, r.getheaders())
                assert re.fullmatch(r'(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d\\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \\d{4} \\d\\d:\\d\\d:\\d\\d GMT', date), date
                assert abs(email.utils.parsedate_to_datetime(date).timestamp() - time.time()) < 30, date
            s = socket.create_connection(('127.0.0.1', port), timeout=5)
            s.sendall(b'BLAH\\r\\n\\r\\n')
            answer = until_closed(s)
            assert answer.startswith(b'HTTP/1.1 400') and b'\\r\\nDate: ' in answer, answer
            print('ok')
            """)
        #expect(out == "ok\n", "\(out)")
    }

    /// `ab -k`'s HTTP/1.0 keep-alive: told so and kept, two requests on one socket; without
    /// it, the connection closes after the response.
    @Test(.timeLimit(.minutes(3)))
    func http10KeepAliveIsKeptAndSaidSo() throws {
        let api = try HTTPNode()
        let out = try Self.python(api, """
            s = socket.create_connection(('127.0.0.1', port), timeout=5)
            for _ in range(3):
                s.sendall(b'GET /api/status HTTP/1.0\\r\\nConnection: keep-alive\\r\\nAuthorization: Bearer ' + key + b'\\r\\n\\r\\n')
                head = one_response(s)
                assert head.startswith('HTTP/1.1 200') and '\\r\\nConnection: keep-alive' in head, head
            s = socket.create_connection(('127.0.0.1', port), timeout=5)
            s.sendall(b'GET /api/status HTTP/1.0\\r\\nAuthorization: Bearer ' + key + b'\\r\\n\\r\\n')
            answer = until_closed(s)
            assert answer.startswith(b'HTTP/1.1 200') and b'\\r\\nConnection: close' in answer, answer
            print('ok')
            """)
        #expect(out == "ok\n", "\(out)")
    }

    /// A request whose lines end in a bare LF (typed into nc, or a naive script) is answered at once.
    @Test(.timeLimit(.minutes(3)))
    func aBareLFRequestIsAnsweredAtOnce() throws {
        let api = try HTTPNode()
        let out = try Self.python(api, """
            s = socket.create_connection(('127.0.0.1', port), timeout=5)
            s.sendall(b'GET /api/status HTTP/1.1\\nHost: x\\nAuthorization: Bearer ' + key + b'\\n\\n')
            head = one_response(s)
            assert head.startswith('HTTP/1.1 200'), head
            body = b'{"category": "note", "data": {"text": "bare LF"}}'
            s.sendall(b'POST /api/entries HTTP/1.1\\nHost: x\\nTransfer-Encoding: chunked\\nContent-Type: application/json\\nAuthorization: Bearer '
                      + key + b'\\n\\n' + b'%x\\n' % len(body) + body + b'\\n0\\n\\n')
            head = one_response(s)
            assert head.startswith('HTTP/1.1 201'), head
            s.sendall(b'GET /api/entries?limit=1 HTTP/1.1\\r\\nHost: x\\nConnection: close\\nAuthorization: Bearer ' + key + b'\\r\\n\\n')
            answer = until_closed(s)
            assert answer.startswith(b'HTTP/1.1 200'), answer
            print('ok')
            """)
        #expect(out == "ok\n", "\(out)")
    }

    /// A browser reconnecting to `…/stream?since=A` sends `Last-Event-ID: B`: it resumes after B.
    @Test(.timeLimit(.minutes(3)))
    func lastEventIDWinsOverSince() throws {
        let api = try HTTPNode()
        let ids = try (1...3).map { try HTTPFeedTests.post(api, "note \($0)") }
        let feed = try api.curl.request("GET", "/api/changes")
        let cursors = (feed.object["changes"] as? [[String: Any]] ?? []).compactMap { $0["cursor"] as? String }
        try #require(cursors.count == 3, "\(feed.body)")
        let reader = try HTTPFeedTests.EventStreamReader(api, file: api.node.db + ".sse-resume", headers: ["Last-Event-ID: \(cursors[1])"],
                                                         query: "?since=\(cursors[0])")
        #expect(eventually(timeout: 10, interval: 0.05) { !reader.ids.isEmpty }, "\(reader.text)")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(reader.ids == [ids[2]], "\(reader.text)")
    }

    /// A node that stops ends its event streams whole: curl sees the last chunk (exit 0), not a
    /// transfer cut short (exit 18).
    @Test(.timeLimit(.minutes(3)))
    func aStoppingNodeEndsItsEventStreamsWhole() throws {
        let api = try HTTPNode()
        let id = try HTTPFeedTests.post(api, "before the stop")
        let reader = try HTTPFeedTests.EventStreamReader(api, file: api.node.db + ".sse-stop")
        #expect(eventually(timeout: 10, interval: 0.05) { reader.ids == [id] }, "\(reader.text)")
        #expect(api.node.terminate(timeout: 10) != nil, "the node stops on SIGTERM")
        let ended = reader.process.wait(timeout: 10)
        #expect(ended?.exitStatus == 0, "curl: \(ended?.description ?? "still running")")
    }
}
