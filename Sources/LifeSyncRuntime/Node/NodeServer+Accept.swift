import Glibc
import LifeSync

/// Taking connections in, within the caps, and backing off when accept lacks resources.
extension NodeServer {
    /// Accepts what is pending (at most 64 per round, so a flood does not starve the connections),
    /// closing at once any connection over a cap, and backing off when accept lacks resources.
    func acceptAll(now: Int64) {
        for _ in 0..<64 {
            switch acceptConnection(listener) {
            case .none:
                return
            case .failed(let code):
                // That one connection is gone (aborted, or a network error accept(2) passes on,
                // which Linux asks to treat like EAGAIN): go on with the next.
                if Self.transientAcceptErrors.contains(code) { continue }
                // EMFILE, ENFILE, ENOBUFS, ENOMEM, or anything unexpected: retrying at once
                // would fail again, and the listener stays readable. Back off.
                pauseListener(code, now: now)
                return
            case .accepted(let fd, let remote, let host):
                if acceptFailureStreak > 0 {
                    log("accepting connections again")
                    acceptFailureStreak = 0
                }
                if let reason = admission(host: host, now: now) {
                    close(fd)
                    noteRefusal(remote: remote, reason: reason, now: now)
                    continue
                }
                guard let stream = try? tls.stream(fd: fd, dialing: false) else {
                    close(fd)
                    noteRefusal(remote: remote, reason: "no TLS connection could be set up", now: now)
                    continue
                }
                // The core hears of it once the TLS handshake is done (`stepHandshake`).
                let connection = PeerConnection(stream: stream, id: nextConnectionID, remote: remote, acceptedFrom: host)
                nextConnectionID += 1
                connection.handshake = (nil, now + limits.preAuthenticationTimeout)
                connection.openedAt = now
                connections[connection.id] = connection
            }
        }
    }

    static let transientAcceptErrors: Set<Int32> = [EINTR, ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN,
                                                             ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH, ETIMEDOUT]

    /// Makes room for a new connection from `host` if a cap is reached, or says why it must be
    /// refused. Room is made only at the expense of accepted connections not yet proven
    /// (`PeerConnection.proven`): the oldest of the host's own when it is at its cap, else the
    /// oldest of the host holding the most. A newcomer has had no chance yet; an unproven
    /// connection has had its chance, and a paired device proves itself in milliseconds.
    func admission(host: String, now: Int64) -> String? {
        func unproven(from host: String?) -> [PeerConnection] {
            connections.values.filter { !$0.proven && $0.acceptedFrom != nil && (host == nil || $0.acceptedFrom == host) }
        }
        let fromHost = connections.values.reduce(0) { $0 + ($1.acceptedFrom == host ? 1 : 0) }
        if fromHost >= limits.maximumConnectionsPerAddress {
            guard let oldest = unproven(from: host).min(by: { ($0.openedAt, $0.id) < ($1.openedAt, $1.id) }) else {
                return "\(fromHost) connections from \(host) open, the limit per address is \(limits.maximumConnectionsPerAddress)"
            }
            giveWay(oldest, now: now)
        }
        let waiting = unproven(from: nil)
        if connections.count >= connectionCap || waiting.count >= limits.maximumUnproven {
            let byHost = Dictionary(grouping: waiting) { $0.acceptedFrom ?? "" }
            guard let crowded = byHost.max(by: { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) }),
                  let oldest = crowded.value.min(by: { ($0.openedAt, $0.id) < ($1.openedAt, $1.id) }) else {
                return "\(connections.count) connections open, the limit is \(connectionCap), every one proven (a paired peer's, or our own dial)"
            }
            giveWay(oldest, now: now)
        }
        return nil
    }

    /// When an accepted connection that is past its TLS handshake but not proven is dropped.
    func preAuthenticationExpiry(_ connection: PeerConnection) -> Int64? {
        guard !connection.proven, connection.acceptedFrom != nil, connection.handshake == nil else { return nil }
        return connection.openedAt + limits.preAuthenticationTimeout
    }

    /// Drops an unproven connection to make room (counted and logged as a refusal of it).
    private func giveWay(_ connection: PeerConnection, now: Int64) {
        let waited = now - connection.openedAt
        if connection.handshake != nil { drop(connection) } else { closeNow(connection, now: now) }
        noteRefusal(remote: connection.remote, reason: "made room for a newer connection: not proven a paired peer after \(waited) ms", now: now)
    }

    /// One log line per `refusalLogInterval` at most, counting those refused in between.
    func noteRefusal(remote: String, reason: String, now: Int64) {
        stats.refusedConnections += 1
        if let last = refusalLoggedAt, now - last < limits.refusalLogInterval {
            refusalsUnlogged += 1
            return
        }
        let since = refusalsUnlogged > 0 ? " (and \(refusalsUnlogged) more since the last such line)" : ""
        log("refused connection from \(remote): \(reason)\(since)")
        refusalLoggedAt = now
        refusalsUnlogged = 0
    }

    /// Leaves the listener out of the poll for the back-off; logs once per episode.
    func pauseListener(_ code: Int32, now: Int64) {
        let delay = min(limits.maximumAcceptBackoff, limits.acceptBackoff << Int64(min(acceptFailureStreak, 20)))
        acceptFailureStreak += 1
        stats.acceptFailures += 1
        listenerPausedUntil = now + max(1, delay)
        if acceptFailureStreak == 1 {
            log("cannot accept connections: \(errnoText(code)); pausing the listener \(delay) ms, backing off to \(limits.maximumAcceptBackoff) ms")
        }
    }
}
