/// A peer's HELLO that names more of our current incarnation than we wrote means this file went
/// back in time (a restored copy): we continue under a new incarnation, so new writes cannot
/// reuse those sequence numbers (SyncSession's handshake). But a HELLO is only words, and a
/// trusted peer can be buggy: one claiming one more than we wrote at every connection made a new
/// incarnation after every local write (each a vector entry on every replica, for good).
///
/// So a claim that rotated is remembered per peer, and backed once that peer's batches deliver
/// the writes it claimed. While a peer's last claim is unbacked, its claims rotate nothing; the
/// writes themselves still do when they arrive (the batch path: delivered writes are evidence).
/// A buggy peer costs at most one incarnation, however often it claims.
extension Replica {
    /// The last rotation `nodeID`'s claim caused: of which incarnation, up to which sequence,
    /// and whether it delivered them.
    public struct IncarnationClaim: Equatable, Sendable {
        public var incarnation: String
        public var sequence: UInt64
        public var backed: Bool
    }

    public func incarnationClaim(by nodeID: String) throws -> IncarnationClaim? {
        try database.firstRow("SELECT incarnation, sequence, backed FROM incarnation_claims WHERE node_id = ?", [.text(nodeID)]) {
            IncarnationClaim(incarnation: $0.string(0), sequence: UInt64(clamping: $0.int64(1)), backed: $0.int64(2) != 0)
        }
    }

    /// `nodeID` claimed `sequence` of our `incarnation`, and we rotated away from it.
    public func noteIncarnationClaim(by nodeID: String, incarnation: String, sequence: UInt64) throws {
        try database.run("""
            INSERT INTO incarnation_claims(node_id, incarnation, sequence, backed, claimed_at) VALUES (?1, ?2, ?3, 0, ?4)
            ON CONFLICT(node_id) DO UPDATE SET incarnation = ?2, sequence = ?3, backed = 0, claimed_at = ?4
            """, [.text(nodeID), .text(incarnation), .integer(Int64(clamping: sequence)), .text(now.iso8601)])
    }

    /// Whether the writes `nodeID` claimed have arrived (marking its claim backed if so).
    @discardableResult
    public func backIncarnationClaim(by nodeID: String) throws -> Bool {
        guard let claim = try incarnationClaim(by: nodeID), !claim.backed else { return true }
        guard try replicaVector()[claim.incarnation] >= claim.sequence else { return false }
        try database.run("UPDATE incarnation_claims SET backed = 1 WHERE node_id = ?", [.text(nodeID)])
        return true
    }
}
