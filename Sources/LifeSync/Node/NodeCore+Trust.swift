/// Trust decisions of a node: the credential of each connection, the untrusted keys noted for
/// the user (at a bounded rate), and sessions ended when their peer is untrusted.
extension NodeCore {
    /// How often one untrusted key is noted and logged at most, ms: a peer redialling in a loop
    /// costs one write and one line a minute.
    public static let untrustedNoteInterval: Int64 = 60_000

    /// What the trust store says of `peerKey`. A store that cannot be read trusts nobody.
    func credential(_ peerKey: SHA256.Digest) -> PeerCredential {
        (try? PeerCredential.of(peerKey, in: replica)) ?? .untrusted(fingerprint: peerKey)
    }

    func noteUntrusted(fingerprint: SHA256.Digest, claimedNodeID: String?, claimedRole: Role?, address: String, now: Int64) -> [NodeAction] {
        // A flood of fresh keys: the store keeps the latest few anyway (`Replica.pendingLimit`).
        guard untrustedNoted.note(fingerprint, now: now) else { return [] }
        try? replica.notePending(fingerprint: fingerprint, claimedNodeID: claimedNodeID, claimedRole: claimedRole,
                                 address: String(address.prefix(300)))
        return [.event(.untrustedPeer(address: address, fingerprint: fingerprint, claimedNodeID: claimedNodeID))]
    }

    /// The trust store changed (another process ran `lifesync untrust`, say): sessions whose peer
    /// is no longer trusted as the node they are end now.
    func withdrawUntrusted(now: Int64) -> [NodeAction] {
        var actions: [NodeAction] = []
        for (id, conn) in connections.sorted(by: { $0.key < $1.key }) {
            guard case .trusted(let peer)? = conn.session.credential,
                  (try? replica.trustedPeer(fingerprint: peer.fingerprint))??.nodeID != peer.nodeID else { continue }
            actions.append(.event(.trustWithdrawn(peer: peer.nodeID)))
            actions += perform(conn.session.close(code: .notTrusted, message: "this node no longer trusts your key"), on: id, now: now)
        }
        return actions
    }
}
