import Foundation
import Testing
import TestSupport

/// ApacheBench, a client that speaks HTTP/1.0 and asks for keep-alive with `-k`: a node that held
/// such a connection without saying `Connection: keep-alive` made every `ab -k` request wait out
/// the 30 s idle timeout. Both runs must complete, every request answered 200.
@Suite(.serialized) struct ApacheBenchTests {
    static let ab: String? = ["/usr/bin/ab", "/usr/sbin/ab"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.timeLimit(.minutes(2)), .enabled(if: ab != nil, "ab is not installed (apt-get install apache2-utils; .ci/run installs it)"),
          arguments: [true, false])
    func aFilteredListCompletesWithAndWithoutKeepAlive(keepAlive: Bool) throws {
        let api = try HTTPNode()
        let batch = (0..<30).map { #"{"category": "\#($0 % 2 == 0 ? "mood" : "work")", "data": {"text": "entry \#($0)"}}"# }
        #expect(try api.curl.request("POST", "/api/entries", body: "[" + batch.joined(separator: ",") + "]").status == 200)
        let requests = 2_000
        let arguments = ["-q", "-s", "20", "-n", "\(requests)", "-c", "16", "-H", "Authorization: Bearer \(api.key)"]
            + (keepAlive ? ["-k"] : []) + ["http://127.0.0.1:\(api.port)/api/entries?category=mood&limit=10"]
        let run = try Captured.run(Self.ab!, arguments, timeout: 90)
        #expect(run.status == 0, "\(run.stderr)")
        let report = run.stdout
        let figure = { (label: String) in
            report.split(separator: "\n").first { $0.hasPrefix(label) }.flatMap { Int($0.dropFirst(label.count).trimmingCharacters(in: .whitespaces).split(separator: " ")[0]) }
        }
        #expect(figure("Complete requests:") == requests, "\(report)")
        #expect(figure("Failed requests:") == 0, "\(report)")
        #expect(figure("Non-2xx responses:") == nil, "\(report)")
        if keepAlive { #expect(figure("Keep-Alive requests:") == requests, "every request on a kept connection: \(report)") }
    }
}
