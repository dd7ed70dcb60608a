import CSSL
import Foundation
import Glibc
@testable import LifeSyncRuntime
import Testing
import TestSupport

/// The node's HTTPS authority and server certificate: what each certificate says (checked with
/// OpenSSL's own accessors and chain verification), when the server certificate is renewed and
/// when not, and their files (0600, replaced whole).
@Suite struct HTTPSCertificateTests {
    static let nodeID = "mac_550e8400-e29b-41d4-a716-446655440000"
    static let names = try! HTTPSNames(["localhost", "mac", "mac.local", "127.0.0.1", "::1", "192.168.1.20"])

    @Test func theAuthorityIsACertificateAuthorityAndNothingMore() throws {
        let authority = try HTTPSAuthority.generate(nodeID: Self.nodeID)
        let ca = authority.certificate
        #expect(X509_check_ca(ca) == 1, "basicConstraints CA:TRUE")
        #expect(X509_get_pathlen(ca) == 0)
        #expect(Self.isCritical(ca, NID_basic_constraints) && Self.isCritical(ca, NID_key_usage))
        #expect(X509_get_key_usage(ca) == UInt32(KU_KEY_CERT_SIGN | KU_CRL_SIGN), "keyCertSign and cRLSign only")
        #expect(X509_get0_subject_key_id(ca) != nil, "a subjectKeyIdentifier")
        #expect(try authority.certificatePEM().hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(X509Builder.isIssued(ca, by: ca), "self-signed")
        #expect(X509Builder.validitySeconds(ca) == HTTPSAuthority.validity)
        let subject = try #require(X509_NAME_oneline(X509_get_subject_name(ca), nil, 0))
        defer { free(subject) }
        #expect(String(cString: subject) == "/CN=LifeSync node \(Self.nodeID) (HTTPS)")
    }

    @Test func theServerCertificateCarriesTheNamesForServerAuthUnderTheAuthority() throws {
        let authority = try HTTPSAuthority.generate(nodeID: Self.nodeID)
        let issued = try HTTPSCertificate.issue(names: Self.names, by: authority)
        let certificate = issued.certificate
        #expect(issued.names == Self.names)
        #expect(X509Builder.subjectAltNames(certificate) == ["DNS:localhost", "DNS:mac", "DNS:mac.local", "IP:127.0.0.1", "IP:::1", "IP:192.168.1.20"])
        #expect(X509_get_extended_key_usage(certificate) & UInt32(XKU_SSL_SERVER) != 0, "EKU serverAuth")
        #expect(X509_get_key_usage(certificate) == UInt32(KU_DIGITAL_SIGNATURE) && Self.isCritical(certificate, NID_key_usage))
        #expect(X509_check_ca(certificate) == 0, "not a CA")
        #expect(X509_get0_authority_key_id(certificate) != nil, "an authorityKeyIdentifier")
        #expect(issued.validitySeconds == 397 * 86_400 && issued.validitySeconds <= 825 * 86_400)
        #expect(X509_get_signature_nid(certificate) == NID_ecdsa_with_SHA256)
        #expect(X509Builder.isP256(X509_get0_pubkey(certificate)!))
        #expect(try NodeKey.fingerprint(of: issued.key) != authority.keyFingerprint, "a key of its own")

        // A client that trusts the root verifies the chain, for a name it carries and no other.
        #expect(Self.verify(certificate, root: authority.certificate, host: "localhost") == X509_V_OK)
        #expect(Self.verify(certificate, root: authority.certificate, host: "mac.local") == X509_V_OK)
        #expect(Self.verify(certificate, root: authority.certificate, ip: "192.168.1.20") == X509_V_OK)
        #expect(Self.verify(certificate, root: authority.certificate, host: Self.nodeID) == X509_V_ERR_HOSTNAME_MISMATCH)
        #expect(Self.verify(certificate, root: authority.certificate, ip: "192.168.1.21") == X509_V_ERR_IP_ADDRESS_MISMATCH)
        let stranger = try HTTPSAuthority.generate(nodeID: Self.nodeID)
        #expect(Self.verify(certificate, root: stranger.certificate, host: "localhost") != X509_V_OK, "another root does not verify it")
    }

    @Test func renewedWhenNearItsEndOrTheNamesChangeAndNotOtherwise() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("mac.sqlite.https.key")
        let authority = try HTTPSAuthority.generate(nodeID: Self.nodeID)
        let first = try HTTPSCertificate.loadOrIssue(path: path, names: Self.names, authority: authority)
        #expect(first.renewed == "there was none")
        let saved = try Data(contentsOf: URL(fileURLWithPath: path))

        // The same names, in another order: kept, the file untouched.
        let reordered = try HTTPSNames(["::1", "192.168.1.20", "mac.local", "MAC", "127.0.0.1", "localhost"])
        let again = try HTTPSCertificate.loadOrIssue(path: path, names: reordered, authority: authority)
        #expect(again.renewed == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == saved)

