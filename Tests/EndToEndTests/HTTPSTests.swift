import Foundation
import Glibc
import LifeSyncRuntime
import Testing
import TestSupport

/// `serve --http-tls`: the HTTP API over TLS 1.3 with a server certificate the node's own root
/// issued, which clients trust through `lifesync id --https-ca` (an iPhone through
/// `--https-profile`) and reach under any name the certificate carries: no `--resolve`.
@Suite(.serialized) struct HTTPSTests {
    @Test(.timeLimit(.minutes(2)))
    func clientsTrustingTheRootReachTheNodeByTheNamesItsCertificateCarries() throws {
        let api = try HTTPNode(extra: ["--http-tls"])
        let directory = TemporaryDirectory("lifesync-https")
        let ca = try Self.root(of: api.node.db, into: directory.file("ca.pem"))
        #expect(api.node.stdout.contains("HTTP API on https://127.0.0.1:\(api.port)/api/"), "\(api.node.stdout)")
        #expect(api.node.stdout.contains("HTTPS certificate for localhost,") && api.node.stdout.contains("issued now: there was none"), "\(api.node.stdout)")

        // curl trusts the root alone and reaches the node by localhost and by its address.
        let trusted = ["--cacert", ca, "--tlsv1.3"]
        for host in ["localhost", "127.0.0.1"] {
            let secure = Curl(base: "https://\(host):\(api.port)", key: api.key)
            let status = try secure.request("GET", "/api/status", extra: trusted)
            #expect(status.status == 200 && status.object["node_id"] as? String == api.node.nodeID, "\(host): \(status.body)")
            #expect(try Curl(base: "https://\(host):\(api.port)", key: nil).request("GET", "/api/status", extra: trusted).status == 401, "the key is still needed")
        }
        let made = try Curl(base: "https://localhost:\(api.port)", key: api.key).request("POST", "/api/entries", body: #"{"data": {"text": "over HTTPS"}}"#, extra: trusted)
        #expect(made.status == 201, "\(made.body)")

        // Without the root curl refuses the node; plain HTTP is told, in plain HTTP, to use
        // https:// (it was closed without a word), and gets no data.
        let untrusted = try Captured.run("/usr/bin/curl", ["-sS", "--max-time", "10", "https://localhost:\(api.port)/api/status"], timeout: 20)
        #expect(untrusted.status == 60, "curl must not trust an unknown certificate: \(untrusted.status) \(untrusted.stderr)")
        let plain = try Curl(base: "http://127.0.0.1:\(api.port)", key: api.key).request("GET", "/api/status")
        #expect(plain.status == 400 && plain.body.contains("This port speaks HTTPS: use https://") && !plain.body.contains("node_id"),
                "\(plain.status) \(plain.body)")

        // The served chain: the server certificate, then the root; it verifies under the root,
        // for server authentication, with the names and at most 825 days.
        let served = try Self.servedChain(port: api.port)
        try #require(served.count == 2, "the server certificate and the root: \(served.count)")
        try served[0].write(toFile: directory.file("server.pem"), atomically: true, encoding: .utf8)
        let verified = try Captured.run("/usr/bin/openssl", ["verify", "-purpose", "sslserver", "-CAfile", ca, directory.file("server.pem")], timeout: 20)
        #expect(verified.status == 0 && verified.stdout.contains(": OK"), "\(verified.stdout) \(verified.stderr)")
        let text = try Captured.run("/usr/bin/openssl", ["x509", "-in", directory.file("server.pem"), "-noout", "-text"], timeout: 20).stdout
        #expect(text.contains("DNS:localhost") && text.contains("IP Address:127.0.0.1") && text.contains("IP Address:0:0:0:0:0:0:0:1"), "\(text)")
        #expect(text.contains("TLS Web Server Authentication") && text.contains("ecdsa-with-SHA256"), "\(text)")
        let days = try #require(Self.validityDays(text), "no validity in:\n\(text)")
        #expect(days <= 825 && days == 397, "valid \(days) days")
        #expect(served[1].trimmingCharacters(in: .whitespacesAndNewlines) == (try String(contentsOfFile: ca, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines))

        // Python's default context checks the chain and the host name: localhost and
        // 127.0.0.1 pass, a name the certificate does not carry fails as a mismatch.
        let python = try Captured.run("/usr/bin/python3", ["-c", Self.pythonClient, ca, "\(api.port)", api.key], timeout: 40)
        #expect(python.status == 0, "\(python.stdout) \(python.stderr)")
        #expect(python.stdout.contains("localhost 200") && python.stdout.contains("127.0.0.1 200"), "\(python.stdout) \(python.stderr)")
        #expect(python.stdout.contains("not-this-node.example refused: Hostname mismatch"), "\(python.stdout) \(python.stderr)")
        #expect(try Curl(base: "https://localhost:\(api.port)", key: api.key).request("GET", "/api/status", extra: trusted).status == 200, "the node keeps serving")

        let contradiction = try LifeSyncBinary.run(["serve", "--db", api.node.db, "--http", "0", "--http-tls", "--http-insecure"])
        #expect(contradiction.status == 2 && contradiction.stderr.contains("contradict"), "\(contradiction.stderr)")
        let nameWithoutTLS = try LifeSyncBinary.run(["serve", "--db", api.node.db, "--http", "0", "--http-name", "mac.local"])
        #expect(nameWithoutTLS.status == 2 && nameWithoutTLS.stderr.contains("needs --http-tls"), "\(nameWithoutTLS.stderr)")
        let nodeIDAsName = try LifeSyncBinary.run(["serve", "--db", api.node.db, "--http", "0", "--http-tls", "--http-name", api.node.nodeID])
        #expect(nodeIDAsName.status == 2 && nodeIDAsName.stderr.contains("neither a host name"), "\(nodeIDAsName.stderr)")
    }

