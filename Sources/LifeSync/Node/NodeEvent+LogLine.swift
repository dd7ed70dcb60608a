
extension NodeEvent {
    /// The event as the one log line `lifesync serve` prints for it (and the simulator traces).
    /// Pure formatting, kept beside the type so every shell says the same.
    ///
    /// ```swift
    /// NodeEvent.inSync(with: "mac_7c9e…", sent: 3, received: 0).logLine   // "in sync with mac_7c9e… (sent 3, received 0)"
    /// ```
    public var logLine: String { logLine(naming: { $0 }) }

    /// The log line with each peer's node ID as `name` shows it (`lifesync serve`: the device's
    /// name and its short ID, `"Kitchen iPad" (phone_ce2c2334)`). IDs a person must type in full
    /// (`trust --accept`) stay whole.
    public func logLine(naming name: (String) -> String) -> String {
        switch self {
        case .starting(let nodeID, let role):
            return "node \(nodeID) (\(role.rawValue)) starting"
        case .accepted(let remote):
            return "accepted connection from \(remote)"
        case .dialled(let address):
            return "connected to \(address)"
        case .unreachable(let address, let reason, let retryIn):
            return "cannot reach \(address): \(reason); retrying in \(Double(retryIn) / 1000) s"
        case .peerConnected(let peer, let role, let address, let inbound):
            return "peer \(name(peer)) (\(role.rawValue), \(address), \(inbound ? "inbound" : "outbound")) connected"
        case .disconnected(let peer, let address):
            return "disconnected from \(name(peer)) (\(address))"
        case .closing(let peer, let reason):
            return "closing connection to \(name(peer)): \(reason)"
        case .fallbackTimerFired:
            return "fallback timer: retrying pending sync"
        case .shuttingDown:
            return "shutting down"
        case .received(let from, let changes, let applied, let conflicts):
            return "received \(changes) change(s) from \(name(from)): \(applied) applied" + (conflicts > 0 ? ", \(conflicts) conflict(s) resolved" : "")
        case .acknowledged(let by, let changes):
            return "\(name(by)) acknowledged \(changes) change(s)"
        case .inSync(let with, let sent, let received):
            return "in sync with \(name(with)) (sent \(sent), received \(received))"
        case .incarnationRotated(let old, let new):
            return "this replica was restored from an older copy: continuing under incarnation \(new) (was \(old))"
        case .historyRepaired(let peer, let repair):
            return "this replica was restored with its write mark: \(name(peer)) holds other writes of incarnation \(repair.origin) above \(repair.fork); "
                + "\(repair.reissued.count) write(s) made here since moved to the current incarnation, and \(name(peer))'s come back"
        case .incarnationClaimIgnored(let peer, let claimed, let held):
            return "warning: \(name(peer)) says it holds \(claimed) writes of this replica's current incarnation, which made \(held); "
                + "its last such claim never delivered the writes it named, so this one is not believed (a bug on \(name(peer))?)"
        case .clockSkew(let peer, let ahead):
            return "warning: \(name(peer))'s clock is \(ahead) s ahead of ours"
        case .peerError(let peer, let code, let message):
            return "peer \(name(peer)) reported error \(code): \(message)"
        case .untrustedPeer(let address, let fingerprint, let claimed):
            return "refused \(address): its key \(fingerprint.hex.prefix(16))… is not trusted"
                + (claimed.map { " (it says it is \($0); if its code in lifesync peers is the one that device shows: lifesync trust --accept \($0) --code CODE)" } ?? "")
        case .trustWithdrawn(let peer):
            return "closing the connection to \(name(peer)): no longer trusted"
        case .discovered(let peer, let address, let trusted):
            return trusted ? "discovered trusted peer \(name(peer)) at \(address) on the local network"
                : "discovered \(name(peer)) at \(address) on the local network: not trusted, not dialled (see lifesync peers)"
        case .discoveryRefused(let from, let reason):
            return "refused a discovery packet from \(from): \(reason)"
        case .protocolError(let peer, let error):
            return "protocol error with \(name(peer)): \(error)"
        case .damagedRowsSkipped(let ids):
            return "replica damaged: \(ids.count) row(s) do not read back and are not sent (\(ids.prefix(5).joined(separator: ", "))"
                + (ids.count > 5 ? ", …" : "") + "); the rest keeps flowing"
        case .unsealedRowsSkipped(let ids):
            return "\(ids.count) write(s) of other nodes, received before writes were sealed, are not relayed (\(ids.prefix(5).joined(separator: ", "))"
                + (ids.count > 5 ? ", …" : "") + "): their own nodes send them"
        case .transferProgress(let recording, let peer, let sending, let done, let total, let rate):
            let percent = total > 0 ? Int(done * 100 / total) : 100
            return "\(sending ? "sending" : "receiving") \(recording) \(sending ? "to" : "from") \(name(peer)): "
                + "\(percent)% (\(done / 1_048_576) of \(total / 1_048_576) MiB, \(Int(rate)) MiB/s)"
        case .recordingConfirmed(let recording, let by):
            return "\(name(by)) confirmed \(recording) by checksum"
        case .recordingClaimedByPeer(let recording, let by):
            return "\(name(by)) says it holds \(recording) already; not offered again this session (no bytes went, so no confirmation is recorded)"
        case .recordingReceived(let recording, let size, let from):
            return "received \(recording) (\(size) bytes) from \(name(from)), checksum verified"
        case .recordingResumed(let recording, let offset):
            return "resuming \(recording) from byte \(offset) (\(offset / 1_048_576) MiB already verified)"
        case .watchCopyRemoved(let recording):
            return "removed the watch copy of \(recording): the phone confirmed it"
        case .transferFailed(let recording, let peer, let sending, let reason):
            return "transfer of \(recording) \(sending ? "to" : "from") \(name(peer)) failed: \(reason); it stays pending"
        }
    }
}
