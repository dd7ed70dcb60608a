extension PeerCredential {
    /// The credential of a peer proving `fingerprint`, from `replica`'s trust store.
    package static func of(_ fingerprint: SHA256.Digest, in replica: Replica) throws -> PeerCredential {
        try replica.trustedPeer(fingerprint: fingerprint).map(PeerCredential.trusted) ?? .untrusted(fingerprint: fingerprint)
    }
}