    /// A name the user adds is served; a restart without it issues a new certificate under the
    /// same root (a phone's installed profile stays good), and the profile carries that root.
    @Test(.timeLimit(.minutes(2)))
    func addedNamesAreServedAndTheProfileInstallsTheSameRoot() throws {
        let group = ServeGroup()
        let node = try group.node("mac", role: "mac")
        let key = try node.cli(["keys", "create", "phone"]).stdout
        let directory = TemporaryDirectory("lifesync-https-names")
        let port = try freeLoopbackPort()
        try node.start(listen: false, extra: ["--http", "127.0.0.1:\(port)", "--http-tls", "--http-name", "lifesync-test.example", "--http-name", "10.11.12.13"])
        let ca = try Self.root(of: node.db, into: directory.file("ca.pem"))
        let before = try String(contentsOfFile: ca, encoding: .utf8)
        let resolved = ["--cacert", ca, "--resolve", "lifesync-test.example:\(port):127.0.0.1"]
        #expect(try Curl(base: "https://lifesync-test.example:\(port)", key: key).request("GET", "/api/status", extra: resolved).status == 200)
        #expect(node.stdout.contains("lifesync-test.example") && node.stdout.contains("10.11.12.13"), "\(node.stdout)")
        try #require(node.terminate(timeout: 5) != nil)

        try node.start(listen: false, samePort: true, extra: ["--http", "127.0.0.1:\(port)", "--http-tls"])
        #expect(node.stdout.contains("issued now: the names changed, no longer lifesync-test.example, 10.11.12.13"), "\(node.stdout)")
        let dropped = try Captured.run("/usr/bin/curl", ["-sS", "--max-time", "10"] + resolved + ["https://lifesync-test.example:\(port)/api/status"], timeout: 20)
        #expect(dropped.status == 60, "a name no longer carried is refused: \(dropped.status) \(dropped.stderr)")
        #expect(try String(contentsOfFile: try Self.root(of: node.db, into: directory.file("ca-again.pem")), encoding: .utf8) == before, "the root stays")
        #expect(try Curl(base: "https://localhost:\(port)", key: key).request("GET", "/api/status", extra: ["--cacert", ca]).status == 200)
        try #require(node.terminate(timeout: 5) != nil)
        try node.start(listen: false, samePort: true, extra: ["--http", "127.0.0.1:\(port)", "--http-tls"])
        #expect(!node.stdout.contains("issued now"), "the same names keep the certificate: \(node.stdout)")

        // The profile is a property list whose root payload is that certificate's DER.
        let profile = try LifeSyncBinary.run(["id", "--https-profile", "--db", node.db])
        #expect(profile.status == 0, "\(profile.stderr)")
        try profile.stdout.write(toFile: directory.file("lifesync.mobileconfig"), atomically: true, encoding: .utf8)
        let parsed = try Captured.run("/usr/bin/python3", ["-c", Self.profileCheck, directory.file("lifesync.mobileconfig"), ca], timeout: 30)
        #expect(parsed.status == 0 && parsed.stdout == "Configuration com.apple.security.root same DER\n", "\(parsed.stdout) \(parsed.stderr)")
    }

