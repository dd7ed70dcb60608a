import Foundation
import Glibc
import LifeSync
@testable import LifeSyncRuntime
import Testing
import TestSupport

/// A node serving HTTPS renews its certificate while it serves, when a client connects after
/// the check interval and the names it must carry moved (here checked at every connection).
@Suite(.serialized) struct HTTPSRenewalTests {
    /// The names the node must carry, changed by the test while the node's thread asks.
    final class Names: @unchecked Sendable {
        private let lock = Lock()
        private var extra: [String] = []
        var current: [String] { get { lock.withLock { extra } } set { lock.withLock { extra = newValue } } }
    }

    final class LogLines: @unchecked Sendable {
        private let lock = Lock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    @Test(.timeLimit(.minutes(3)))
    func aServingNodeRenewsWhenItsNamesMoveAndNotOtherwise() throws {
        let directory = TemporaryDirectory()
        let replica = try Replica.create(path: ":memory:", role: .mac, clock: SystemClock(), random: SystemRandom())
        let names = Names(), log = LogLines()
        let identity = try HTTPSIdentity(replicaPath: directory.file("mac.sqlite"), nodeID: replica.identity.nodeID) {
            try HTTPSNames.forServing(bound: "127.0.0.1", extra: names.current, hostName: "mac", interfaceAddresses: { _ in [] })
        }
        let server = try NodeServer(replica: replica, configuration: NodeConfiguration(), listen: nil) { log.append($0) }
        let address = try server.serveHTTP(on: "127.0.0.1:0", https: identity)
        let port = try #require(UInt16(address.split(separator: ":").last ?? ""))
        let http = try #require(server.http)
        http.renewalCheckInterval = 0
        http.nextRenewalCheck = 0
        let done = DispatchSemaphore(value: 0)
        let thread = Thread { server.run(); done.signal() }
        thread.start()
        defer {
            server.requestStop()
            _ = done.wait(timeout: .now() + 10)
        }

        #expect(try Self.servedNames(port: port) == "DNS:localhost, DNS:mac, DNS:mac.local, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1")
        names.current = ["renewed.example"]
        #expect(try Self.servedNames(port: port).contains("DNS:renewed.example"), "the connection after the change gets the new certificate")
        #expect(try Self.servedNames(port: port).contains("DNS:renewed.example"))
        let renewals = log.all.filter { $0.contains("HTTPS certificate renewed") }
        #expect(renewals.count == 1 && renewals[0].contains("(the names changed, now with renewed.example)"), "\(log.all)")
        #expect(try HTTPSCertificate.load(from: identity.certificatePath).names?.hosts.contains("renewed.example") == true, "and saved")
    }

    /// The subjectAltName line of the certificate the node serves now.
    static func servedNames(port: UInt16) throws -> String {
        let shown = try Captured.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"], input: "", timeout: 20)
        let pem = shown.stdout.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().first.map {
            "-----BEGIN CERTIFICATE-----" + ($0.components(separatedBy: "-----END CERTIFICATE-----").first ?? "") + "-----END CERTIFICATE-----\n"
        }
        guard let pem else { throw RuntimeError("no certificate from s_client: \(shown.stderr)") }
        let text = try Captured.run("/usr/bin/openssl", ["x509", "-noout", "-ext", "subjectAltName"], input: pem, timeout: 20).stdout
        return text.split(separator: "\n").dropFirst().joined().trimmingCharacters(in: .whitespaces)
    }
}
