/// How a node syncs: whom it dials and its trigger intervals (LifeAdmin §3.3). Milliseconds.
public struct NodeConfiguration: Sendable {
    /// Peer addresses to dial and keep connected ("host:port" for TCP; any label in the simulator).
    public var peers: [String] = []
    public var session = SessionConfiguration()
    /// Local writes within this window are coalesced into one push.
    public var debounce: Int64 = 500
    /// While something is pending, retry this often even if no event fired.
    public var fallbackInterval: Int64 = 300_000
    /// Reconnect backoff: base × 2^attempts, capped, with ±20 % jitter.
    public var reconnectBase: Int64 = 500
    public var reconnectMaximum: Int64 = 30_000
    /// How often to look for writes other processes made to the replica file.
    public var changePollInterval: Int64 = 250
    /// Also dial the trusted peers' addresses (the trust store's, and those LAN discovery hears),
    /// one dialer per node, following trust changes as they are made. `serve` turns it on; the
    /// simulator and most tests leave it off (their peers are labels in `peers`).
    public var dialTrustedPeers = false
    /// Act on the LAN announcements the driver hands in (`NodeCore.discovered`); off (`serve
    /// --no-discovery`, the simulator), they are ignored.
    public var discovery = false

    public init(peers: [String] = []) { self.peers = peers }
}

/// What the node asks its driver to do.
public enum NodeAction: Equatable, Sendable {
    /// Open a connection to `address`; report back with `connected` or `connectFailed`.
    case connect(peer: Int, address: String)
    case send(connection: Int, bytes: [UInt8])
    case close(connection: Int)
    /// Something happened (for logs, status, traces).
    case event(NodeEvent)
    /// The replica's change feed may have moved: a peer's batch or repair was applied, a
    /// recording's file arrived, or this process or another wrote. The node's one notice of it,
    /// for drivers that stream changes (the HTTP API's event streams look at once).
    case replicaChanged
    /// A session event, for drivers that trace or test (the simulator).
    case sessionEvent(connection: Int, SessionEvent)
}
