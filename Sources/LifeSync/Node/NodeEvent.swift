/// What happened in a node, as data: the runtime turns these into log lines
/// (`NodeEvent.logLine` in LifeSyncRuntime), the simulator traces them, tests and embedders
/// match on them — nobody parses sentences.
///
/// ```swift
/// for action in node.tick(now: now) {
///     if case .event(.inSync(let peer, _, _)) = action { print("in sync with", peer) }
/// }
/// ```
public enum NodeEvent: Equatable, Sendable {
    case starting(nodeID: String, role: Role)
    case accepted(remote: String)
    case dialled(address: String)
    /// A dial failed; the next attempt is in `retryIn` ms. Only the first few failures in a row
    /// and then every tenth are reported.
    case unreachable(address: String, reason: String, retryIn: Int64)
    case peerConnected(peer: String, role: Role, address: String, inbound: Bool)
    case disconnected(peer: String, address: String)
    /// We close a connection (`peer` is its node ID once known, else its address).
    case closing(peer: String, reason: String)
    case fallbackTimerFired
    case shuttingDown
    /// A batch with changes was committed.
    case received(from: String, changes: Int, applied: Int, conflicts: Int)
    case acknowledged(by: String, changes: Int)
    case inSync(with: String, sent: Int, received: Int)
    case incarnationRotated(old: String, new: String)
    /// A peer's HISTORY showed this replica's `origin` forked above `fork` (a device restored
    /// whole): its writes above the fork moved to the current incarnation (PROTOCOL.md §7.2.3).
    case historyRepaired(peer: String, repair: HistoryRepair)
    case incarnationClaimIgnored(peer: String, claimed: UInt64, held: UInt64)
    case clockSkew(peer: String, aheadSeconds: Int64)
    case peerError(peer: String, code: UInt16, message: String)
    case protocolError(peer: String, error: WireError)
    /// A peer whose key is not trusted was refused (`not_trusted`) and noted as pending.
    case untrustedPeer(address: String, fingerprint: SHA256.Digest, claimedNodeID: String?)
    /// An open session ended because its peer is no longer trusted (`lifesync untrust`).
    case trustWithdrawn(peer: String)
    /// LAN discovery heard `peer` announce itself at `address` (logged when new or changed). A
    /// trusted one is dialled there; an untrusted one is listed (`lifesync peers`), never dialled.
    case discovered(peer: String, address: String, trusted: Bool)
    /// A datagram on the discovery port was refused (garbage, or a key that is not the one
    /// trusted for the node it names); at most one a minute per sender.
    case discoveryRefused(from: String, reason: String)
    /// Rows of the replica that do not read back were passed over (see `Replica.encodedChanges`).
    case damagedRowsSkipped(ids: [String])
    /// Other origins' writes without a seal were not relayed (see `BatchBuilder`).
    case unsealedRowsSkipped(ids: [String])
    /// Transfer progress, at most every 2 s per recording: `rate` in MiB/s since the transfer started.
    case transferProgress(recording: String, peer: String, sending: Bool, done: UInt64, total: UInt64, rate: Double)
    case recordingConfirmed(recording: String, by: String)
    case recordingClaimedByPeer(recording: String, by: String)
    case recordingReceived(recording: String, size: UInt64, from: String)
    case recordingResumed(recording: String, offset: UInt64)
    case watchCopyRemoved(recording: String)
    case transferFailed(recording: String, peer: String, sending: Bool, reason: String)
}
