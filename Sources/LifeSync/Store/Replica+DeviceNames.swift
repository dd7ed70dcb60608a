/// Device names, per node ID (table `device_names`): this node's own, and for each peer the name
/// it announces (carried in its HELLO) and the one the user gave it here. The user's wins: a
/// person who named the phone "Anna's phone" keeps seeing that whatever the phone calls itself.
///
/// ```swift
/// try replica.setOwnName("Kitchen iPad")
/// try replica.recordPeerName("Running watch", for: watchID)   // as announced
/// try replica.setLocalPeerName("My watch", for: watchID)      // wins over it
/// try replica.peerName(for: watchID)                          // "My watch"
/// ```
extension Replica {
    /// This node's own name (nil: never given).
    public func ownName() throws -> String? {
        try peerName(for: identity.nodeID)
    }

    /// Names this node (`init --name`, `lifesync name`). Refuses an invalid name, naming the problem.
    public func setOwnName(_ name: String) throws {
        try setName(name, column: "local_name", for: identity.nodeID, field: "name")
    }

    /// Remembers the name a peer announces for itself. An invalid one is refused (and the
    /// caller may ignore it: the peer is then shown by its ID).
    public func recordPeerName(_ name: String, for nodeID: String) throws {
        try setName(name, column: "announced_name", for: nodeID, field: "announced name")
    }

    /// Names a peer on this replica only (`peers name NODE_ID NAME`); nil forgets the local name,
    /// so the announced one shows again.
    public func setLocalPeerName(_ name: String?, for nodeID: String) throws {
        guard nodeID != identity.nodeID else {
            throw ReplicaError.invalid(ValidationError(field: "NODE_ID", reason: "\(nodeID) is this node; name it with lifesync name"))
        }
        guard Identifier.role(of: nodeID) != nil else {
            throw ReplicaError.invalid(ValidationError(field: "NODE_ID", reason: "'\(nodeID.prefix(80))' is not a node ID (role_uuid, see lifesync peers --ids)"))
        }
        guard let name else {
            try database.run("UPDATE device_names SET local_name = NULL, updated_at = ? WHERE node_id = ?", [.text(now.iso8601), .text(nodeID)])
            return
        }
        try setName(name, column: "local_name", for: nodeID, field: "NAME")
    }

    /// The name to show for `nodeID`: the user's local name, else the announced one, else nil.
    public func peerName(for nodeID: String) throws -> String? {
        try database.firstRow("SELECT coalesce(local_name, announced_name) FROM device_names WHERE node_id = ?",
                              [.text(nodeID)]) { $0.optionalString(0) } ?? nil
    }

    /// A device as a log line names it: its name and short ID (`Kitchen iPad (phone_ce2c2334)`),
    /// or the short ID alone; what is not a node ID (an address) as it is.
    public func deviceLabel(_ nodeID: String) -> String {
        guard Identifier.isValid(nodeID) else { return nodeID }
        return ((try? peerName(for: nodeID)) ?? nil).map { "\($0) (\(Identifier.short(nodeID)))" } ?? Identifier.short(nodeID)
    }

    /// Both names of every named node: what `peers --json` shows.
    public func deviceNames() throws -> [String: (announced: String?, local: String?)] {
        var names: [String: (announced: String?, local: String?)] = [:]
        for row in try database.rows("SELECT node_id, announced_name, local_name FROM device_names ORDER BY node_id", [], {
            ($0.string(0), $0.optionalString(1), $0.optionalString(2))
        }) { names[row.0] = (row.1, row.2) }
        return names
    }

    private func setName(_ name: String, column: String, for nodeID: String, field: String) throws {
        let valid: String
        do throws(ValidationError) { valid = try DeviceName.validated(name, field: field) } catch { throw ReplicaError.invalid(error) }
        try database.run("""
            INSERT INTO device_names(node_id, \(column), updated_at) VALUES (?1, ?2, ?3)
            ON CONFLICT(node_id) DO UPDATE SET \(column) = ?2, updated_at = ?3
            """, [.text(nodeID), .text(valid), .text(now.iso8601)])
    }
}
