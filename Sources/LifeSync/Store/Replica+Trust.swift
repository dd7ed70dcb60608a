/// The trust store: which key each trusted node holds, and the untrusted keys that tried.
///
/// ```swift
/// try replica.trust(PairingString(parsing: text).peer(trustedAt: replica.now))
/// try replica.trustedPeer(fingerprint: proven)?.nodeID   // who a connection is, or nil
/// ```
extension Replica {
    /// Keys the user stopped trusting that are remembered (the oldest forgotten beyond this).
    public static let revokedLimit = 256

    /// Trusts `peer` and forgets it as pending or discovered.
    /// One key names one node: a fingerprint already trusted for another node is refused, and so
    /// is `ownKey` (this node's own key) under any ID. A node ID trusted under another key is
    /// refused unless `replacing` — a pairing string or a pending impostor claiming a trusted ID
    /// must not silently lock the real device out — and the key replaced is then untrusted. A key
    /// the user untrusted is refused unless `again`: an old pairing string pasted (or slipped
    /// into a script) must not quietly undo an `untrust`.
    package func trust(_ peer: TrustedPeer, again: Bool = false, replacing: Bool = false, ownKey: SHA256.Digest? = nil) throws {
        precondition(peer.addresses.count <= PairingString.maximumAddresses, "addresses are bounded by the pairing string")
        if let ownKey, ownKey == peer.fingerprint {
            throw ReplicaError.invalid(ValidationError(field: "fingerprint", reason: "that is this node's own key (\(ownKey.hex.prefix(16))…); "
                                                       + "one key names one node, and this one names \(identity.nodeID)"))
        }
        try database.transaction {
            if let pinned = try trustedPeers().first(where: { $0.nodeID == peer.nodeID }), pinned.fingerprint != peer.fingerprint {
                guard replacing else {
                    throw ReplicaError.invalid(ValidationError(field: "fingerprint", reason: "\(peer.nodeID) is trusted under key \(pinned.fingerprint.hex.prefix(16))…, "
                        + "not \(peer.fingerprint.hex.prefix(16))…; if that device was reset or its key replaced, add --replace "
                        + "(the old key is then untrusted), else another device is claiming its ID"))
                }
                _ = try revokeTrust(nodeID: peer.nodeID)
            }
            if let revoked = try revocation(of: peer.fingerprint) {
                guard again else {
                    throw ReplicaError.invalid(ValidationError(field: "fingerprint", reason: "this key of \(revoked.nodeID) was untrusted at "
                                                               + "\(revoked.at); to trust it again on purpose, add --again"))
                }
                try database.run("DELETE FROM revoked_keys WHERE fingerprint = ?", [.text(peer.fingerprint.hex)])
            }
            if let holder = try trustedPeer(fingerprint: peer.fingerprint), holder.nodeID != peer.nodeID {
                throw ReplicaError.invalid(ValidationError(field: "fingerprint", reason: "this key is already trusted as \(holder.nodeID)"))
            }
            guard peer.nodeID != identity.nodeID else {
                throw ReplicaError.invalid(ValidationError(field: "node_id", reason: "that is this node's own ID"))
            }
            // The addresses given are the user's; what was heard or verified for the same key stays.
            try database.run("""
                INSERT INTO trusted_peers(node_id, role, fingerprint, addresses, trusted_at, given_addresses) VALUES (?1, ?2, ?3, ?4, ?5, ?4)
                ON CONFLICT(node_id) DO UPDATE SET role = ?2, fingerprint = ?3, trusted_at = ?5, given_addresses = ?4,
                    verified_addresses = CASE WHEN fingerprint = ?3 THEN verified_addresses ELSE '' END,
                    heard_addresses = CASE WHEN fingerprint = ?3 THEN heard_addresses ELSE '' END
                """, [.text(peer.nodeID), .text(peer.role.rawValue), .text(peer.fingerprint.hex),
                      .text(peer.addresses.joined(separator: " ")), .text(peer.trustedAt.iso8601)])
            try updateDialOrder(nodeID: peer.nodeID)
            try database.run("DELETE FROM pending_peers WHERE fingerprint = ?", [.text(peer.fingerprint.hex)])
            try database.run("DELETE FROM discovered_peers WHERE node_id = ?", [.text(peer.nodeID)])
        }
    }

    /// Stops trusting `nodeID`; false when it was not trusted.
    @discardableResult
    public func untrust(nodeID: String) throws -> Bool {
        try database.transaction { try revokeTrust(nodeID: nodeID) }
    }

    /// `untrust` inside the caller's transaction: the key is remembered as revoked.
    private func revokeTrust(nodeID: String) throws -> Bool {
        try database.run("""
            INSERT OR REPLACE INTO revoked_keys(fingerprint, node_id, revoked_at)
            SELECT fingerprint, node_id, ? FROM trusted_peers WHERE node_id = ?
            """, [.text(now.iso8601), .text(nodeID)])
        try database.run("""
            DELETE FROM revoked_keys WHERE fingerprint NOT IN (SELECT fingerprint FROM revoked_keys ORDER BY revoked_at DESC, fingerprint LIMIT ?)
            """, [.integer(Int64(Self.revokedLimit))])
        try database.run("DELETE FROM trusted_peers WHERE node_id = ?", [.text(nodeID)])
        return database.changes > 0
    }

    /// When the user stopped trusting `fingerprint`, and as which node; nil if never.
    package func revocation(of fingerprint: SHA256.Digest) throws -> (nodeID: String, at: String)? {
        try database.firstRow("SELECT node_id, revoked_at FROM revoked_keys WHERE fingerprint = ?", [.text(fingerprint.hex)]) {
            ($0.string(0), $0.string(1))
        }
    }

    /// Every trusted node, by node ID.
    package func trustedPeers() throws -> [TrustedPeer] {
        try database.rows("SELECT node_id, role, fingerprint, addresses, trusted_at FROM trusted_peers ORDER BY node_id") { try Self.trustedPeer($0) }
    }

    /// The trusted node holding the key `fingerprint`, if any.
    package func trustedPeer(fingerprint: SHA256.Digest) throws -> TrustedPeer? {
        try database.firstRow("SELECT node_id, role, fingerprint, addresses, trusted_at FROM trusted_peers WHERE fingerprint = ?",
                              [.text(fingerprint.hex)]) { try Self.trustedPeer($0) }
    }

    private static func trustedPeer(_ row: Statement) throws -> TrustedPeer {
        guard let role = Role(rawValue: row.string(1)) else { throw ReplicaError.damaged("trusted peer \(row.string(0)) has role '\(row.string(1))'") }
        let addresses = row.string(3).split(separator: " ").map(String.init)
        return TrustedPeer(nodeID: row.string(0), role: role, fingerprint: try row.digest(2, "the fingerprint of trusted peer \(row.string(0))"),
                           addresses: addresses, trustedAt: (try? Timestamp(iso8601: row.string(4))) ?? Timestamp(millisecondsSince1970: 0))
    }
}
