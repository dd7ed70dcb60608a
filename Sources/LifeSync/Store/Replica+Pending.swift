/// The untrusted keys that tried to connect, kept (bounded) for the user to accept or ignore.
extension Replica {
    /// Keys that claimed a node ID, kept for the user to see: beyond this the least recently seen goes.
    public static let pendingLimit = 32
    /// Keys that claimed nothing (a scanner, a client that never sent HELLO).
    public static let anonymousPendingLimit = 16
    /// Keys from one host, whatever they claimed.
    public static let pendingPerHost = 4
    /// Wrong pairing codes typed for one node ID before the keys claiming it are forgotten.
    public static let wrongCodeLimit = 3

    /// Notes an untrusted key that connected from `address` (with what its HELLO claimed, if it
    /// sent one). Bounded three ways, the least recently seen going first: `pendingLimit` keys
    /// that claimed a node ID, `anonymousPendingLimit` that claimed none, and `pendingPerHost`
    /// from one host — so knocks without a claim, or a flood from one machine, cannot push out
    /// a device waiting to be paired.
    package func notePending(fingerprint: SHA256.Digest, claimedNodeID: String?, claimedRole: Role?, address: String) throws {
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
            // The host: the address without its port (a simulated one has none).
            let host = String(address[..<(address.lastIndex(of: ":") ?? address.endIndex)])
            try keepMostRecentlySeen(Self.pendingPerHost, in: "pending_peers", key: "fingerprint",
                                     among: "address = ?2 OR substr(address, 1, length(?2) + 1) = ?2 || ':'", [.text(host)])
            try keepMostRecentlySeen(Self.pendingLimit, in: "pending_peers", key: "fingerprint", among: "node_id IS NOT NULL")
            try keepMostRecentlySeen(Self.anonymousPendingLimit, in: "pending_peers", key: "fingerprint", among: "node_id IS NULL")
        }
    }

    /// Bounds a list of strangers (pending or discovered peers): of the rows of `table` matching
    /// `condition` (SQL over `values`, numbered from ?2), keeps the `limit` seen last, ties broken
    /// by `key`, and deletes the rest.
    func keepMostRecentlySeen(_ limit: Int, in table: String, key: String, among condition: String = "1", _ values: [SQLValue] = []) throws {
        try database.run("""
            DELETE FROM \(table) WHERE (\(condition)) AND \(key) NOT IN
                (SELECT \(key) FROM \(table) WHERE \(condition) ORDER BY last_seen DESC, \(key) LIMIT ?1)
            """, [.integer(Int64(limit))] + values)
    }

    /// The untrusted keys that tried, most recently seen first.
    package func pendingPeers() throws -> [PendingPeer] {
        try database.rows("""
            SELECT fingerprint, node_id, role, address, first_seen, last_seen, attempts, wrong_codes FROM pending_peers
            ORDER BY last_seen DESC, fingerprint
            """) { row in
            PendingPeer(fingerprint: try row.digest(0, "a pending peer's fingerprint"), claimedNodeID: row.optionalString(1),
                        claimedRole: row.optionalString(2).flatMap(Role.init(rawValue:)), address: row.string(3),
                        firstSeen: (try? Timestamp(iso8601: row.string(4))) ?? Timestamp(millisecondsSince1970: 0),
                        lastSeen: (try? Timestamp(iso8601: row.string(5))) ?? Timestamp(millisecondsSince1970: 0),
                        attempts: Int(clamping: row.int64(6)), wrongCodes: Int(clamping: row.int64(7)))
        }
    }

    /// Trusts the pending key `fingerprint` that claimed `nodeID` (the user accepted it, having
    /// compared its pairing code or fingerprint), by the rules of `trust`. Nil when no such
    /// pending key claimed it.
    @discardableResult
    package func acceptPending(nodeID: String, fingerprint: SHA256.Digest, again: Bool = false, replacing: Bool = false,
                              ownKey: SHA256.Digest? = nil) throws -> TrustedPeer? {
        guard let pending = try pendingPeers().first(where: { $0.claimedNodeID == nodeID && $0.fingerprint == fingerprint }),
              let role = Identifier.role(of: nodeID) else { return nil }
        let peer = TrustedPeer(nodeID: nodeID, role: role, fingerprint: pending.fingerprint, addresses: [], trustedAt: now)
        try trust(peer, again: again, replacing: replacing, ownKey: ownKey)
        return peer
    }

    /// Counts a pairing code typed for `nodeID` that matched none of the keys claiming it. At
    /// `wrongCodeLimit` those keys are forgotten: codes are not tried until one fits. Returns
    /// the count, and whether the keys were forgotten (the real device is listed again, with the
    /// same code, when it next connects).
    public func noteWrongCode(nodeID: String) throws -> (count: Int, forgotten: Bool) {
        try database.transaction {
            try database.run("UPDATE pending_peers SET wrong_codes = wrong_codes + 1 WHERE node_id = ?", [.text(nodeID)])
            let count = try database.firstRow("SELECT max(wrong_codes) FROM pending_peers WHERE node_id = ?", [.text(nodeID)]) {
                $0.isNull(0) ? 0 : Int(clamping: $0.int64(0))
            } ?? 0
            guard count >= Self.wrongCodeLimit else { return (count, false) }
            try database.run("DELETE FROM pending_peers WHERE node_id = ?", [.text(nodeID)])
            return (count, true)
        }
    }
}
