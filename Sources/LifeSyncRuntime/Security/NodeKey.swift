import CSSL
import Glibc
import LifeSync

/// A node's key pair and its self-signed certificate: ECDSA on P-256, which every TLS stack
/// verifies (Apple's included, so a phone or watch app can pair), with small keys and fast
/// handshakes. A peer knows the node by the SHA-256 of its public key (`fingerprint`, the SPKI
/// pin), never by the certificate, so the certificate can be renewed under the same identity.
///
/// ```swift
/// let key = try NodeKey.loadOrCreate(path: "phone.sqlite.key", nodeID: replica.identity.nodeID)
/// key.fingerprint.hex   // what `lifesync id` shows and peers pin
/// ```
///
/// The private key lives in one file of mode 0600 beside the replica (PEM: the PKCS #8 key, then
/// the certificate); a file others can read is refused, as ssh refuses one.
public final class NodeKey: @unchecked Sendable {  // immutable; OpenSSL keys and certificates are safe to share for reading
    /// `EVP_PKEY *`, owned.
    let key: OpaquePointer
    /// `X509 *`, owned.
    let certificate: OpaquePointer
    /// SHA-256 of the DER SubjectPublicKeyInfo.
    package let fingerprint: SHA256.Digest

    /// Certificates are issued for ten years and renewed at load when less than one is left.
    public static let validity: Int = 10 * 365 * 86_400
    public static let renewal: Int = 365 * 86_400

    /// Takes ownership of both (freed when this goes, or here if the fingerprint fails).
    init(owning key: OpaquePointer, certificate: OpaquePointer) throws {
        self.key = key
        self.certificate = certificate
        do {
            fingerprint = try Self.fingerprint(of: key)
        } catch {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw error
        }
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    // MARK: - Making and renewing

    /// A new P-256 key pair and a certificate naming `nodeID`, valid from `notBefore` seconds
    /// from now (a day ago: clocks differ) for `validity` seconds.
    public static func generate(nodeID: String, notBefore: Int = -86_400, validity: Int = validity) throws -> NodeKey {
        let key = try X509Builder.generateP256()
        let certificate: OpaquePointer
        do { certificate = try issue(for: key, nodeID: nodeID, notBefore: notBefore, validity: validity) } catch { EVP_PKEY_free(key); throw error }
        return try NodeKey(owning: key, certificate: certificate)
    }

    /// A self-signed certificate for `key`: subject and issuer CN = the node ID, a random serial.
    static func issue(for key: OpaquePointer, nodeID: String, notBefore: Int = -86_400, validity: Int = validity) throws -> OpaquePointer {
        try X509Builder.issue(commonName: nodeID, publicKey: key, issuer: nil, notBefore: notBefore, validity: validity)
    }

    /// The same key with a fresh certificate when this one has less than `renewal` left.
    func renewedIfDue(nodeID: String) throws -> NodeKey? {
        var threshold = time(nil) + time_t(Self.renewal)
        guard X509_cmp_time(X509_get0_notAfter(certificate), &threshold) < 0 else { return nil }
        try OpenSSLError.check(EVP_PKEY_up_ref(key) == 1, "keeping the key")
        let certificate: OpaquePointer
        do { certificate = try Self.issue(for: key, nodeID: nodeID) } catch { EVP_PKEY_free(key); throw error }
        return try NodeKey(owning: key, certificate: certificate)
    }

    /// The SPKI pin: SHA-256 over the DER SubjectPublicKeyInfo of `key`.
    static func fingerprint(of key: OpaquePointer) throws -> SHA256.Digest {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0, length < 4096 else { throw OpenSSLError.drain("encoding the public key") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        guard written == length else { throw OpenSSLError.drain("encoding the public key") }
        return SHA256.hash(der)
    }
}