        // Another address: renewed, saying what changed.
        var moved = Self.names
        try moved.add("10.0.0.7")
        let renamed = try HTTPSCertificate.loadOrIssue(path: path, names: moved, authority: authority)
        #expect(renamed.renewed == "the names changed, now with 10.0.0.7", "\(renamed.renewed ?? "kept")")
        #expect(try HTTPSCertificate.load(from: path).names == moved)
        #expect(try HTTPSCertificate.loadOrIssue(path: path, names: Self.names, authority: authority).renewed == "the names changed, no longer 10.0.0.7")

        // 29 days left: renewed; 31 left: kept.
        try HTTPSCertificate.issue(names: Self.names, by: authority, notBefore: -86_400, validity: 30 * 86_400).save(to: path, authority: authority)
        let aged = try HTTPSCertificate.loadOrIssue(path: path, names: Self.names, authority: authority)
        // 29 days less the moments since it was issued: 29 within the same second, else 28.
        #expect(["it expires in 28 day(s)", "it expires in 29 day(s)"].contains(aged.renewed ?? "kept"), "\(aged.renewed ?? "kept")")
        #expect(aged.certificate.secondsLeft > 300 * 86_400)
        try HTTPSCertificate.issue(names: Self.names, by: authority, notBefore: -86_400, validity: 32 * 86_400).save(to: path, authority: authority)
        #expect(try HTTPSCertificate.loadOrIssue(path: path, names: Self.names, authority: authority).renewed == nil)

