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
    public let fingerprint: SHA256.Digest

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
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw OpenSSLError.drain("creating a key context") }
        defer { EVP_PKEY_CTX_free(context) }
        try OpenSSLError.check(EVP_PKEY_keygen_init(context) == 1, "starting key generation")
        try OpenSSLError.check(EVP_PKEY_CTX_set_group_name(context, "P-256") == 1, "choosing the P-256 curve")
        var generated: OpaquePointer?
        try OpenSSLError.check(EVP_PKEY_generate(context, &generated) == 1 && generated != nil, "generating the key pair")
        let key = generated!
        let certificate: OpaquePointer
        do { certificate = try issue(for: key, nodeID: nodeID, notBefore: notBefore, validity: validity) } catch { EVP_PKEY_free(key); throw error }
        return try NodeKey(owning: key, certificate: certificate)
    }

    /// A self-signed certificate for `key`: subject and issuer CN = the node ID, a random serial.
    static func issue(for key: OpaquePointer, nodeID: String, notBefore: Int = -86_400, validity: Int = validity) throws -> OpaquePointer {
        guard let certificate = X509_new() else { throw OpenSSLError.drain("creating a certificate") }
        do {
            try OpenSSLError.check(X509_set_version(certificate, 2) == 1, "setting the certificate version")
            var serial = [UInt8](repeating: 0, count: 16)
            try OpenSSLError.check(RAND_bytes(&serial, Int32(serial.count)) == 1, "drawing a serial number")
            serial[0] &= 0x7F  // positive
            guard let number = BN_bin2bn(serial, Int32(serial.count), nil) else { throw OpenSSLError.drain("making the serial") }
            defer { BN_free(number) }
            try OpenSSLError.check(BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil, "setting the serial")
            try OpenSSLError.check(X509_gmtime_adj(X509_getm_notBefore(certificate), notBefore) != nil, "setting notBefore")
            try OpenSSLError.check(X509_gmtime_adj(X509_getm_notAfter(certificate), notBefore + validity) != nil, "setting notAfter")
            let name = X509_get_subject_name(certificate)
            try OpenSSLError.check(X509_NAME_add_entry_by_txt(name, "CN", lifesync_mbstring_asc(), nodeID, -1, -1, 0) == 1,
                                   "naming the certificate")
            try OpenSSLError.check(X509_set_issuer_name(certificate, name) == 1, "setting the issuer")
            try OpenSSLError.check(X509_set_pubkey(certificate, key) == 1, "putting the key in the certificate")
            try OpenSSLError.check(X509_sign(certificate, key, EVP_sha256()) > 0, "signing the certificate")
            return certificate
        } catch {
            X509_free(certificate)
            throw error
        }
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
