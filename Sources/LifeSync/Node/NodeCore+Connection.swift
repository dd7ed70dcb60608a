extension NodeCore {
    /// One connection the node holds, from `accepted` or `connected` until `closed`: its session,
    /// the dialer that made it (nil: the peer dialled us), the peer's status as the node keeps
    /// it, and what the node decided about it (a duplicate, silenced, persisted).
    final class Connection {
        let session: SyncSession
        let dialer: Int?
        let address: String
        var status: PeerStatus?
        var sentAll = false
        var receivedAll = false
        /// Closed because the same two nodes already had another connection.
        var closedAsDuplicate = false
        /// Closing as a duplicate by our own word: nothing is sent on it after its ERROR.
        var silenced = false
        /// The peer's node ID once the handshake told it, else the address.
        var name: String { status?.nodeID ?? address }
        /// When `status` was last written to the replica.
        var statusSavedAt: Int64?
        /// When `status` is due to be written again (`saveStatusSoon`); nil: nothing unsaved.
        var statusDueAt: Int64?
        /// Whether the peer may have a row in the replica: it had one already, its key is
        /// trusted, or it delivered something (a batch with changes, an acknowledgement). A
        /// stranger that only said hello leaves nothing behind, however many identities it makes up.
        var persisted = false

        init(session: SyncSession, dialer: Int?, address: String) {
            self.session = session
            self.dialer = dialer
            self.address = address
        }
    }
}
