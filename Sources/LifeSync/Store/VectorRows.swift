import CSQLite

/// The rows of `replica_vector` as this connection last read them, kept while nothing it reads
/// can have changed: the replica's vector, its own origins and the origins it knows are all
/// read from them, and a node of a household of 40 read them some ninety times a second per
/// peer (every batch built, applied or offered; 12% of each node's processor time in a 40-node
/// `bench mesh`).
///
/// The copy is used only while three things stand as they were when it was read:
/// - `PRAGMA data_version`: no other connection (another process's `lifesync add`, say) has
///   committed since; inside a transaction it is the transaction's own snapshot;
/// - `sqlite3_total_changes64`: this connection has changed no row of any table since;
/// - no rollback and no copy into this database since (`forget`, called by the rollback hook
///   and by `Database.copy(into:)`): a rollback takes back rows without counting a change.
///
/// Schema steps change the table only before the replica's first read of it.
final class VectorRows {
    /// One row of `replica_vector`, its sequence as stored (the readers check it).
    struct Row {
        let origin: String
        let nodeID: String?
        let role: String?
        let sequence: Int64
    }

    fileprivate var rows: [Row] = []
    /// The replica's vector made from `rows`, once asked for (`Replica.replicaVector`).
    fileprivate var vector: VersionVector?
    fileprivate var readAt: (dataVersion: Int64, changes: Int64)?

    func forget() { readAt = nil }
}

extension Database {
    /// Every row of `replica_vector` in origin order, from this connection's copy while it
    /// stands (`VectorRows`), else read anew.
    /// - Throws: what SQLite reports.
    func vectorRows() throws -> [VectorRows.Row] {
        let now = (dataVersion: try dataVersion, changes: sqlite3_total_changes64(handle))
        if let readAt = vectorRowsCache.readAt, readAt == now { return vectorRowsCache.rows }
        vectorRowsCache.rows = try rows("SELECT origin, node_id, role, seq FROM replica_vector ORDER BY origin") {
            VectorRows.Row(origin: $0.string(0), nodeID: $0.optionalString(1), role: $0.optionalString(2), sequence: $0.int64(3))
        }
        vectorRowsCache.vector = nil
        vectorRowsCache.readAt = now
        return vectorRowsCache.rows
    }

    /// The vector `make` builds from `vectorRows()`, made again only when the rows are read
    /// anew: a node of 40 spent 2% of its time building the same vector from the same rows.
    /// - Throws: what SQLite reports, or what `make` throws.
    func vectorFromRows(_ make: ([VectorRows.Row]) throws -> VersionVector) throws -> VersionVector {
        let rows = try vectorRows()
        if let vector = vectorRowsCache.vector { return vector }
        let vector = try make(rows)
        vectorRowsCache.vector = vector
        return vector
    }
}
