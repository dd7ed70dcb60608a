import CSSL
import Glibc

/// The few X.509 operations the node's certificates need, over OpenSSL: a P-256 key pair, a
/// certificate issued by a key (itself, or an authority's), its encodings, and what tests and
/// renewals read back (names, time left). Pointers are OpenSSL's (`EVP_PKEY *`, `X509 *`); what
/// a function returns the caller owns.
///
/// ```swift
/// let key = try X509Builder.generateP256()
/// let root = try X509Builder.issue(commonName: "A root", publicKey: key, issuer: nil, validity: 86_400,
///                                  extensions: [(NID_basic_constraints, "critical,CA:TRUE")])
/// ```
enum X509Builder {
    /// A certificate's extension: OpenSSL's NID and its configuration string ("critical,CA:TRUE").
    typealias Extension = (nid: Int32, value: String)

    /// A fresh ECDSA key pair on P-256.
    static func generateP256() throws -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw OpenSSLError.drain("creating a key context") }
        defer { EVP_PKEY_CTX_free(context) }
        try OpenSSLError.check(EVP_PKEY_keygen_init(context) == 1, "starting key generation")
        try OpenSSLError.check(EVP_PKEY_CTX_set_group_name(context, "P-256") == 1, "choosing the P-256 curve")
        var generated: OpaquePointer?
        try OpenSSLError.check(EVP_PKEY_generate(context, &generated) == 1 && generated != nil, "generating the key pair")
        return generated!
    }

    /// An X.509 v3 certificate for `publicKey`, subject CN = `commonName`, a random positive
    /// 128-bit serial, valid from `notBefore` seconds from now for `validity` seconds, with
    /// `extensions` in their order, signed with SHA-256 by `issuer` (its certificate and private
    /// key), or by `publicKey` itself (then its private key) when `issuer` is nil.
    static func issue(commonName: String, publicKey: OpaquePointer, issuer: (certificate: OpaquePointer, key: OpaquePointer)?,
                      notBefore: Int = -86_400, validity: Int, extensions: [Extension] = []) throws -> OpaquePointer {
        guard let certificate = X509_new() else { throw OpenSSLError.drain("creating a certificate") }
        do {
            try OpenSSLError.check(X509_set_version(certificate, 2) == 1, "setting the certificate version")
            var serial = [UInt8](repeating: 0, count: 16)
            try OpenSSLError.check(RAND_bytes(&serial, Int32(serial.count)) == 1, "drawing a serial number")
            serial[0] &= 0x7F  // positive
            guard let number = BN_bin2bn(serial, Int32(serial.count), nil) else { throw OpenSSLError.drain("making the serial") }
            defer { BN_free(number) }
            try OpenSSLError.check(BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil, "setting the serial")
            // One reading of the clock for both ends, so the validity is exactly `validity`.
            var now = time(nil)
            try OpenSSLError.check(X509_time_adj(X509_getm_notBefore(certificate), notBefore, &now) != nil, "setting notBefore")
            try OpenSSLError.check(X509_time_adj(X509_getm_notAfter(certificate), notBefore + validity, &now) != nil, "setting notAfter")
            let name = X509_get_subject_name(certificate)
            try OpenSSLError.check(X509_NAME_add_entry_by_txt(name, "CN", lifesync_mbstring_asc(), commonName, -1, -1, 0) == 1,
                                   "naming the certificate")
            let issuerName = issuer.map { X509_get_subject_name($0.certificate) } ?? name
            try OpenSSLError.check(X509_set_issuer_name(certificate, issuerName) == 1, "setting the issuer")
            try OpenSSLError.check(X509_set_pubkey(certificate, publicKey) == 1, "putting the key in the certificate")
            for (nid, value) in extensions {
                try OpenSSLError.check(lifesync_x509_add_ext(certificate, issuer?.certificate ?? certificate, nid, value) == 1,
                                       "adding the extension \(String(cString: OBJ_nid2sn(nid))) = \(value)")
            }
            try OpenSSLError.check(X509_sign(certificate, issuer?.key ?? publicKey, EVP_sha256()) > 0, "signing the certificate")
            return certificate
        } catch {
            X509_free(certificate)
            throw error
        }
    }

    // MARK: - Encodings

    /// A certificate in PEM.
    static func pem(certificate: OpaquePointer) throws -> String {
        String(decoding: try withMemoryBIO("encoding the certificate") { PEM_write_bio_X509($0, certificate) == 1 }, as: UTF8.self)
    }

    /// A private key in PEM (PKCS #8, unencrypted: the file's mode protects it).
    static func pem(privateKey: OpaquePointer) throws -> [UInt8] {
        try withMemoryBIO("encoding the private key") { PEM_write_bio_PrivateKey($0, privateKey, nil, nil, 0, nil, nil) == 1 }
    }

    /// A certificate in DER.
    static func der(certificate: OpaquePointer) throws -> [UInt8] {
        try withMemoryBIO("encoding the certificate") { i2d_X509_bio($0, certificate) == 1 }
    }

    /// What `write` put into a memory BIO.
    private static func withMemoryBIO(_ operation: String, _ write: (OpaquePointer) -> Bool) throws -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLError.drain("making a buffer") }
        defer { BIO_free(bio) }
        try OpenSSLError.check(write(bio), operation)
        var data: UnsafeMutablePointer<CChar>?
        let count = lifesync_bio_mem_data(bio, &data)
        guard count > 0, let data else { throw OpenSSLError.drain(operation) }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// A private key and the certificates after it, from a PEM file's bytes; `path` names the
    /// file in refusals. Every certificate is owned by the caller with the key.
    static func readKeyAndCertificates(pem: [UInt8], path: String, certificates wanted: Int) throws -> (key: OpaquePointer, certificates: [OpaquePointer]) {
        guard let bio = pem.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw OpenSSLError.drain("reading \(path)")
        }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
            ERR_clear_error()
            throw KeyFileError(path: path, problem: "holds no readable private key")
        }
        var certificates: [OpaquePointer] = []
        while certificates.count < wanted, let certificate = PEM_read_bio_X509(bio, nil, nil, nil) { certificates.append(certificate) }
        ERR_clear_error()
        guard certificates.count == wanted, isP256(key), X509_check_private_key(certificates[0], key) == 1 else {
            ERR_clear_error()
            let problem = certificates.count < wanted ? "holds no certificate after the key"
                : isP256(key) ? "holds a certificate for another key" : "holds a key that is not ECDSA P-256"
            certificates.forEach { X509_free($0) }
            EVP_PKEY_free(key)
            throw KeyFileError(path: path, problem: problem)
        }
        return (key, certificates)
    }

    static func isP256(_ key: OpaquePointer) -> Bool {
        var group = [CChar](repeating: 0, count: 32)
        return EVP_PKEY_get_group_name(key, &group, group.count, nil) == 1 && String(cBuffer: group) == "prime256v1"
    }

    // MARK: - Reading back

    /// The certificate's subjectAltNames: "DNS:name" and "IP:address" (inet_ntop's form).
    static func subjectAltNames(_ certificate: OpaquePointer) -> [String] {
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard lifesync_x509_san_text(certificate, &buffer, buffer.count) > 0 else { return [] }
        return String(cBuffer: buffer).split(separator: "\n").map(String.init)
    }

    /// Seconds until the certificate expires (negative once it has).
    static func secondsLeft(_ certificate: OpaquePointer) -> Int {
        var seconds: Int64 = 0
        return lifesync_x509_seconds_left(certificate, &seconds) == 1 ? Int(seconds) : Int.min
    }

    /// Seconds from the certificate's notBefore to its notAfter.
    static func validitySeconds(_ certificate: OpaquePointer) -> Int {
        var seconds: Int64 = 0
        return lifesync_x509_validity_seconds(certificate, &seconds) == 1 ? Int(seconds) : Int.max
    }

    /// Whether `certificate` carries `issuer`'s subject as its issuer and `issuer`'s key signed it.
    static func isIssued(_ certificate: OpaquePointer, by issuer: OpaquePointer) -> Bool {
        defer { ERR_clear_error() }
        guard X509_NAME_cmp(X509_get_issuer_name(certificate), X509_get_subject_name(issuer)) == 0,
              let key = X509_get0_pubkey(issuer) else { return false }
        return X509_verify(certificate, key) == 1
    }
}
