extension Replica {
    /// Saves what the node knows of a peer (one row per peer node): a note for `lifesync status`,
    /// so not fsynced on its own, and no checkpoint of a burst's WAL when a peer leaves.
    package func savePeer(_ peer: PeerStatus) throws {
        try database.withUnsyncedCommits { try database.run("""
            INSERT INTO peers(node_id, role, address, direction, state, last_connected, last_sync, entries_sent,
                              entries_received, pending, vector, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            ON CONFLICT(node_id) DO UPDATE SET role = ?2, address = ?3, direction = ?4, state = ?5, last_connected = ?6,
                last_sync = ?7, entries_sent = ?8, entries_received = ?9, pending = ?10, vector = ?11, updated_at = ?12
            """, [.text(peer.nodeID), .text(peer.role.rawValue), .text(peer.address), .text(peer.direction),
                  .text(peer.state.rawValue), peer.lastConnected.map { .text($0.iso8601) } ?? .null,
                  peer.lastSync.map { .text($0.iso8601) } ?? .null, .integer(Int64(peer.entriesSent)),
                  .integer(Int64(peer.entriesReceived)), .integer(Int64(peer.pending)), .text(peer.vector.description),
                  .text(now.iso8601)]) }
    }

    /// Whether the replica has a row for `nodeID`.
    public func isKnownPeer(nodeID: String) throws -> Bool {
        try database.firstRow("SELECT 1 FROM peers WHERE node_id = ?", [.text(nodeID)], { _ in true }) ?? false
    }

    /// Every peer this node has met, by node ID.
    package func peers() throws -> [PeerStatus] {
        try database.rows("""
            SELECT node_id, role, address, direction, state, last_connected, last_sync, entries_sent, entries_received, pending, vector, updated_at
            FROM peers ORDER BY node_id
            """) { row in
            var peer = PeerStatus(nodeID: row.string(0), role: Role(rawValue: row.string(1)) ?? .phone, address: row.string(2),
                       direction: row.string(3), state: PeerStatus.State(rawValue: row.string(4)) ?? .disconnected,
                       lastConnected: row.optionalString(5).flatMap { try? Timestamp(iso8601: $0) },
                       lastSync: row.optionalString(6).flatMap { try? Timestamp(iso8601: $0) },
                       entriesSent: Int(row.int64(7)), entriesReceived: Int(row.int64(8)), pending: Int(row.int64(9)),
                       vector: VersionVector(storedText: row.string(10)) ?? VersionVector())
            peer.lastSeen = try? Timestamp(iso8601: row.string(11))
            return peer
        }
    }

    /// Changes this replica holds above `vector` in the origins `allowed` admits: what a peer with
    /// that vector still lacks. Counting stops at `limit` (`limit: 1` asks whether anything is
    /// pending, which takes one index probe per origin rather than a walk over all of it).
    package func pendingCount(above vector: VersionVector, allowed: (String) -> Bool = { _ in true }, limit: Int = .max) throws -> Int {
        var total = 0
        for entry in try replicaVector().entries where entry.sequence > vector[entry.origin] && allowed(entry.origin) {
            guard total < limit else { break }
            total += Int(try database.firstRow("""
                SELECT (SELECT count(*) FROM (SELECT 1 FROM entries WHERE origin_no = ?1 AND origin_seq > ?2 LIMIT ?3))
                     + (SELECT count(*) FROM (SELECT 1 FROM tombstones WHERE origin_no = ?1 AND origin_seq > ?2 LIMIT ?3))
                     + (SELECT count(*) FROM (SELECT 1 FROM recordings WHERE origin_no = ?1 AND origin_seq > ?2 LIMIT ?3))
                     + (SELECT count(*) FROM (SELECT 1 FROM kept_writes WHERE origin_no = ?1 AND origin_seq > ?2 LIMIT ?3))
                """, [try database.originParameter(entry.origin), .integer(Int64(vector[entry.origin])), .integer(Int64(limit - total))],
                { $0.int64(0) }) ?? 0)
        }
        return min(total, limit)
    }
}
