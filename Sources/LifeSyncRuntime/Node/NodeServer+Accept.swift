import Glibc
import LifeSync

/// Taking connections in, within the caps (the accept loop and its back-off are `Listener`'s).
extension NodeServer {
    /// Accepts what is pending (`Listener`), closing at once any connection over a cap.
    func acceptAll(now: Int64) {
        listener?.acceptAll(now: now) { fd, remote, host in
            if let reason = admission(host: host, now: now) {
                close(fd)
                noteRefusal(remote: remote, reason: reason, now: now)
                return
            }
            guard let stream = try? tls.stream(fd: fd, dialing: false) else {
                close(fd)
                noteRefusal(remote: remote, reason: "no TLS connection could be set up", now: now)
                return
            }
            // The core hears of it once the TLS handshake is done (`stepHandshake`).
            let connection = PeerConnection(stream: stream, id: nextConnectionID, remote: remote, acceptedFrom: host)
            nextConnectionID += 1
            connection.handshake = (nil, TLSOpening(sniffing: .plainHello, now: now, timeout: limits.preAuthenticationTimeout))
            connection.openedAt = now
            connections[connection.id] = connection
        }
    }

    /// Makes room for a new connection from `host` if a cap is reached, or says why it must be
    /// refused. Room is made only at the expense of accepted connections not yet proven
    /// (`PeerConnection.proven`): the oldest of the host's own when it has as many as the cap
    /// per address, else the oldest of the host holding the most. A newcomer has had no chance
    /// yet; an unproven connection has had its chance, and a paired device proves itself in
    /// milliseconds. Proven connections do not count against the cap per address: several
    /// paired nodes on one machine (or behind one router) each keep theirs, and one node
    /// keeps one connection (`NodeCore.duplicateConnection`).
    func admission(host: String, now: Int64) -> String? {
        func unproven(from host: String?) -> [PeerConnection] {
            connections.values.filter { !$0.proven && $0.acceptedFrom != nil && (host == nil || $0.acceptedFrom == host) }
        }
        let waitingFromHost = unproven(from: host)
        if waitingFromHost.count >= limits.maximumConnectionsPerAddress,
           let oldest = waitingFromHost.min(by: { ($0.openedAt, $0.id) < ($1.openedAt, $1.id) }) {
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

    /// Counts a refused connection; the listener logs it (`Listener.noteRefusal`).
    func noteRefusal(remote: String, reason: String, now: Int64) {
        stats.refusedConnections += 1
        listener?.noteRefusal(remote, reason: reason, now: now)
    }
}
