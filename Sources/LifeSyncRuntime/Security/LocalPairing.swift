import LifeSync

/// Pairs replicas on this machine with each other, as running `lifesync id` on each and
/// `lifesync trust` on the others would: each trusts every other's key (made beside its replica
/// if it has none). What the demo and the benches do with the nodes they make.
///
/// ```swift
/// try LocalPairing.pair([watch, phone])
/// ```
package enum LocalPairing {
    package static func pair(_ replicas: [Replica]) throws {
        let peers = try replicas.map { replica -> TrustedPeer in
            precondition(replica.path != ":memory:", "a replica in memory has no key file to pair by")
            let key = try NodeKey.loadOrCreate(path: NodeKey.path(forReplica: replica.path), nodeID: replica.identity.nodeID)
            return TrustedPeer(nodeID: replica.identity.nodeID, role: replica.identity.role, fingerprint: key.fingerprint, trustedAt: replica.now)
        }
        for replica in replicas {
            for peer in peers where peer.nodeID != replica.identity.nodeID { try replica.trust(peer) }
        }
    }
}
