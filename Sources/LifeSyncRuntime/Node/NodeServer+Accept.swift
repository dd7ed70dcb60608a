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
                if let reason = refusal(host: host) {
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
                connection.handshake = (nil, now + limits.handshakeTimeout)
                connections[connection.id] = connection
            }
        }
    }

    static let transientAcceptErrors: Set<Int32> = [EINTR, ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN,
                                                             ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH, ETIMEDOUT]

    /// Why a new connection from `host` must be refused, or nil.
    func refusal(host: String) -> String? {
        if connections.count >= connectionCap {
            return "\(connections.count) connections open, the limit is \(connectionCap)"
        }
        let fromHost = connections.values.reduce(0) { $0 + ($1.acceptedFrom == host ? 1 : 0) }
        if fromHost >= limits.maximumConnectionsPerAddress {
            return "\(fromHost) connections from \(host) open, the limit per address is \(limits.maximumConnectionsPerAddress)"
        }
        return nil
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
