/// Tunables of a sync session. Defaults follow PROTOCOL.md; every interval is in milliseconds.
public struct SessionConfiguration: Sendable {
    /// Changes per BATCH at most. The receiver commits each batch (and acknowledges it after):
    /// entry IDs are random, so each commit writes a leaf of the ID index for nearly every row;
    /// twice the rows a commit share more leaves (a 1M-entry sync in 19.7 s against 21.3 at
    /// 2,000; at 8,000, 19.8 s and each node's peak RSS 15 MiB higher). The byte bound below
    /// binds first for entries of over about 410 bytes of JSON.
    public var batchMaximumChanges = 4_000
    /// Approximate payload bytes per BATCH at most.
    public var batchMaximumBytes = 2 << 20
    /// BATCH frames sent and not yet acknowledged, at most.
    public var window = 4
    /// A PING after this long without sending anything.
    public var keepaliveInterval: Int64 = 15_000
    /// The connection is closed after this long without receiving anything.
    public var idleTimeout: Int64 = 45_000
    /// The peer must complete the handshake within this long.
    public var handshakeTimeout: Int64 = 10_000
    /// Other nodes' writes are relayed only once held this long, and to a peer only this long
    /// after its handshake (`RelayHold`); 0 relays at once.
    public var relayHold: Int64 = 1_000
    /// HOLDS goes to a peer at most this often for each ten nodes (or part of ten) the sender
    /// hears from directly (PROTOCOL.md §5.11, `holdsSpacing`).
    public var holdsInterval: Int64 = 100
    /// A watch receives entries only when configured to (`--receive-entries`); full replicas always.
    public var watchReceivesEntries = false
    /// Recording transfers: chunk size, window, size limit, whether a watch keeps its copies.
    package var transfer = TransferConfiguration()
    /// Capabilities this node does not claim in its HELLO, nor use: a node of an earlier
    /// revision, for tests of a household that mixes revisions.
    package var capabilitiesLeftOut: Capabilities = []
    /// Bugs that the simulator plants on purpose to prove its checker can fail. Never set in
    /// production code.
    package var plantedBugs: PlantedBugs = []

    public init() {}
}

extension SessionConfiguration {
    /// What a node of `role` announces in its HELLO: its role's capabilities (`RolePolicy`),
    /// but those left out.
    package func capabilities(of role: Role, transfersRecordings: Bool) -> Capabilities {
        RolePolicy(role: role, watchReceivesEntries: watchReceivesEntries).capabilities(transfersRecordings: transfersRecordings)
            .subtracting(capabilitiesLeftOut)
    }
}
