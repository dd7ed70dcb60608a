extension Replica {
    /// Every incarnation this node has written under (the current one and any retired ones).
    public func ownOrigins() throws -> Set<String> {
        var origins = Set(try database.vectorRows().lazy.filter { $0.nodeID == self.identity.nodeID }.map(\.origin))
        origins.insert(identity.incarnation)
        return origins
    }

    /// Starts a new history: later writes are numbered under a fresh incarnation. Used when a
    /// peer holds more of our current incarnation than we do (this file was restored from an
    /// older copy), so new writes can never reuse sequence numbers the peers already hold.
    @discardableResult
    public func rotateIncarnation() throws -> String {
        try database.transaction { try startIncarnation() }
    }

    /// Switches to a fresh incarnation, bound to this node (PROTOCOL.md §2.3.1), inside the
    /// caller's transaction.
    @discardableResult
    func startIncarnation() throws -> String {
        let fresh = Identifier.incarnation(boundTo: identity.nodeID, random: random)
        try database.run("UPDATE meta SET value = ? WHERE key = 'incarnation'", [.text(fresh)])
        try database.run("INSERT INTO replica_vector(origin, seq, node_id, role) VALUES (?, 0, ?, ?)",
                         [.text(fresh), .text(identity.nodeID), .text(identity.role.rawValue)])
        try database.run("INSERT INTO own_incarnations(origin) VALUES (?)", [.text(fresh)])
        identity.incarnation = fresh
        return fresh
    }

    /// Moves a replica made by an earlier version to an incarnation bound to this node (inside
    /// the caller's transaction). One without writes yet is replaced where it stands (nothing was
    /// numbered under it, so nothing can collide); one with writes is kept for them, and later
    /// writes go to a fresh bound one. Nothing changes when the current one is bound already.
    func bindIncarnation() throws {
        let current = identity.incarnation
        guard !Identifier.incarnation(current, isBoundTo: identity.nodeID) else { return }
        guard try currentSequence() == 0 else {
            try startIncarnation()
            return
        }
        let fresh = Identifier.incarnation(boundTo: identity.nodeID, random: random)
        try database.run("UPDATE meta SET value = ? WHERE key = 'incarnation'", [.text(fresh)])
        try database.run("UPDATE replica_vector SET origin = ? WHERE origin = ?", [.text(fresh), .text(current)])
        try database.run("UPDATE own_incarnations SET origin = ? WHERE origin = ?", [.text(fresh), .text(current)])
        identity.incarnation = fresh
    }

    /// Runs `body` on one consistent snapshot of the file (a read transaction), so a batch never
    /// mixes rows from before and after another process's commit.
    public func readSnapshot<T>(_ body: () throws -> T) throws -> T {
        try database.execute("BEGIN")
        defer { try? database.execute("COMMIT") }
        return try body()
    }

    /// The HLC as it stands (for the HELLO).
    package var currentClock: HLCTimestamp { hlc.last }

    /// Catches up with the identity and clock another process may have changed (rotation).
    public func reloadIdentity() throws {
        if let fresh = try Replica.readIdentity(database) { identity = fresh }
        try refreshClock()
    }
}
