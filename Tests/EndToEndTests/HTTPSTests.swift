import Foundation
import Testing
import TestSupport

/// `serve --http-tls`: the HTTP API over TLS 1.3 with the node's own key and certificate,
/// trusted by curl through `lifesync id --certificate`.
@Suite(.serialized) struct HTTPSTests {
    @Test(.timeLimit(.minutes(1)))
    func curlTrustsTheNodesCertificateAndNothingElseGetsIn() throws {
        let api = try HTTPNode(extra: ["--http-tls"])
        let printed = try LifeSyncBinary.run(["id", "--certificate", "--db", api.node.db])
        #expect(printed.status == 0 && printed.stdout.hasPrefix("-----BEGIN CERTIFICATE-----"), "\(printed.stdout) \(printed.stderr)")
        let directory = TemporaryDirectory("lifesync-https")
        let certificate = directory.file("node.pem")
        try printed.stdout.write(toFile: certificate, atomically: true, encoding: .utf8)
        #expect(api.node.stdout.contains("HTTP API on https://\(api.node.nodeID):\(api.port)"), "\(api.node.stdout)")

        // The certificate's one name is the node ID: curl reaches the node under it.
        let host = "\(api.node.nodeID):\(api.port)"
        let trusted = ["--cacert", certificate, "--resolve", "\(host):127.0.0.1", "--tlsv1.3"]
        let secure = Curl(base: "https://\(host)", key: api.key)
        let status = try secure.request("GET", "/api/status", extra: trusted)
        #expect(status.status == 200 && status.object["node_id"] as? String == api.node.nodeID, "\(status.body)")
        let made = try secure.request("POST", "/api/entries", body: #"{"data": {"text": "over HTTPS"}}"#, extra: trusted)
        #expect(made.status == 201, "\(made.body)")
        #expect(try Curl(base: "https://\(host)", key: nil).request("GET", "/api/status", extra: trusted).status == 401, "the key is still needed")
        let page = try Captured.run("/usr/bin/curl", ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}"] + trusted + ["https://\(host)/dashboard"], timeout: 20)
        #expect(page.stdout == "200", "\(page.stdout) \(page.stderr)")

        // Without the certificate curl refuses the node; plain HTTP gets no answer from it.
        let untrusted = try Captured.run("/usr/bin/curl", ["-sS", "--max-time", "10", "--resolve", "\(host):127.0.0.1", "https://\(host)/api/status"], timeout: 20)
        #expect(untrusted.status == 60, "curl must not trust an unknown certificate: \(untrusted.status) \(untrusted.stderr)")
        let plain = try Captured.run("/usr/bin/curl", ["-sS", "--max-time", "10", "http://127.0.0.1:\(api.port)/api/status"], timeout: 20)
        #expect(plain.status != 0 && !plain.stdout.contains("node_id"), "\(plain.status) \(plain.stdout)")
        #expect(try secure.request("GET", "/api/status", extra: trusted).status == 200, "the node keeps serving")

        let contradiction = try LifeSyncBinary.run(["serve", "--db", api.node.db, "--http", "0", "--http-tls", "--http-insecure"])
        #expect(contradiction.status == 2 && contradiction.stderr.contains("contradict"), "\(contradiction.stderr)")
    }
}
