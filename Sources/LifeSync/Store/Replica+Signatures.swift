/// Who may vouch for a recording's bytes (PROTOCOL.md §5.9.7). Its origin signs the metadata;
/// a receiver stores metadata only when the signature is valid **and** the key is that origin's:
/// the key the trust store pins for the origin node, else the key this replica saw the origin
/// sign with before (bound at its first signed recording), and for this node itself only its
/// own key. The bytes must then hash to the signed SHA-256 (the transfer checks that), so a
/// relay can neither swap the bytes nor re-sign other metadata in the origin's name.
extension Replica {
    /// Refuses remote metadata that its origin did not sign, or that differs from metadata of
    /// the same recording already held (metadata never changes after attach; a delete carries
    /// none). Binds the origin's key at its first signed recording. Inside the apply transaction:
    /// a refusal leaves nothing written.
    func checkOrigin(of recording: Recording, holding local: Recording?) throws {
        guard let key = recording.originKey, recording.hasValidSignature(signatureVerifier) else {
            throw ReplicaError.forged("recording \(recording.id): its signature is not valid for the key it carries")
        }
        try requireNodeKey(key, of: recording.originNode, what: "recording \(recording.id)", refusal: ReplicaError.forged)
        if let local, local.signature != nil,
           local.originKey != key || RecordingSignature.message(for: local) != RecordingSignature.message(for: recording) {
            throw ReplicaError.forged("recording \(recording.id): its metadata differs from the signed metadata held (metadata never changes after attach)")
        }
    }

    /// Refuses `key` as `node`'s unless it is the key the trust store pins for it, else the key
    /// this replica bound to it before; binds it at first sight. No peer may bind a key to this
    /// node: its own is bound whenever it serves or attaches. `what` names the signed thing.
    /// - Throws: `refusal` with a message naming the keys.
    func requireNodeKey(_ key: [UInt8], of node: String, what: String, refusal: (String) -> ReplicaError) throws {
        if let pinned = try trustedFingerprint(nodeID: node) {
            guard SHA256.hash(key) == pinned else {
                throw refusal("\(what) is signed by key \(SHA256.hash(key).hex.prefix(16))…, but origin \(node) is trusted with key \(pinned.hex.prefix(16))…")
            }
            try bindOriginKey(nodeID: node, publicKey: key)
        } else if let bound = try originKey(nodeID: node) {
            guard bound == key else { throw refusal("\(what) is signed by another key than origin \(node) signed with before") }
        } else {
            guard node != identity.nodeID else { throw refusal("\(what) names this node as its origin, with a key this node never used") }
            try bindOriginKey(nodeID: node, publicKey: key)
        }
    }

    /// The key `nodeID` signs recordings with, as this replica learned it.
    func originKey(nodeID: String) throws -> [UInt8]? {
        try database.firstRow("SELECT public_key FROM origin_keys WHERE node_id = ?", [.text(nodeID)]) { $0.blob(0) }
    }

    func bindOriginKey(nodeID: String, publicKey: [UInt8]) throws {
        precondition(!publicKey.isEmpty, "a bound key has bytes")
        try database.run("""
            INSERT INTO origin_keys(node_id, public_key, bound_at) VALUES (?1, ?2, ?3)
            ON CONFLICT(node_id) DO UPDATE SET public_key = ?2, bound_at = ?3 WHERE public_key != ?2
            """, [.text(nodeID), .blob(publicKey), .text(now.iso8601)])
    }

    private func trustedFingerprint(nodeID: String) throws -> SHA256.Digest? {
        try database.firstRow("SELECT fingerprint FROM trusted_peers WHERE node_id = ?", [.text(nodeID)]) {
            try $0.digest(0, "the fingerprint of trusted peer \(nodeID)")
        }
    }

    /// Takes `signer` as this node's recording key: binds it to this node ID and signs this
    /// node's recordings stored before recordings were signed (in place: the metadata is the
    /// same, so no new version; a peer that lacks them now receives them signed). Returns how
    /// many it signed. A replica of an earlier version moves to a bound incarnation here
    /// (`bindIncarnation`). The runtime calls it whenever a node starts serving.
    @discardableResult
    package func adoptSigningKey(_ signer: RecordingSigner) throws -> Int {
        self.signer = signer
        return try writeTransaction {
            try bindOriginKey(nodeID: identity.nodeID, publicKey: signer.publicKey)
            try bindIncarnation()
            let unsigned = try database.rows("""
                SELECT \(Replica.recordingColumns) FROM recordings WHERE origin_node = ? AND signature IS NULL AND deleted = 0
                """, [.text(identity.nodeID)]) { try Replica.recording(from: $0) }
            for recording in unsigned {
                let signed = try recording.signed(by: signer)
                try database.run("UPDATE recordings SET origin_key = ?, signature = ? WHERE id = ?",
                                 [.blob(signed.originKey!), .blob(signed.signature!), .text(recording.id)])
            }
            return unsigned.count
        }
    }
}
