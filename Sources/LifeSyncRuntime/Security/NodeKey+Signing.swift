import CSSL
import LifeSync

/// The node key signs this node's recordings (PROTOCOL.md §5.9.7): ECDSA P-256 over SHA-256,
/// the signature as r || s. Signing draws a random nonce, which is why it lives here in the
/// runtime while verifying (`ECDSAP256Verifier`) lives in the core.
extension NodeKey: RecordingSigner {
    /// The DER SubjectPublicKeyInfo: 91 bytes for a P-256 key; its SHA-256 is `fingerprint`.
    public var publicKey: [UInt8] {
        let length = i2d_PUBKEY(key, nil)
        precondition(length == Int32(RecordingSignature.publicKeyLength), "a node key is P-256 (checked at load)")
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_PUBKEY(key, &cursor)
        }
        return der
    }

    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError.drain("creating a signing context") }
        defer { EVP_MD_CTX_free(context) }
        try OpenSSLError.check(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1, "starting a signature")
        var length = 0
        try OpenSSLError.check(EVP_DigestSign(context, nil, &length, message, message.count) == 1, "sizing a signature")
        var der = [UInt8](repeating: 0, count: length)
        try OpenSSLError.check(EVP_DigestSign(context, &der, &length, message, message.count) == 1, "signing")
        guard let raw = ECDSAP256Verifier.rawSignature(der: Array(der.prefix(length))) else {
            throw OpenSSLError.drain("converting the signature to r || s")
        }
        assert(ECDSAP256Verifier().isValid(signature: raw, of: message, publicKey: publicKey), "a fresh signature verifies")
        return raw
    }
}
