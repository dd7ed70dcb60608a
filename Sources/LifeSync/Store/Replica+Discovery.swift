/// What LAN discovery (PROTOCOL.md §1.3) leaves in the replica, so that `lifesync peers` in another
/// process sees it: untrusted announcers in a bounded list, and a trusted peer's address as heard.
///
/// ```swift
/// try replica.noteDiscovered(announcement, address: "192.168.1.20:7002")   // untrusted: listed only
/// try replica.putDiscoveredAddressFirst(nodeID: id, fingerprint: key, address: "192.168.1.20:7002")
/// ```
extension Replica {
    /// Untrusted announcers kept for the user to see: beyond this the least recently heard goes.
    public static let discoveredLimit = 32

    /// Notes an untrusted node heard announcing itself from `address`. Keeps at most
    /// `discoveredLimit`, dropping the least recently heard.
    public func noteDiscovered(_ announcement: Announcement, address: String) throws {
        precondition(PairingString.isAddress(address), "an address is a host:port")
        try database.transaction {
            try database.run("""
                INSERT INTO discovered_peers(node_id, role, fingerprint, address, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
                ON CONFLICT(node_id) DO UPDATE SET role = ?2, fingerprint = ?3, address = ?4, last_seen = ?5
                """, [.text(announcement.nodeID), .text(announcement.role.rawValue), .text(announcement.fingerprint.hex),
                      .text(address), .text(now.iso8601)])
            try keepMostRecentlySeen(Self.discoveredLimit, in: "discovered_peers", key: "node_id")
        }
    }

    /// The untrusted nodes heard on the local network, most recently heard first (a node trusted
    /// since is left out).
    package func discoveredPeers() throws -> [DiscoveredPeer] {
        try database.rows("""
            SELECT node_id, role, fingerprint, address, first_seen, last_seen FROM discovered_peers
            WHERE node_id NOT IN (SELECT node_id FROM trusted_peers) ORDER BY last_seen DESC, node_id
            """) { row in
            guard let role = Role(rawValue: row.string(1)) else { throw ReplicaError.damaged("discovered peer \(row.string(0)) has role '\(row.string(1))'") }
            return DiscoveredPeer(nodeID: row.string(0), role: role, fingerprint: try row.digest(2, "a discovered peer's fingerprint"),
                                  address: row.string(3), firstSeen: (try? Timestamp(iso8601: row.string(4))) ?? Timestamp(millisecondsSince1970: 0),
                                  lastSeen: (try? Timestamp(iso8601: row.string(5))) ?? Timestamp(millisecondsSince1970: 0))
        }
    }
}
