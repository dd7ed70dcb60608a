import Glibc
import LifeSync

/// The TLS handshake of each connection, before the core knows of it.
extension NodeServer {
    /// Takes a connection's handshake as far as the socket allows. Once it is done the core hears
    /// of the connection (our dial connected, or one accepted); before, nothing of it reaches the
    /// core and no frame leaves. A failure, or a handshake past its deadline, drops it: a dial
    /// counts as failed, an accepted connection as refused (logged at a bounded rate).
    func stepHandshake(_ connection: PeerConnection, now: Int64) {
        guard let handshake = connection.handshake else { return }
        if handshake.dialled == nil && !connection.sniffed {
            switch sniff(connection) {
            case .tls: connection.sniffed = true
            case .waiting:
                if now > handshake.deadline { failHandshake(connection, reason: "nothing was sent within \(limits.preAuthenticationTimeout) ms", now: now) }
                return
            case .plainHello:
                // A node that sends frames in the clear (older builds did): tell it why, in its own framing.
                let error = Message.error(code: ErrorCode.versionUnsupported.rawValue,
                                          message: "this node speaks LifeSync over TLS 1.3 only; frames over plain TCP are refused").encoded()
                _ = error.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                failHandshake(connection, reason: "a HELLO over plain TCP: answered version_unsupported", now: now)
                return
            }
        }
        switch connection.stream.handshake() {
        case .done(let key):
            connection.handshake = nil
            connection.peerKey = key
            connection.proven = handshake.dialled != nil || ((try? core.replica.trustedPeer(fingerprint: key)) ?? nil) != nil
            if let peer = handshake.dialled {
                execute(core.connected(connection: connection.id, peer: peer, peerKey: key, now: now))
            } else {
                execute(core.accepted(connection: connection.id, remote: connection.remote, peerKey: key, now: now))
            }
        case .established:
            preconditionFailure("a peer context asks for the peer's certificate")
        case .inProgress:
            if now > handshake.deadline {
                let budget = handshake.dialled == nil ? limits.preAuthenticationTimeout : limits.handshakeTimeout
                failHandshake(connection, reason: "TLS handshake not done within \(budget) ms", now: now)
            }
        case .failed(let reason):
            failHandshake(connection, reason: reason, now: now)
        }
    }

    enum Sniffed { case tls, plainHello, waiting }

    /// What an accepted connection opens with, peeked (nothing is consumed): a plain LifeSync
    /// HELLO (length, type 0x01, "LSYN" in one segment, as every version-1 node writes it), or
    /// anything else, which goes to TLS (a ClientHello passes, the rest fails there). `waiting`
    /// only while nothing has arrived, so poll never spins on bytes left unread.
    private func sniff(_ connection: PeerConnection) -> Sniffed {
        var first = [UInt8](repeating: 0, count: 9)
        let got = recv(connection.fd, &first, first.count, Int32(MSG_PEEK | MSG_DONTWAIT))
        if got < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .waiting : .tls }
        guard got == first.count else { return .tls }
        return first[4] == MessageType.hello.rawValue && Array(first[5..<9]) == Hello.magic ? .plainHello : .tls
    }

    private func failHandshake(_ connection: PeerConnection, reason: String, now: Int64) {
        precondition(connection.handshake != nil, "only a connection in its handshake fails one")
        stats.failedHandshakes += 1
        let dialled = connection.handshake?.dialled
        drop(connection)
        if let peer = dialled {
            execute(core.connectFailed(peer: peer, reason: reason, now: now))
        } else {
            noteRefusal(remote: connection.remote, reason: reason, now: now)
        }
    }
}
