/// The trust store: which key each trusted node holds, and the untrusted keys that tried.
///
/// ```swift
/// try replica.trust(PairingString(parsing: text).peer(trustedAt: replica.now))
/// try replica.trustedPeer(fingerprint: proven)?.nodeID   // who a connection is, or nil
/// ```
extension Replica {
    /// Untrusted keys kept for the user to see: beyond this the least recently seen goes.
    public static let pendingLimit = 32

    /// Keys the user stopped trusting that are remembered (the oldest forgotten beyond this).
    public static let revokedLimit = 256

    /// Trusts `peer` (replacing what was trusted for its node ID) and forgets it as pending or
    /// discovered.
    /// One key names one node: a fingerprint already trusted for another node is refused. A key
    /// the user untrusted is refused unless `again`: an old pairing string pasted (or slipped
    /// into a script) must not quietly undo an `untrust`.
    public func trust(_ peer: TrustedPeer, again: Bool = false) throws {
        precondition(peer.addresses.count <= PairingString.maximumAddresses, "addresses are bounded by the pairing string")
        try database.transaction {
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
            try database.run("""
                INSERT INTO trusted_peers(node_id, role, fingerprint, addresses, trusted_at) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT(node_id) DO UPDATE SET role = ?2, fingerprint = ?3, addresses = ?4, trusted_at = ?5
                """, [.text(peer.nodeID), .text(peer.role.rawValue), .text(peer.fingerprint.hex),
                      .text(peer.addresses.joined(separator: " ")), .text(peer.trustedAt.iso8601)])
            try database.run("DELETE FROM pending_peers WHERE fingerprint = ?", [.text(peer.fingerprint.hex)])
            try database.run("DELETE FROM discovered_peers WHERE node_id = ?", [.text(peer.nodeID)])
        }
    }

    /// Stops trusting `nodeID`; false when it was not trusted.
    @discardableResult
    public func untrust(nodeID: String) throws -> Bool {
        try database.transaction {
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
    }

    /// When the user stopped trusting `fingerprint`, and as which node; nil if never.
    public func revocation(of fingerprint: SHA256.Digest) throws -> (nodeID: String, at: String)? {
        try database.firstRow("SELECT node_id, revoked_at FROM revoked_keys WHERE fingerprint = ?", [.text(fingerprint.hex)]) {
            ($0.string(0), $0.string(1))
        }
    }

    /// Every trusted node, by node ID.
    public func trustedPeers() throws -> [TrustedPeer] {
        try database.rows("SELECT node_id, role, fingerprint, addresses, trusted_at FROM trusted_peers ORDER BY node_id") { try Self.trustedPeer($0) }
    }

    /// The trusted node holding the key `fingerprint`, if any.
    public func trustedPeer(fingerprint: SHA256.Digest) throws -> TrustedPeer? {
        try database.firstRow("SELECT node_id, role, fingerprint, addresses, trusted_at FROM trusted_peers WHERE fingerprint = ?",
                              [.text(fingerprint.hex)]) { try Self.trustedPeer($0) }
    }

    private static func trustedPeer(_ row: Statement) throws -> TrustedPeer {
        guard let role = Role(rawValue: row.string(1)) else { throw ReplicaError.damaged("trusted peer \(row.string(0)) has role '\(row.string(1))'") }
        let addresses = row.string(3).split(separator: " ").map(String.init)
        return TrustedPeer(nodeID: row.string(0), role: role, fingerprint: try row.digest(2, "the fingerprint of trusted peer \(row.string(0))"),
                           addresses: addresses, trustedAt: (try? Timestamp(iso8601: row.string(4))) ?? Timestamp(millisecondsSince1970: 0))
    }

    /// Notes an untrusted key that connected from `address` (with what its HELLO claimed, if it
    /// sent one). Keeps at most `pendingLimit` keys, dropping the least recently seen.
    public func notePending(fingerprint: SHA256.Digest, claimedNodeID: String?, claimedRole: Role?, address: String) throws {
        precondition(address.utf8.count <= 300, "an address is a host:port")
        let claimed = claimedNodeID.flatMap { Identifier.isValid($0) ? $0 : nil }
        try database.transaction {
            // A key the user untrusted is not offered for acceptance again.
            guard try revocation(of: fingerprint) == nil else { return }
            try database.run("""
                INSERT INTO pending_peers(fingerprint, node_id, role, address, first_seen, last_seen, attempts)
                VALUES (?1, ?2, ?3, ?4, ?5, ?5, 1)
                ON CONFLICT(fingerprint) DO UPDATE SET node_id = coalesce(?2, node_id), role = coalesce(?3, role), address = ?4,
                    last_seen = ?5, attempts = attempts + 1
                """, [.text(fingerprint.hex), claimed.map { .text($0) } ?? .null, claimedRole.map { .text($0.rawValue) } ?? .null,
                      .text(address), .text(now.iso8601)])
            try keepMostRecentlySeen(Self.pendingLimit, in: "pending_peers", key: "fingerprint")
        }
    }

    /// Bounds a list of strangers (pending or discovered peers): keeps the `limit` rows of `table`
    /// seen last, ties broken by `key`, and deletes the rest.
    func keepMostRecentlySeen(_ limit: Int, in table: String, key: String) throws {
        try database.run("""
            DELETE FROM \(table) WHERE \(key) NOT IN (SELECT \(key) FROM \(table) ORDER BY last_seen DESC, \(key) LIMIT ?)
            """, [.integer(Int64(limit))])
    }

    /// The untrusted keys that tried, most recently seen first.
    public func pendingPeers() throws -> [PendingPeer] {
        try database.rows("""
            SELECT fingerprint, node_id, role, address, first_seen, last_seen, attempts FROM pending_peers ORDER BY last_seen DESC, fingerprint
            """) { row in
            PendingPeer(fingerprint: try row.digest(0, "a pending peer's fingerprint"), claimedNodeID: row.optionalString(1),
                        claimedRole: row.optionalString(2).flatMap(Role.init(rawValue:)), address: row.string(3),
                        firstSeen: (try? Timestamp(iso8601: row.string(4))) ?? Timestamp(millisecondsSince1970: 0),
                        lastSeen: (try? Timestamp(iso8601: row.string(5))) ?? Timestamp(millisecondsSince1970: 0),
                        attempts: Int(clamping: row.int64(6)))
        }
    }

    /// Trusts the pending key that claimed `nodeID` (the user accepted it), at the address it
    /// came from. Nil when no pending key claimed it.
    @discardableResult
    /// With `fingerprint`, only that key (the one whose pairing code the user compared).
    public func acceptPending(nodeID: String, fingerprint: SHA256.Digest? = nil, again: Bool = false) throws -> TrustedPeer? {
        guard let pending = try pendingPeers().first(where: { $0.claimedNodeID == nodeID && (fingerprint == nil || $0.fingerprint == fingerprint) }),
              let role = Identifier.role(of: nodeID) else { return nil }
        let peer = TrustedPeer(nodeID: nodeID, role: role, fingerprint: pending.fingerprint, addresses: [], trustedAt: now)
        try trust(peer, again: again)
        return peer
    }
}
