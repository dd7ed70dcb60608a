import CSSL
import Glibc
import LifeSync

/// The node's HTTPS server certificate, issued by its HTTPS authority (`HTTPSAuthority`) for a
/// key of its own: P-256, SHA-256 signature, subjectAltNames with every name and address the
/// node is reached by (`HTTPSNames`), extendedKeyUsage serverAuth, keyUsage digitalSignature
/// (critical), CA:FALSE, authority and subject key identifiers, valid 397 days (within the 398
/// of Apple's and the browsers' rule for public certificates and well within iOS 13's 825).
///
/// Its key is not the node key: peers pin the node key, which stays off the HTTPS path, and
/// this key is replaced at every renewal, which nobody pins. It is renewed (a new key too) when
/// less than 30 days are left, when the names it must carry changed, or when another authority
/// issued it (`renewalReason`).
///
/// Its file is `<replica>.https.key`: the PKCS #8 key, the certificate, then the authority's
/// certificate it was issued under, PEM, mode 0600, written whole (`PrivateFile`).
package final class HTTPSCertificate: @unchecked Sendable {  // immutable; OpenSSL objects are safe to share for reading
    /// `EVP_PKEY *`, owned.
    let key: OpaquePointer
    /// `X509 *`, owned.
    let certificate: OpaquePointer

    /// Issued for 397 days; renewed when less than 30 are left.
    package static let validity = 397 * 86_400
    package static let renewal = 30 * 86_400

    init(owning key: OpaquePointer, certificate: OpaquePointer) {
        self.key = key
        self.certificate = certificate
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// The certificate of the replica at `path` lives at `path + ".https.key"`.
    package static func path(forReplica path: String) -> String { path + ".https.key" }

    /// A new key and a certificate for `names`, issued by `authority`, valid from `notBefore`
    /// seconds from now (a day ago: clocks differ) for `validity` seconds in all. Its CN is the
    /// first host name (clients read the subjectAltNames).
    package static func issue(names: HTTPSNames, by authority: HTTPSAuthority, notBefore: Int = -86_400,
                             validity: Int = validity) throws -> HTTPSCertificate {
        precondition(!names.hosts.isEmpty || !names.addresses.isEmpty, "a certificate names something")
        let key = try X509Builder.generateP256()
        do {
            let certificate = try X509Builder.issue(
                commonName: names.hosts.first ?? names.addresses[0], publicKey: key,
                issuer: (authority.certificate, authority.key), notBefore: notBefore, validity: validity,
                extensions: [(NID_basic_constraints, "critical,CA:FALSE"),
                             (NID_key_usage, "critical,digitalSignature"),
                             (NID_ext_key_usage, "serverAuth"),
                             (NID_subject_key_identifier, "hash"),
                             (NID_authority_key_identifier, "keyid:always"),
                             (NID_subject_alt_name, names.subjectAltName)])
            return HTTPSCertificate(owning: key, certificate: certificate)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
    }

    /// The names the certificate carries (nil: names it could not have been issued with).
    package var names: HTTPSNames? { HTTPSNames(subjectAltNames: X509Builder.subjectAltNames(certificate)) }

    /// Why this certificate must be replaced to serve `names` under `authority`, or nil when it
    /// serves as it is: it has less than `renewal` left, carries other names, or was not issued
    /// by `authority`.
    package func renewalReason(names wanted: HTTPSNames, authority: HTTPSAuthority) -> String? {
        let left = X509Builder.secondsLeft(certificate)
        if left < Self.renewal { return left <= 0 ? "it expired" : "it expires in \(left / 86_400) day(s)" }
        guard let names else { return "it carries names it could not have been issued with" }
        if names != wanted {
            let added = (wanted.hosts + wanted.addresses).filter { !(names.hosts + names.addresses).contains($0) }
            let dropped = (names.hosts + names.addresses).filter { !(wanted.hosts + wanted.addresses).contains($0) }
            return "the names changed" + (added.isEmpty ? "" : ", now with \(added.joined(separator: ", "))")
                + (dropped.isEmpty ? "" : ", no longer \(dropped.joined(separator: ", "))")
        }
        if !X509Builder.isIssued(certificate, by: authority.certificate) { return "another authority issued it" }
        return nil
    }

    /// The certificate at `path` if it serves `names` under `authority`, else a new one saved
    /// there; with the reason it was renewed (nil: it was kept). No file yet: a new one.
    package static func loadOrIssue(path: String, names: HTTPSNames, authority: HTTPSAuthority) throws -> (certificate: HTTPSCertificate, renewed: String?) {
        let reason: String
        if PrivateFile.isAbsent(path) {
            reason = "there was none"
        } else {
            let loaded = try load(from: path)
            guard let why = loaded.renewalReason(names: names, authority: authority) else { return (loaded, nil) }
            reason = why
        }
        let issued = try issue(names: names, by: authority)
        try issued.save(to: path, authority: authority)
        return (issued, reason)
    }

    /// Reads a certificate file; refuses one others may read, or whose certificate is not for
    /// its P-256 key. (The authority's certificate after it is for people who read the file;
    /// the node serves the chain of its current authority.)
    package static func load(from path: String) throws -> HTTPSCertificate {
        let (key, certificates) = try X509Builder.readKeyAndCertificates(pem: try PrivateFile.read(path), path: path, certificates: 1)
        return HTTPSCertificate(owning: key, certificate: certificates[0])
    }

    /// Writes the file atomically with mode 0600: the key, this certificate, `authority`'s.
    package func save(to path: String, authority: HTTPSAuthority) throws {
        var bytes = try X509Builder.pem(privateKey: key) + Array(try certificatePEM().utf8) + Array(try authority.certificatePEM().utf8)
        defer { for i in bytes.indices { bytes[i] = 0 } }
        try PrivateFile.write(bytes, to: path)
    }

    /// The certificate in PEM.
    package func certificatePEM() throws -> String { try X509Builder.pem(certificate: certificate) }

    /// Seconds from its notBefore to its notAfter.
    package var validitySeconds: Int { X509Builder.validitySeconds(certificate) }

    /// Seconds until it expires (negative once it has).
    package var secondsLeft: Int { X509Builder.secondsLeft(certificate) }
}
