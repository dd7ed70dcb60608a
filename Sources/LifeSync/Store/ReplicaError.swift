/// Why a replica operation was refused. Each message says what to do about it.
public enum ReplicaError: Error, CustomStringConvertible, Equatable {
    case notInitialized(path: String)
    case alreadyInitialized(role: Role, nodeID: String)
    case notAReplica(path: String, reason: String)
    case newerSchema(found: Int, supported: Int)
    case notFound(id: String)
    case invalid(ValidationError)
    case storage(String)
    /// The file holds a row that does not read back (a broken JSON column, a negative counter):
    /// what it names is skipped and reported, never trapped on.
    case damaged(String)
    /// Storing this would pass a bound (origins known), after which the replica could no longer
    /// encode what it holds: refused, nothing written.
    case limitExceeded(String)
    /// Recording metadata whose signature is not its origin's: a relay substituting content,
    /// or a buggy peer. Refused, nothing written (PROTOCOL.md §5.9.7).
    case forged(String)
    /// A change its origin did not seal (PROTOCOL.md §5.2.5): a relay adding or altering a write,
    /// or a buggy peer writing under another node's origin. Refused, nothing written.
    case forgedWrite(String)

    public var description: String {
        switch self {
        case .notInitialized(let path):
            return "no replica at \(path); create one with: lifesync init --role watch|phone|mac"
        case .alreadyInitialized(let role, let nodeID):
            return "replica is already initialised as \(role.rawValue) (node \(nodeID)); use another --db to create a new one"
        case .notAReplica(let path, let reason):
            return "\(path) is not a LifeSync replica: \(reason)"
        case .newerSchema(let found, let supported):
            return "replica schema version \(found) is newer than this lifesync supports (\(supported)); upgrade lifesync"
        case .notFound(let id):
            return "no entry with id \(id)"
        case .invalid(let error):
            return error.description
        case .storage(let message):
            return message
        case .damaged(let message):
            return "replica damaged: \(message)"
        case .limitExceeded(let message):
            return message
        case .forged(let message), .forgedWrite(let message):
            return "refused as forged: \(message)"
        }
    }
}
