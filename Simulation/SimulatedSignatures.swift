import LifeSync

/// Recording signatures in the simulator: the same decisions as the nodes' ECDSA P-256 keys
/// (a signature is the signer's over exactly these metadata; the key must be the origin's pin or
/// binding), without the crypto, so every run stays a function of its seed. A node's public key
/// is 91 bytes drawn from the seed and its name, and its fingerprint (the key the virtual
/// network authenticates) is their SHA-256, as for a real key. Not unforgeable: the simulated
/// hostile node forges nothing; it replays and alters what honest nodes signed.
struct SimulatedSigner: RecordingSigner {
    let publicKey: [UInt8]

    init(name: String, seed: UInt64) {
        var key: [UInt8] = []
        var block = 0
        while key.count < RecordingSignature.publicKeyLength {
            key += SHA256.hash(Array("simulated key \(seed) \(name) \(block)".utf8)).bytes
            block += 1
        }
        publicKey = Array(key.prefix(RecordingSignature.publicKeyLength))
    }

    var fingerprint: SHA256.Digest { SHA256.hash(publicKey) }

    func sign(_ message: [UInt8]) -> [UInt8] { SimulatedVerifier.signature(of: message, by: publicKey) }
}

struct SimulatedVerifier: SignatureVerifier {
    static func signature(of message: [UInt8], by key: [UInt8]) -> [UInt8] {
        SHA256.hash(key + message).bytes + SHA256.hash(message + key).bytes
    }

    func isValid(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        signature == Self.signature(of: message, by: publicKey)
    }
}