        // Issued by another root (the authority file was replaced): renewed under the current one.
        let other = try HTTPSAuthority.generate(nodeID: Self.nodeID)
        let reissued = try HTTPSCertificate.loadOrIssue(path: path, names: Self.names, authority: other)
        #expect(reissued.renewed == "another authority issued it")
        #expect(X509Builder.isIssued(reissued.certificate.certificate, by: other.certificate))
    }

    @Test func theIdentityRenewsWhileServingOnlyWhenItsNamesMove() throws {
        let directory = TemporaryDirectory()
        let replica = directory.file("mac.sqlite")
        var extra: [String] = []
        let identity = try HTTPSIdentity(replicaPath: replica, nodeID: Self.nodeID) {
            try HTTPSNames.forServing(bound: "127.0.0.1", extra: extra, hostName: "mac", interfaceAddresses: { _ in [] })
        }
        #expect(identity.renewed == "there was none")
        #expect(try identity.renewIfDue() == nil)
        extra = ["notes.example.net"]
        #expect(try identity.renewIfDue() == "the names changed, now with notes.example.net")
        #expect(identity.certificate.names?.hosts.contains("notes.example.net") == true)
        _ = try identity.serverContext()
        let reopened = try HTTPSIdentity(replicaPath: replica, nodeID: Self.nodeID) {
            try HTTPSNames.forServing(bound: "127.0.0.1", extra: ["notes.example.net"], hostName: "mac", interfaceAddresses: { _ in [] })
        }
        #expect(reopened.renewed == nil, "a restart with the same names keeps the certificate")
        #expect(try reopened.authority.keyFingerprint == identity.authority.keyFingerprint, "and the authority")
    }

    @Test func theFilesAreTheOwnersAloneAndReplacedWhole() throws {
        let directory = TemporaryDirectory()
        let caPath = directory.file("mac.sqlite.https-ca.key"), path = directory.file("mac.sqlite.https.key")
        let authority = try HTTPSAuthority.loadOrCreate(path: caPath, nodeID: Self.nodeID)
        _ = try HTTPSCertificate.loadOrIssue(path: path, names: Self.names, authority: authority)
        for file in [caPath, path] {
            var info = stat()
            #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600, "\(file): mode \(String(info.st_mode & 0o777, radix: 8))")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp") } == [], "a temporary file was left")
        #expect(try HTTPSAuthority.loadOrCreate(path: caPath, nodeID: Self.nodeID).keyFingerprint == authority.keyFingerprint)

        // A renewal writes a new file and renames it over the old one: never the old one rewritten in place.
        var before = stat(), after = stat()
        stat(path, &before)
        let renewed = try HTTPSCertificate.loadOrIssue(path: path, names: try HTTPSNames(["localhost"]), authority: authority)
        #expect(renewed.renewed != nil)
        stat(path, &after)
        #expect(before.st_ino != after.st_ino, "replaced by rename")
        #expect(try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 3,
                "the key, the certificate, the root's")

        chmod(caPath, 0o640)
        let refused = try #require(throws: KeyFileError.self) { try HTTPSAuthority.load(from: caPath) }
        #expect(refused.problem.contains("readable by others"))
        chmod(caPath, 0o600)
        // A node key is not an authority.
        try NodeKey.generate(nodeID: Self.nodeID).save(to: caPath)
        #expect(throws: KeyFileError(path: caPath, problem: "holds a certificate that is not a CA certificate")) { try HTTPSAuthority.load(from: caPath) }
    }

    /// Two processes making the root at once (`serve` and `id --https-ca`) end with one: the
    /// second maker finds the first's file and keeps it.
    @Test func aRootIsMadeOnceEvenByTwoMakers() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("mac.sqlite.https-ca.key")
        let first = try HTTPSAuthority.generate(nodeID: Self.nodeID), second = try HTTPSAuthority.generate(nodeID: Self.nodeID)
        #expect(try PrivateFile.create(first.fileBytes(), at: path))
        #expect(try PrivateFile.create(second.fileBytes(), at: path) == false, "the second maker must not replace the first's root")
        #expect(try HTTPSAuthority.load(from: path).keyFingerprint == first.keyFingerprint)
        #expect(try HTTPSAuthority.loadOrCreate(path: path, nodeID: Self.nodeID).keyFingerprint == first.keyFingerprint)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["mac.sqlite.https-ca.key"])
    }

    @Test func namesAreHostNamesOrAddressesAndAWildcardNamesEveryInterface() throws {
        let wildcard = try HTTPSNames.forServing(bound: "0.0.0.0", extra: ["Notes.Example.net", "fd00::7"], hostName: "Johns-Mac.local",
                                                 interfaceAddresses: { ipv4Only in ipv4Only ? ["192.168.1.20"] : ["192.168.1.20", "2001:db8::2"] })
        #expect(wildcard.hosts == ["localhost", "johns-mac.local", "johns-mac", "notes.example.net"])
        #expect(wildcard.addresses == ["127.0.0.1", "::1", "192.168.1.20", "fd00::7"])
        let both = try HTTPSNames.forServing(bound: "::", extra: [], hostName: "mac.example.org", interfaceAddresses: { $0 ? [] : ["192.168.1.20", "2001:db8::2"] })
        #expect(both.hosts == ["localhost", "mac.example.org", "mac", "mac.local"] && both.addresses.contains("2001:db8::2"))
        let bound = try HTTPSNames.forServing(bound: "192.168.1.20", extra: [], hostName: nil, interfaceAddresses: { _ in ["10.9.9.9"] })
        #expect(bound.hosts == ["localhost"] && bound.addresses == ["127.0.0.1", "::1", "192.168.1.20"])
        #expect(try HTTPSNames(["0:0:0:0:0:0:0:1"]).addresses == ["::1"], "addresses in one form")
        // The node ID is no host name (an underscore), nor is a URL or an empty label.
        for bad in [Self.nodeID, "https://mac.local", "mac..local", "-mac", "1.2.3", ""] {
            #expect(throws: HTTPSNameError.self, "\(bad)") { try HTTPSNames([bad]) }
        }
    }

    @Test func theProfileNamesTheRootStably() throws {
        let authority = try HTTPSAuthority.generate(nodeID: Self.nodeID)
        let profile = try HTTPSProfile.mobileconfig(authority: authority, nodeID: Self.nodeID)
        #expect(profile == (try HTTPSProfile.mobileconfig(authority: authority, nodeID: Self.nodeID)))
        #expect(profile.contains("<string>com.apple.security.root</string>"))
        let other = try HTTPSProfile.mobileconfig(authority: try HTTPSAuthority.generate(nodeID: Self.nodeID), nodeID: Self.nodeID)
        #expect(profile != other)
        let uuid = try HTTPSProfile.uuid(authority, "root")
        #expect(uuid.count == 36 && UUID(uuidString: uuid) != nil, "\(uuid)")
        #expect(HTTPSProfile.string("a<b&c>") == "<string>a&lt;b&amp;c&gt;</string>")
    }

    // MARK: - Helpers

    static func isCritical(_ certificate: OpaquePointer, _ nid: Int32) -> Bool {
        let index = X509_get_ext_by_NID(certificate, nid, -1)
        return index >= 0 && X509_EXTENSION_get_critical(X509_get_ext(certificate, index)) == 1
    }

    /// OpenSSL's verdict on `certificate` for a client that trusts `root` alone and asked for
    /// `host` or `ip`, as a TLS server (X509_V_OK: verified).
    static func verify(_ certificate: OpaquePointer, root: OpaquePointer, host: String? = nil, ip: String? = nil) -> Int32 {
        let store = X509_STORE_new()!
        defer { X509_STORE_free(store) }
        X509_STORE_add_cert(store, root)
        let context = X509_STORE_CTX_new()!
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, certificate, nil) == 1 else { return -1 }
        X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER)
        let parameters = X509_STORE_CTX_get0_param(context)
        if let host { X509_VERIFY_PARAM_set1_host(parameters, host, 0) }
        if let ip { X509_VERIFY_PARAM_set1_ip_asc(parameters, ip) }
        _ = X509_verify_cert(context)
        ERR_clear_error()
        return X509_STORE_CTX_get_error(context)
    }
}
