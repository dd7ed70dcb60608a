/// The peer's HELLO (PROTOCOL.md §7.2): the version and the seals capability, the key's word on
/// who the peer is, our own identity and incarnations kept ours, a peer that holds more of our
/// current incarnation than we do (a restored replica: a new incarnation), the clock, and then
/// the session opens — to the history exchange when both set bit 4, else straight to delta sync.
extension SyncSession {
    func handshake(_ hello: Hello, now: Int64, actions: inout [SessionAction]) throws {
        let version = min(hello.maximumVersion, ProtocolVersion.maximum)
        guard version >= max(hello.minimumVersion, ProtocolVersion.minimum) else {
            let theirs = hello.minimumVersion == hello.maximumVersion ? "version \(hello.minimumVersion)" : "versions \(hello.minimumVersion)…\(hello.maximumVersion)"
            throw WireError(.versionUnsupported, "protocol \(theirs) is not supported: this node speaks version \(ProtocolVersion.minimum)"
                            + (ProtocolVersion.minimum == ProtocolVersion.maximum ? "" : "…\(ProtocolVersion.maximum)") + " (TLS 1.3, paired keys, signed recordings)")
        }
        guard hello.capabilities.contains(.seals) else {
            throw WireError(.versionUnsupported, "your HELLO does not set the seals capability (bit 3): this node takes only writes sealed "
                            + "by their origin (PROTOCOL.md §5.2.5), which version-2 builds before it do not send; update every node")
        }
        switch credential {
        case .untrusted(let fingerprint)?:
            actions.append(.event(.untrustedPeer(fingerprint: fingerprint, claimedNodeID: hello.nodeID, claimedRole: hello.role)))
            throw WireError(.notTrusted, "this node does not trust your key \(fingerprint.hex.prefix(16))…; pair first")
        case .trusted(let peer)?:
            guard hello.nodeID == peer.nodeID, hello.role == peer.role else {
                throw WireError(.notTrusted, "your key is trusted as \(peer.nodeID) (\(peer.role.rawValue)), not \(hello.nodeID) (\(hello.role.rawValue))")
            }
        case nil:
            break
        }
        let me = replica.identity
        guard hello.nodeID != me.nodeID, hello.incarnation != me.incarnation else {
            throw WireError(.identityConflict, "peer claims our own identity \(hello.nodeID) (a copied replica file?)")
        }
        let origins = try replica.knownOrigins()
        if let known = origins.first(where: { $0.origin == hello.incarnation }), let owner = known.nodeID, owner != hello.nodeID {
            throw WireError(.identityConflict, "incarnation \(hello.incarnation) belongs to \(owner), not \(hello.nodeID)")
        }
        if origins.contains(where: { $0.nodeID == me.nodeID && $0.origin == hello.incarnation }) {
            throw WireError(.identityConflict, "peer claims one of our own incarnations")
        }
        if !helloSent { actions += start(now: now) }
        // The peer holds writes of our current incarnation that we do not: this file went back in
        // time. Continue under a new incarnation so new writes cannot reuse those numbers (§7.2.2),
        // only while this peer's last such claim was backed by the writes it named
        // (Replica+IncarnationClaims): a buggy peer's claims cost one incarnation at most. Even
        // before this incarnation's first write here, and even on a node that takes entries: a
        // lost write the peer has since superseded never comes back, and our next number would
        // be its (restore seed 4579: a mac put back to before its first write wrote #2 again,
        // and the phone, whose vector held #2, never took it).
        let mine = try replica.replicaVector()[me.incarnation]
        var unbackedClaim = false
        if hello.vector[me.incarnation] > mine {
            if let prior = try replica.incarnationClaim(by: hello.nodeID), !prior.backed, !(try replica.backIncarnationClaim(by: hello.nodeID)) {
                actions.append(.event(.incarnationClaimIgnored(peer: hello.nodeID, claimed: hello.vector[me.incarnation], held: mine)))
            } else {
                let old = me.incarnation
                let new = try replica.rotateIncarnation()
                try replica.noteIncarnationClaim(by: hello.nodeID, incarnation: old, sequence: hello.vector[old])
                unbackedClaim = true
                actions.append(.event(.incarnationRotated(old: old, new: new)))
            }
        }
        if hello.clock.milliseconds > replica.currentClock.milliseconds + replica.hlc.maximumDrift
            && hello.clock.milliseconds > replica.now.millisecondsSince1970 + replica.hlc.maximumDrift {
            actions.append(.event(.clockSkew(peerMilliseconds: hello.clock.milliseconds, localMilliseconds: replica.now.millisecondsSince1970)))
        }
        // A name that breaks the naming rules is the peer's problem, not a reason to refuse it.
        if let name = hello.name { try? replica.recordPeerName(name, for: hello.nodeID) }
        stage = .open(OpenSession(peer: hello, own: try ownHistory(), incomingTransfers: incomingTransfers))
        if relayHold.hold > 0, hello.capabilities.contains(.holds) { open?.relaysFrom = now + relayHold.hold }
        open?.unbackedClaim = unbackedClaim
        open?.incarnationAtHello = me.incarnation
        actions.append(.event(.handshake(peer: hello, version: version)))
        // With both HELLOs setting bit 4, nothing is sent until the histories are compared (§7.2.3).
        if try beginHistoryExchange(now: now, actions: &actions) { return }
        // One batch now and the rest of the window one per tick, due at once (`windowUnfilled`):
        // the peer starts storing the first while we read the next, instead of waiting for the
        // whole window (100 ms of a cold 8,000-entry read on a watch).
        pump(now: now, actions: &actions, limit: 1)
        offerNext(now: now, actions: &actions)
    }
}
