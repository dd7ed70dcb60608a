/// What a session asks its driver (the TCP runtime or the simulator) to do.
package enum SessionAction: Equatable, Sendable {
    /// Write these bytes to the connection, in order.
    case send([UInt8])
    /// Close the connection once the bytes before this action are written.
    case close(reason: String)
    /// Something worth a log line or a status update.
    case event(SessionEvent)
}

/// What happened in a session, for logs, status and the simulator's trace.
public enum SessionEvent: Equatable, Sendable {
    /// The handshake completed.
    case handshake(peer: Hello, version: UInt16)
    /// A batch from the peer was committed and acknowledged.
    case applied(batchID: UInt64, changes: Int, outcome: ApplyOutcome)
    /// A batch was sent.
    case sent(batchID: UInt64, changes: Int)
    /// The peer acknowledged a batch.
    case acknowledged(batchID: UInt64, changes: Int)
    /// We have sent the peer everything it lacked.
    case sentAll
    /// The peer has sent us everything we lacked.
    case receivedAll
    /// The peer's vector showed that our own history was rolled back (a restored backup): we
    /// continue under a new incarnation.
    case incarnationRotated(old: String, new: String)
    /// The peer's HISTORY showed that our replica forked from the history the peer holds of one
    /// of our origins (a device restored whole): our writes above the fork were moved to a new
    /// incarnation, and the origin's vector entry went back to the fork (PROTOCOL.md §7.2.3).
    case historyRepaired(HistoryRepair)
    /// Repairs this replica keeps for the first time (its own, or a peer's it took in), or
    /// writes of its own earlier incarnations it took back past what it held: each origin and
    /// the number above which its history changed here. Other sessions with peers holding an
    /// origin past that end (`endForRepairs`), so their next handshake compares the histories
    /// again (PROTOCOL.md §7.2.3).
    case repairsLearned([HistoryFork])
    /// The peer said what it holds (HOLDS): the node may now ask it, or another peer, to relay
    /// it origins it lacks (`RelayChoice`).
    case peerHolds
    /// The peer's HELLO named `claimed` writes of our current incarnation, which holds `held`,
    /// but its last such claim was never backed by the writes: not believed (no rotation).
    case incarnationClaimIgnored(peer: String, claimed: UInt64, held: UInt64)
    /// The peer's HLC is beyond our drift bound.
    case clockSkew(peerMilliseconds: Int64, localMilliseconds: Int64)
    /// The peer reported an error and the session ends.
    case peerError(code: UInt16, message: String)
    /// The peer broke the protocol; we sent an ERROR and close.
    case protocolError(WireError)
    /// The peer's key is not trusted: refused with `not_trusted`. What its HELLO claimed, if it
    /// sent one, is unproven (kept for the user to accept or not).
    case untrustedPeer(fingerprint: SHA256.Digest, claimedNodeID: String?, claimedRole: Role?)
    /// Recording bytes moved: `done` of `total`, sending or receiving.
    case recordingProgress(id: String, done: UInt64, total: UInt64, sending: Bool)
    /// The peer proved by checksum that it holds a recording we sent.
    case recordingConfirmed(id: String)
    /// The peer answered an offer with a CONFIRM although no bytes went: it says it holds the
    /// recording already. Believed for the session (no more offers of it), recorded nowhere.
    case recordingClaimedByPeer(id: String)
    /// An interrupted incoming transfer continues from `offset` (the end of its last whole chunk).
    case recordingResumed(id: String, offset: UInt64)
    /// A recording arrived whole, verified, and is in permanent storage.
    case recordingReceived(id: String, size: UInt64)
    /// A watch removed its copy after the phone's confirmation.
    case recordingCopyRemoved(id: String)
    /// Rows of the replica that do not read back (damaged on disk or by hand) were passed over;
    /// the rest keeps flowing. Reported once per row per session.
    case damagedRowsSkipped(ids: [String])
    /// Writes of other origins that no seal vouches for (received before seals existed) were
    /// not sent: no peer would take them (PROTOCOL.md §5.2.5). Reported once per row per session.
    case unsealedRowsSkipped(ids: [String])
    /// A transfer failed (it stays pending and is retried later).
    case recordingFailed(id: String, reason: String, sending: Bool)
}

/// An origin whose history forked, and the number up to which it stands.
public struct HistoryFork: Equatable, Sendable {
    public var origin: String
    public var fork: UInt64

    public init(origin: String, fork: UInt64) {
        self.origin = origin
        self.fork = fork
    }
}
