/// What a node knows of one peer: kept in the replica so `lifesync status` can show it.
public struct PeerStatus: Equatable, Sendable {
    public enum State: String, Sendable {
        case connecting, syncing, synced, disconnected
    }

    public var nodeID: String
    public var role: Role
    public var address: String
    /// "outbound" (we dialled) or "inbound" (it dialled us).
    public var direction: String
    public var state: State
    public var lastConnected: Timestamp?
    /// When both sides last had sent each other everything.
    public var lastSync: Timestamp?
    /// Changes sent to and received from the peer, in all sessions with it (received counts
    /// every change that arrived, also one already held).
    public var entriesSent: Int
    public var entriesReceived: Int
    /// Changes we hold that the peer is not known to have (in what policy lets us send it).
    public var pending: Int
    /// The peer's replica vector as last known.
    package var vector: VersionVector
    /// When the serving node last wrote this row (as stored; nil before it is).
    public var lastSeen: Timestamp?

    package init(nodeID: String, role: Role, address: String, direction: String, state: State, lastConnected: Timestamp? = nil,
                lastSync: Timestamp? = nil, entriesSent: Int = 0, entriesReceived: Int = 0, pending: Int = 0, vector: VersionVector = VersionVector()) {
        self.nodeID = nodeID
        self.role = role
        self.address = address
        self.direction = direction
        self.state = state
        self.lastConnected = lastConnected
        self.lastSync = lastSync
        self.entriesSent = entriesSent
        self.entriesReceived = entriesReceived
        self.pending = pending
        self.vector = vector
    }

    public var json: JSONValue {
        .object([
            ("node_id", .string(nodeID)), ("role", .string(role.rawValue)), ("address", .string(address)),
            ("direction", .string(direction)), ("state", .string(state.rawValue)),
            ("last_connected", lastConnected.map { .string($0.iso8601) } ?? .null),
            ("last_sync", lastSync.map { .string($0.iso8601) } ?? .null),
            ("entries_sent", .number(Double(entriesSent))), ("entries_received", .number(Double(entriesReceived))),
            ("pending", .number(Double(pending))),
        ])
    }
}
