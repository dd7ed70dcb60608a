/// The origin's signature over a recording's metadata (PROTOCOL.md §5.9.7): what lets a node
/// that received a voice note through a relay know the relay did not substitute its bytes. The
/// origin signs at attach; the signature and the origin's public key travel with the metadata;
/// every receiver checks both before it stores the metadata, and the bytes must then match the
/// signed SHA-256.
///
/// ```swift
/// let message = RecordingSignature.message(for: recording)   // the bytes the origin signs
/// verifier.isValid(signature: sig, of: message, publicKey: key)
/// ```
package enum RecordingSignature {
    /// A DER SubjectPublicKeyInfo of a P-256 key with an uncompressed point is always 91 bytes.
    package static let publicKeyLength = Recording.originKeyLength
    /// r then s, 32 bytes each, big-endian (IEEE P1363; CryptoKit's `rawRepresentation`).
    package static let signatureLength = Recording.signatureLength
    /// Separates these signatures from any other use of the same key (TLS signs its own transcript).
    static let domain = Array("lifesync-recording-v2".utf8) + [0]

    /// The signed bytes: the domain, then id, origin node, file name, media type, entry ID (empty
    /// when none) and creation time as `str16`, the size as u64 and the 32-byte SHA-256
    /// (PROTOCOL.md §5.9.7). Every member of the metadata but the key and the signature: a relay
    /// can change none of them.
    package static func message(for recording: Recording) -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        writer.raw(domain)
        writer.string(recording.id)
        writer.string(recording.originNode)
        writer.string(recording.fileName)
        writer.string(recording.mediaType)
        writer.string(recording.entryID ?? "")
        writer.string(recording.createdAt.iso8601)
        writer.u64(recording.size)
        writer.digest(recording.sha256)
        return writer.bytes
    }
}

/// Signs recording metadata as this node. The runtime's signer is the node key (ECDSA P-256);
/// the simulator's models the same decisions without the crypto.
package protocol RecordingSigner {
    /// The signer's public key as it travels in metadata (`origin_key`); its SHA-256 is the
    /// node's key fingerprint.
    var publicKey: [UInt8] { get }
    func sign(_ message: [UInt8]) throws -> [UInt8]
}

/// Checks a signature made by a `RecordingSigner` of the same scheme.
package protocol SignatureVerifier: Sendable {
    func isValid(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool
}

extension Recording {
    /// This metadata with the origin's key and its signature over the signed fields.
    package func signed(by signer: RecordingSigner) throws -> Recording {
        precondition(signer.publicKey.count == RecordingSignature.publicKeyLength, "a signer's key is a 91-byte P-256 SPKI")
        var copy = self
        copy.originKey = signer.publicKey
        copy.signature = try signer.sign(RecordingSignature.message(for: self))
        assert(copy.signature?.count == RecordingSignature.signatureLength, "signatures are 64 bytes (r || s)")
        return copy
    }

    /// Whether the carried signature is the carried key's over the signed fields. It says nothing
    /// of whose key that is: the replica checks that against the origin's pin.
    package func hasValidSignature(_ verifier: SignatureVerifier) -> Bool {
        guard let originKey, let signature else { return false }
        return verifier.isValid(signature: signature, of: RecordingSignature.message(for: self), publicKey: originKey)
    }
}
