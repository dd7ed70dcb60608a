import LifeSync

/// Pairs replicas on this machine with each other, as running `lifesync id` on each and
/// `lifesync trust` on the others would: each trusts every other's key (made beside its replica
/// if it has none). What the demo and the benches do with the nodes they make.
///
/// ```swift
/// try LocalPairing.pair([watch, phone])
/// ```
package enum LocalPairing {
    /// `addresses(i, j)`: where replica `i` dials replica `j` (none by default), as a pairing
    /// string's addresses would say.
    package static func pair(_ replicas: [Replica], addresses: (Int, Int) -> [String] = { _, _ in [] }) throws {
        let peers = try replicas.map { replica -> TrustedPeer in
            precondition(replica.path != ":memory:", "a replica in memory has no key file to pair by")
            let key = try NodeKey.loadOrCreate(path: NodeKey.path(forReplica: replica.path), nodeID: replica.identity.nodeID)
            return TrustedPeer(nodeID: replica.identity.nodeID, role: replica.identity.role, fingerprint: key.fingerprint, trustedAt: replica.now)
        }
        for (i, replica) in replicas.enumerated() {
            for (j, var peer) in peers.enumerated() where j != i {
                peer.addresses = addresses(i, j)
                try replica.trust(peer)
            }
        }
    }
}
