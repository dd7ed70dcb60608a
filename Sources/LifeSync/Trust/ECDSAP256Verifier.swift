import CCrypto
import Synchronization

/// ECDSA on P-256 with SHA-256, the scheme of node keys (PROTOCOL.md §1.1): verifies a 64-byte
/// r || s signature with a 91-byte DER SubjectPublicKeyInfo. Pure computation through libcrypto
/// (verifying needs no randomness), so it belongs to the core; signing needs a random nonce and
/// lives with the node key in the runtime.
///
/// ```swift
/// ECDSAP256Verifier().isValid(signature: sig, of: message, publicKey: spki)   // false for any malformed input
/// ```
package struct ECDSAP256Verifier: SignatureVerifier {
    package init() {}

    package func isValid(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == RecordingSignature.signatureLength, publicKey.count == RecordingSignature.publicKeyLength,
              let key = Self.parsedKey(publicKey) else { return false }
        guard let der = Self.derSignature(raw: signature), let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else { return false }
        return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
    }

    /// A parsed key, freed when the last user lets go of it.
    final class ParsedKey: @unchecked Sendable {  // OpenSSL allows a key only read to be shared
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { EVP_PKEY_free(pointer) }
    }

    /// Keys parsed before, by their DER bytes: OpenSSL 3 decodes an SPKI through its providers,
    /// about 0.7 ms a key and two thirds of checking a seal, and a sync checks one seal a batch,
    /// nearly always with the key of the last. A node meets a handful of keys; at
    /// `parsedKeysKept` the cache starts over. Only well-formed keys are kept.
    static let parsedKeys = Mutex<[[UInt8]: ParsedKey]>([:])
    static let parsedKeysKept = 64

    static func parsedKey(_ der: [UInt8]) -> ParsedKey? {
        if let known = parsedKeys.withLock({ $0[der] }) { return known }
        guard let pointer = parsePublicKey(der) else { return nil }
        let key = ParsedKey(pointer)
        parsedKeys.withLock { keys in
            if keys.count >= parsedKeysKept { keys.removeAll() }
            keys[der] = key
        }
        return key
    }

    /// A P-256 key from its DER SPKI, only when the bytes are exactly that key's canonical
    /// encoding (another curve, a compressed point or trailing bytes are refused).
    static func parsePublicKey(_ der: [UInt8]) -> OpaquePointer? {
        var parsed: OpaquePointer?
        der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            parsed = d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key = parsed else { ERR_clear_error(); return nil }
        var name = [CChar](repeating: 0, count: 32)
        var length = 0
        let isP256 = EVP_PKEY_get_base_id(key) == EVP_PKEY_EC
            && EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1
            && String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
        guard isP256, i2d_PUBKEY(key, nil) == Int32(der.count) else { EVP_PKEY_free(key); return nil }
        return key
    }

    /// r || s (32 bytes each) as the DER `ECDSA-Sig-Value` libcrypto verifies.
    static func derSignature(raw: [UInt8]) -> [UInt8]? {
        precondition(raw.count == RecordingSignature.signatureLength, "checked by the caller")
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        guard let r = BN_bin2bn(raw, 32, nil) else { return nil }
        guard let s = raw[32...].withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, 32, nil) }) else { BN_free(r); return nil }
        guard ECDSA_SIG_set0(sig, r, s) == 1 else { BN_free(r); BN_free(s); return nil }  // takes ownership on success
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0, length <= 80 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        return written == length ? der : nil
    }

    /// The 64-byte r || s form of a DER signature (what the runtime's signer produces).
    package static func rawSignature(der: [UInt8]) -> [UInt8]? {
        var parsed: OpaquePointer?
        der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            parsed = d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let sig = parsed else { ERR_clear_error(); return nil }
        defer { ECDSA_SIG_free(sig) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(sig, &r, &s)
        var raw = [UInt8](repeating: 0, count: RecordingSignature.signatureLength)
        let ok = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
            BN_bn2binpad(r, buffer.baseAddress, 32) == 32 && BN_bn2binpad(s, buffer.baseAddress! + 32, 32) == 32
        }
        return ok ? raw : nil
    }
}