    /// README's "HTTPS from an iPhone" block, pasted into bash in a directory holding a replica
    /// `mac.sqlite`, on a free loopback port instead of 0.0.0.0:8443: the profile and root are
    /// written, and curl reaches the node with the key the block made.
    @Test(.timeLimit(.minutes(2)))
    func theReadmeIPhoneBlockPastes() throws {
        let block = try #require(try Readme.codeBlocks(under: "The HTTP API").first { $0.contains("--https-profile") })
        try #require(block.contains("--http 0.0.0.0:8443") && block.contains("localhost:8443"), "the block changed its address; update this test")
        let directory = TemporaryDirectory("lifesync-https-readme")
        let bin = directory.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/lifesync", withDestinationPath: LifeSyncBinary.path)
        let made = try LifeSyncBinary.run(["init", "--role", "mac", "--db", directory.file("mac.sqlite")])
        try #require(made.status == 0, "\(made.stderr)")
        let port = try freeLoopbackPort()
        let script = block.replacingOccurrences(of: "0.0.0.0:8443", with: "127.0.0.1:\(port)").replacingOccurrences(of: "localhost:8443", with: "localhost:\(port)")
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "LIFESYNC_DB")
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let result = try Captured.run("/bin/bash", ["-e", "-c", script], environment: environment, directory: directory.path, timeout: 60)
        let replica = directory.file("mac.sqlite")
        _ = eventually(timeout: 10) { ServeLock.holder(replicaPath: replica) != nil || result.status != 0 }
        if let pid = ServeLock.holder(replicaPath: replica), pid > 0 { kill(pid, SIGTERM) }
        #expect(result.status == 0, "stdout:\n\(result.stdout)\nstderr:\n\(result.stderr)")
        #expect(result.stdout.contains("\"node_id\": \"mac_"), "curl got the status: \(result.stdout)")
        #expect(result.stdout.contains("HTTP API on https://127.0.0.1:\(port)/api/"), "\(result.stdout)")
        let profile = (try? String(contentsOfFile: directory.file("lifesync.mobileconfig"), encoding: .utf8)) ?? ""
        #expect(profile.contains("com.apple.security.root"))
        #expect(try String(contentsOfFile: directory.file("lifesync-ca.pem"), encoding: .utf8).hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(eventually(timeout: 10) { ServeLock.holder(replicaPath: replica) == nil }, "the block's serve was stopped")
    }

    // MARK: - Helpers

    /// `lifesync id --https-ca` written to `path`.
    static func root(of db: String, into path: String) throws -> String {
        let printed = try LifeSyncBinary.run(["id", "--https-ca", "--db", db])
        guard printed.status == 0, printed.stdout.hasPrefix("-----BEGIN CERTIFICATE-----") else { throw ServeError("id --https-ca: \(printed.stderr)") }
        try printed.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The certificates the node sends, PEM, in order (openssl s_client -showcerts).
    static func servedChain(port: UInt16) throws -> [String] {
        let result = try Captured.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost", "-showcerts"],
                                      input: "", timeout: 20)
        var chain: [String] = []
        var rest = Substring(result.stdout)
        while chain.count < 8, let begin = rest.range(of: "-----BEGIN CERTIFICATE-----"), let end = rest.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<rest.endIndex) {
            chain.append(String(rest[begin.lowerBound..<end.upperBound]) + "\n")
            rest = rest[end.upperBound...]
        }
        return chain
    }

    /// Whole days from Not Before to Not After in `openssl x509 -text` output.
    static func validityDays(_ text: String) -> Int? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy"
        func date(_ label: String) -> Date? {
            guard let line = text.split(separator: "\n").first(where: { $0.contains(label) }), let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...].split(separator: " ").filter { $0 != "GMT" }.joined(separator: " ")
            return formatter.date(from: value)
        }
        guard let start = date("Not Before"), let end = date("Not After") else { return nil }
        return Int((end.timeIntervalSince(start) / 86_400).rounded())
    }

    /// argv: CA file, port, key. Prints "HOST STATUS" per host, then the mismatch's refusal.
    static let pythonClient = #"""
    import http.client, socket, ssl, sys
    cafile, port, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    context = ssl.create_default_context(cafile=cafile)
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    for host in ["localhost", "127.0.0.1"]:
        connection = http.client.HTTPSConnection(host, port, context=context, timeout=10)
        connection.request("GET", "/api/status", headers={"Authorization": "Bearer " + key})
        print(host, connection.getresponse().status)
        connection.close()
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        context.wrap_socket(raw, server_hostname="not-this-node.example")
        print("not-this-node.example accepted")
    except ssl.SSLCertVerificationError as error:
        print("not-this-node.example refused:", error.verify_message)
    finally:
        raw.close()
    """#

    /// argv: profile, CA PEM. Prints the two payload types and whether the DER matches.
    static let profileCheck = #"""
    import plistlib, ssl, sys
    with open(sys.argv[1], "rb") as f:
        profile = plistlib.load(f)
    root = profile["PayloadContent"][0]
    for k in ["PayloadUUID", "PayloadIdentifier", "PayloadDisplayName", "PayloadVersion"]:
        assert profile[k] and root[k], k
    assert profile["PayloadUUID"] != root["PayloadUUID"]
    der = ssl.PEM_cert_to_DER_cert(open(sys.argv[2]).read())
    print(profile["PayloadType"], root["PayloadType"], "same DER" if root["PayloadContent"] == der else "other DER")
    """#
}
