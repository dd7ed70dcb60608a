/// Dialling trusted peers (`NodeConfiguration.dialTrustedPeers`): one dialer per trusted node with
/// somewhere to reach it, made, updated and retired as the trust store changes (`lifesync trust`
/// in another process is noticed by `tick`'s data_version poll) and as LAN discovery hears nodes.
/// A node is dialled by one dialer only: a configured `--peer` address that reaches a trusted node
/// takes that node's addresses after its own, and the node's own dialer is retired.
extension NodeCore {
    /// Brings the dialers in line with the trust store. New dialers wait until `now`: the next
    /// `dial` pass (in `start` or `tick`) dials them.
    func syncTrustedDialers(now: Int64) {
        guard configuration.dialTrustedPeers, let trusted = try? replica.trustedPeers() else { return }
        let trustedIDs = Set(trusted.map(\.nodeID))
        discovery.forgetAll(but: trustedIDs)
        for i in dialers.indices {
            guard let nodeID = dialers[i].nodeID else { continue }
            if let configured = dialers[i].configured {
                if !trustedIDs.contains(nodeID) { dialers[i].setAddresses([configured]) }
            } else if !trustedIDs.contains(nodeID) || dialers.contains(where: { $0.configured != nil && $0.nodeID == nodeID }) {
                retire(i)
            }
        }
        for peer in trusted {
            let targets = dialTargets(of: peer)
            if let i = dialers.firstIndex(where: { $0.configured != nil && $0.nodeID == peer.nodeID })
                ?? dialers.firstIndex(where: { $0.nodeID == nil && $0.configured.map(targets.contains) == true }) {
                // A --peer address reaches this node (or is one of its addresses): that dialer alone dials it.
                let configured = dialers[i].configured!
                dialers[i].nodeID = peer.nodeID
                dialers[i].setAddresses([configured] + targets.filter { $0 != configured })
                for j in dialers.indices where dialers[j].configured == nil && dialers[j].nodeID == peer.nodeID { retire(j) }
            } else if let i = dialers.firstIndex(where: { $0.configured == nil && $0.nodeID == peer.nodeID }) {
                dialers[i].setAddresses(targets)
                if dialers[i].retired && !targets.isEmpty {
                    dialers[i].retired = false
                    dialers[i].failures = 0
                    if dialers[i].state == .idle { dialers[i].state = .waiting(until: now) }
                }
            } else if !targets.isEmpty {
                var dialer = PeerDialer(trusted: peer.nodeID, addresses: targets)
                // Connected already (it dialled us): no second connection until that one ends.
                dialer.state = isConnected(peer.nodeID) ? .covered : .waiting(until: now)
                dialer.peerVector = (try? replica.peers())?.first(where: { $0.nodeID == peer.nodeID })?.vector ?? VersionVector()
                dialers.append(dialer)
            }
        }
    }

    /// Where a trusted peer is dialled: the address discovery last heard it at, then the trust
    /// store's dial order (Replica+DialAddresses), which holds every address the user gave.
    func dialTargets(of peer: TrustedPeer) -> [String] {
        var targets = discovery.addresses[peer.nodeID].map { [$0] } ?? []
        for address in peer.addresses where !targets.contains(address) && PairingString.isAddress(address) { targets.append(address) }
        return Array(targets.prefix(Replica.heardLimit + Replica.verifiedLimit + PairingString.maximumAddresses))
    }

    /// Stops a dialer for good (until its node is trusted again); a connection it has stays.
    func retire(_ i: Int) {
        dialers[i].retired = true
        switch dialers[i].state {
        case .connecting, .connected: break
        default: dialers[i].state = .idle
        }
    }

    /// A handshake on dialer `i`'s connection named `nodeID`. A configured dialer learns whom its
    /// address reaches (and, if that is news, the trusted dialers are brought in line); a trusted
    /// peer's dialer that reached another node tries its next address next time.
    func learnNode(_ nodeID: String, dialer i: Int, now: Int64) {
        if let configured = dialers[i].configured {
            let expected = dialers[i].nodeID
            dialers[i].nodeID = nodeID
            if expected != nodeID && configuration.dialTrustedPeers {
                dialers[i].setAddresses([configured])
                syncTrustedDialers(now: now)
            }
        } else if dialers[i].nodeID != nodeID {
            dialers[i].advance()
        }
    }
}
