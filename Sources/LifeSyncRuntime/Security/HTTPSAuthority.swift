import CSSL
import Glibc
import LifeSync

/// The node as its own small certificate authority, for HTTPS only (`serve --http-tls`): a
/// P-256 key and a self-signed root certificate (CA:TRUE with path length 0, keyCertSign and
/// cRLSign, a subjectKeyIdentifier, CN "LifeSync node NODE_ID (HTTPS)"), valid ten years. It
/// issues the node's HTTPS server certificate (`HTTPSCertificate`); a phone that installs the
/// root (`lifesync id --https-ca`, `--https-profile`) then trusts whatever names that carries.
/// Peer connections do not use it: peers know each other by the node key's fingerprint.
///
/// Its file is `<replica>.https-ca.key`: the PKCS #8 key then the certificate, PEM, mode 0600,
/// written whole (`PrivateFile`).
///
/// ```swift
/// let authority = try HTTPSAuthority.loadOrCreate(path: HTTPSAuthority.path(forReplica: "mac.sqlite"), nodeID: id)
/// print(try authority.certificatePEM())
/// ```
package final class HTTPSAuthority: @unchecked Sendable {  // immutable; OpenSSL objects are safe to share for reading
    /// `EVP_PKEY *`, owned.
    let key: OpaquePointer
    /// `X509 *`, owned.
    let certificate: OpaquePointer

    /// A root is issued for ten years, and re-issued under the same key and name (so a device
    /// that trusts the old one verifies the new chain) when less than two are left: more than
    /// a server certificate's whole validity.
    package static let validity = 10 * 365 * 86_400
    package static let renewal = 2 * 365 * 86_400

    init(owning key: OpaquePointer, certificate: OpaquePointer) {
        self.key = key
        self.certificate = certificate
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// The authority of the replica at `path` lives at `path + ".https-ca.key"`.
    package static func path(forReplica path: String) -> String { path + ".https-ca.key" }

    /// The root's subject CN for the node `nodeID`.
    package static func commonName(nodeID: String) -> String { "LifeSync node \(nodeID) (HTTPS)" }

    /// A new key and root certificate for the node `nodeID`.
    package static func generate(nodeID: String, notBefore: Int = -86_400, validity: Int = validity) throws -> HTTPSAuthority {
        let key = try X509Builder.generateP256()
        do { return HTTPSAuthority(owning: key, certificate: try issue(for: key, nodeID: nodeID, notBefore: notBefore, validity: validity)) } catch {
            EVP_PKEY_free(key)
            throw error
        }
    }

    static func issue(for key: OpaquePointer, nodeID: String, notBefore: Int = -86_400, validity: Int = validity) throws -> OpaquePointer {
        try X509Builder.issue(commonName: commonName(nodeID: nodeID), publicKey: key, issuer: nil, notBefore: notBefore, validity: validity,
                              extensions: [(NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                                           (NID_key_usage, "critical,keyCertSign,cRLSign"),
                                           (NID_subject_key_identifier, "hash")])
    }

    /// Loads the authority at `path`, re-issuing its root when due; makes and saves one when
    /// there is no file yet (if another process, `serve` or `id --https-ca`, made one meanwhile,
    /// that one: a node has one root).
    package static func loadOrCreate(path: String, nodeID: String) throws -> HTTPSAuthority {
        if PrivateFile.isAbsent(path) {
            let made = try generate(nodeID: nodeID)
            var bytes = try made.fileBytes()
            defer { for i in bytes.indices { bytes[i] = 0 } }
            if try PrivateFile.create(bytes, at: path) { return made }
        }
        let authority = try load(from: path)
        if X509Builder.secondsLeft(authority.certificate) < renewal {
            try OpenSSLError.check(EVP_PKEY_up_ref(authority.key) == 1, "keeping the key")
            let renewed: OpaquePointer
            do { renewed = try issue(for: authority.key, nodeID: nodeID) } catch { EVP_PKEY_free(authority.key); throw error }
            let fresh = HTTPSAuthority(owning: authority.key, certificate: renewed)
            try fresh.save(to: path)
            return fresh
        }
        return authority
    }

    /// Reads an authority file; refuses one others may read, or one whose certificate is not a
    /// CA certificate for its P-256 key.
    package static func load(from path: String) throws -> HTTPSAuthority {
        let (key, certificates) = try X509Builder.readKeyAndCertificates(pem: try PrivateFile.read(path), path: path, certificates: 1)
        let authority = HTTPSAuthority(owning: key, certificate: certificates[0])
        guard authority.isAuthority else { throw KeyFileError(path: path, problem: "holds a certificate that is not a CA certificate") }
        return authority
    }

    /// Writes the authority file atomically with mode 0600.
    package func save(to path: String) throws {
        var bytes = try fileBytes()
        defer { for i in bytes.indices { bytes[i] = 0 } }
        try PrivateFile.write(bytes, to: path)
    }

    /// The file's bytes: the private key, then the certificate, both PEM.
    func fileBytes() throws -> [UInt8] { try X509Builder.pem(privateKey: key) + Array(try certificatePEM().utf8) }

    // MARK: - What a client installs

    /// The root certificate in PEM: what a client trusts (`curl --cacert`, a phone's profile).
    package func certificatePEM() throws -> String { try X509Builder.pem(certificate: certificate) }

    /// The root certificate in DER (the payload of an Apple configuration profile).
    package func certificateDER() throws -> [UInt8] { try X509Builder.der(certificate: certificate) }

    /// SHA-256 over the root's DER SubjectPublicKeyInfo: the same across its re-issues.
    package var keyFingerprint: SHA256.Digest { get throws { try NodeKey.fingerprint(of: key) } }

    /// Whether the certificate says CA:TRUE and keyCertSign (what OpenSSL derives from its
    /// basicConstraints and keyUsage).
    var isAuthority: Bool {
        X509_check_ca(certificate) == 1 && X509_get_key_usage(certificate) & UInt32(KU_KEY_CERT_SIGN) != 0
    }
}
