/// What the transport proved about a peer before its first frame: the key it holds, and what
/// this node's trust store says of that key. A session with an `untrusted` credential sends
/// nothing but ERROR `not_trusted`; a `trusted` one must name in its HELLO the node the key is
/// trusted as.
package enum PeerCredential: Equatable, Sendable {
    case trusted(TrustedPeer)
    case untrusted(fingerprint: SHA256.Digest)

    package var fingerprint: SHA256.Digest {
        switch self {
        case .trusted(let peer): return peer.fingerprint
        case .untrusted(let fingerprint): return fingerprint
        }
    }
}
