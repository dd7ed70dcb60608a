import Foundation
import Glibc
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// `GET/POST /api/recordings` and `GET /api/conflicts` of a real `lifesync serve --http`, by curl.
@Suite(.serialized) struct HTTPRecordingTests {
    /// curl with a file as the raw body.
    static func upload(_ api: HTTPNode, _ file: String, query: String, type: String = "audio/mp4") throws -> CurlResponse {
        try api.curl.request("POST", "/api/recordings" + query, headers: ["Content-Type: \(type)"], extra: ["--data-binary", "@" + file])
    }

    static func recordingsJSON(_ db: String) throws -> [[String: Any]] {
        let listed = try LifeSyncBinary.run(["recordings", "--json", "--db", db])
        guard listed.status == 0 else { throw ServeError("recordings --json: \(listed.stderr)") }
        return try parseJSON(listed.stdout) as? [[String: Any]] ?? []
    }

    @Test(.timeLimit(.minutes(3)))
    func anUploadIsStoredLikeAttachAndListedLikeTheCLI() throws {
        let api = try HTTPNode()
        let entry = try api.curl.request("POST", "/api/entries", body: #"{"timestamp": "2026-11-22T10:00:00Z", "data": {"text": "voice memo"}}"#)
        let entryID = try #require(entry.object["id"] as? String, "\(entry.body)")
        let directory = TemporaryDirectory("lifesync-upload")
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("memo.m4a")))

        let made = try Self.upload(api, directory.file("memo.m4a"), query: "?entry=\(entryID)&file_name=walk%20memo.m4a")
        #expect(made.status == 201, "\(made.body)")
        let id = try #require(made.object["id"] as? String)
        #expect(made.object["file_name"] as? String == "walk memo.m4a" && made.object["media_type"] as? String == "audio/mp4")
        #expect(made.object["entry_id"] as? String == entryID && made.object["size"] as? Int == bytes.count)
        #expect(made.object["sha256"] as? String == SHA256.hash(bytes).hex && made.object["state"] as? String == "pending")
        let path = try #require(made.object["path"] as? String)
        #expect(FileManager.default.contents(atPath: path) == Data(bytes), "the stored file is the upload, byte for byte")

        // The same list as the CLI, field for field.
        let listed = try api.curl.request("GET", "/api/recordings")
        let overHTTP = try #require(listed.json as? [[String: Any]], "\(listed.body)")
        let cli = try Self.recordingsJSON(api.node.db)
        #expect(overHTTP.count == 1 && NSArray(array: overHTTP).isEqual(to: cli), "HTTP: \(overHTTP)\nCLI: \(cli)")
        // Signed like attach: the signature row exists.
        #expect(api.node.scalar("SELECT count(*) FROM recordings WHERE id = '\(id)' AND signature IS NOT NULL") == 1)

