import Foundation
import LifeSyncRuntime
import Testing
import TestSupport

/// What curl got: the final response's status, headers (names lowercased) and body.
struct CurlResponse {
    var status: Int
    var headers: [String: String]
    var body: String
    var json: Any? { try? parseJSON(body) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
}

/// Runs the real `curl` (every call bounded by --max-time) against a node's HTTP API.
struct Curl {
    let base: String
    var key: String?

    func request(_ method: String, _ path: String, body: String? = nil, headers: [String] = [], extra: [String] = []) throws -> CurlResponse {
        // HEAD through -I: with -X HEAD curl would wait for a body that never comes.
        var arguments = ["-sS", "-i", "--max-time", "15"] + (method == "HEAD" ? ["-I"] : ["-X", method]) + [base + path]
        if let key { arguments += ["-H", "Authorization: Bearer \(key)"] }
        for header in headers { arguments += ["-H", header] }
        if body != nil { arguments += ["-H", "Content-Type: application/json", "--data-binary", "@-"] }
        let result = try Captured.run("/usr/bin/curl", arguments + extra, input: body, timeout: 30)
        guard result.status == 0 else { throw ServeError("curl \(method) \(path): exit \(result.status): \(result.stderr)") }
        return try Self.parse(result.stdout)
    }

    /// The last response of `curl -i` output (a `100 Continue` comes before the real one).
    static func parse(_ text: String) throws -> CurlResponse {
        var rest = Substring(text)
        while true {
            guard let end = rest.range(of: "\r\n\r\n") else { throw ServeError("no HTTP head in: \(text.prefix(200))") }
            let head = rest[..<end.lowerBound]
            rest = rest[end.upperBound...]
            let lines = head.components(separatedBy: "\r\n")
            let parts = lines[0].split(separator: " ")
            guard parts.count >= 2, let status = Int(parts[1]) else { throw ServeError("bad status line: \(lines[0])") }
            if status == 100 { continue }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return CurlResponse(status: status, headers: headers, body: String(rest))
        }
    }
}

/// A node serving the HTTP API on a free loopback port, with one key made by `lifesync keys`.
final class HTTPNode {
    let group = ServeGroup()
    let node: ServeNode
    let key: String
    let port: UInt16

    init(role: String = "phone", listen: Bool = false, peers: [String] = [], extra: [String] = []) throws {
        node = try group.node("api", role: role)
        let created = try LifeSyncBinary.run(["keys", "create", "curl", "--db", node.db])
        guard created.status == 0 else { throw ServeError("keys create: \(created.stderr)") }
        key = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        port = try freeLoopbackPort()
        try node.start(peers: peers, listen: listen, extra: ["--http", "\(port)"] + extra)
    }

    var curl: Curl { Curl(base: "http://127.0.0.1:\(port)", key: key) }
    var anonymous: Curl { Curl(base: "http://127.0.0.1:\(port)", key: nil) }

    deinit { group.stopAll() }
}