        // Without a file name the type names it; an unknown entry, a form type, an empty body are refused.
        let unnamed = try Self.upload(api, directory.file("memo.m4a"), query: "", type: "audio/mpeg")
        #expect(unnamed.status == 201 && unnamed.object["file_name"] as? String == "recording.mp3", "\(unnamed.body)")
        let noEntry = try Self.upload(api, directory.file("memo.m4a"), query: "?entry=phone_00000000-0000-4000-8000-000000000000")
        #expect(noEntry.status == 404 && (noEntry.object["error"] as? String)?.contains("no entry") == true, "\(noEntry.body)")
        let form = try api.curl.request("POST", "/api/recordings", extra: ["--data-binary", "@" + directory.file("memo.m4a")])
        #expect(form.status == 415 && (form.object["error"] as? String)?.contains("Content-Type") == true, "\(form.body)")
        let badName = try Self.upload(api, directory.file("memo.m4a"), query: "?file_name=a%2Fb")
        #expect(badName.status == 400 && (badName.object["error"] as? String)?.contains("file_name") == true, "\(badName.body)")
        #expect(try Self.recordingsJSON(api.node.db).count == 2, "only the two good uploads were stored")
    }

    @Test(.timeLimit(.minutes(3)))
    func anOversizeOrCutUploadStoresNothing() throws {
        let api = try HTTPNode(extra: ["--http-max-upload", "50000"])
        let directory = TemporaryDirectory("lifesync-upload")
        try Data(repeating: 7, count: 50_001).write(to: URL(fileURLWithPath: directory.file("big.wav")))
        let refused = try Self.upload(api, directory.file("big.wav"), query: "", type: "audio/wav")
        #expect(refused.status == 413, "\(refused.body)")
        let message = refused.object["error"] as? String ?? ""
        #expect(message.contains("50000") && message.contains("POST /api/recordings"), "the refusal names the limit: \(message)")

        // A body cut short: the head promises 40000 bytes, 1000 come, the client goes away.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = api.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        #expect(connected == 0)
        let head = "POST /api/recordings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(api.key)\r\nContent-Type: audio/wav\r\nContent-Length: 40000\r\n\r\n"
        let partial = Array(head.utf8) + [UInt8](repeating: 1, count: 1000)
        _ = partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(fd)

        // The node still serves, and neither upload left a recording or a file behind.
        #expect(try api.curl.request("GET", "/api/status").status == 200)
        let listed = try api.curl.request("GET", "/api/recordings")
        #expect(listed.status == 200 && (listed.json as? [Any])?.isEmpty == true, "\(listed.body)")
        let folder = api.node.db + ".recordings"
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let incoming = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/.incoming")) ?? []
        #expect(files.filter { $0 != ".incoming" }.isEmpty && incoming.isEmpty, "\(files) \(incoming)")

        let usage = try LifeSyncBinary.run(["serve", "--db", api.node.db, "--http", "0", "--http-max-upload", "lots"])
        #expect(usage.status == 2 && usage.stderr.contains("--http-max-upload"), "\(usage.stderr)")
    }

    @Test(.timeLimit(.minutes(3)))
    func anUploadReachesAPeer() throws {
        let api = try HTTPNode(listen: true)
        let mac = try api.group.node("mac", role: "mac")
        try mac.start(peers: [api.node.address], listen: false)
        let directory = TemporaryDirectory("lifesync-upload")
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("note.ogg")))
        let made = try Self.upload(api, directory.file("note.ogg"), query: "?file_name=note.ogg", type: "audio/ogg")
        let id = try #require(made.object["id"] as? String, "\(made.body)")
        var seen: [[String: Any]] = []
        let arrived = try eventually(timeout: 20, interval: 0.2) {
            seen = try Self.recordingsJSON(mac.db)
            return seen.contains { $0["id"] as? String == id && $0["path"] is String }
        }
        #expect(arrived, "the mac never held \(id): \(seen)\nphone log:\n\(api.node.allOutput)\nmac log:\n\(mac.allOutput)")
        let path = seen.first { $0["id"] as? String == id }?["path"] as? String
        #expect(path.flatMap { FileManager.default.contents(atPath: $0) } == Data(bytes))
    }

    @Test(.timeLimit(.minutes(3)))
    func conflictsAreListedLikeTheCLI() throws {
        let api = try HTTPNode()
        // A concurrent edit of one entry's text on the served replica and on a mac that never
        // saw it (edits of different fields would both stand: no conflict).
        let phone = try Replica(path: api.node.db, clock: SystemClock(), random: SystemRandom())
        let mac = try ReplicaFixtures.replica(role: .mac, seed: 5, clock: nil)
        let entry = try phone.add(json: .object([("timestamp", .string("2026-11-22T10:00:00Z")), ("data", .object([("text", .string("buy milk"))]))]))
        try ReplicaFixtures.sync(from: phone, to: mac)
        try phone.update(id: entry.id, patch: .object([("data", .object([("text", .string("buy oat milk"))]))]))
        try mac.update(id: entry.id, patch: .object([("data", .object([("text", .string("buy milk and eggs"))]))]))
        try ReplicaFixtures.sync(from: mac, to: phone)

        let listed = try api.curl.request("GET", "/api/conflicts")
        let overHTTP = try #require(listed.json as? [[String: Any]], "\(listed.body)")
        let cli = try parseJSON(try LifeSyncBinary.run(["conflicts", "--json", "--db", api.node.db]).stdout) as? [[String: Any]] ?? []
        #expect(overHTTP.count == 1 && overHTTP.first?["entry_id"] as? String == entry.id, "\(listed.body)")
        #expect(NSArray(array: overHTTP).isEqual(to: cli), "HTTP: \(overHTTP)\nCLI: \(cli)")
        #expect(overHTTP.first?["lost_fields"] as? [String] == ["data.text"], "\(listed.body)")
    }
}
