import Glibc
import LifeSync

/// The TLS handshake of each connection, before the core knows of it (`TLSOpening`).
extension NodeServer {
    /// Takes a connection's handshake as far as the socket allows. Once it is done the core hears
    /// of the connection (our dial connected, or one accepted); before, nothing of it reaches the
    /// core and no frame leaves. A failure, or a handshake past its deadline, drops it: a dial
    /// counts as failed, an accepted connection as refused (logged at a bounded rate).
    func stepHandshake(_ connection: PeerConnection, now: Int64) {
        guard var handshake = connection.handshake else { return }
        let step = handshake.opening.step(connection.stream, now: now)
        connection.handshake = handshake
        switch step {
        case .waiting:
            return
        case .failed(let reason):
            failHandshake(connection, reason: reason, now: now)
        case .done(let key):
            guard let key else { preconditionFailure("a peer context asks for the peer's certificate") }
            connection.handshake = nil
            connection.peerKey = key
            connection.proven = handshake.dialled != nil || ((try? core.replica.trustedPeer(fingerprint: key)) ?? nil) != nil
            if let peer = handshake.dialled {
                execute(core.connected(connection: connection.id, peer: peer, peerKey: key, now: now))
            } else {
                execute(core.accepted(connection: connection.id, remote: connection.remote, peerKey: key, now: now))
            }
        }
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

extension TLSOpening.Sniff {
    /// A node that sends frames in the clear (older builds did) is told why, in its own framing.
    /// Its HELLO is recognised by its first nine bytes (length, type 0x01, "LSYN" in one
    /// segment, as every version-1 node writes it).
    static let plainHello = TLSOpening.Sniff(count: 9) { first in
        guard first[4] == MessageType.hello.rawValue && Array(first[5..<9]) == Hello.magic else { return nil }
        let error = Message.error(code: ErrorCode.versionUnsupported.rawValue,
                                  message: "this node speaks LifeSync over TLS 1.3 only; frames over plain TCP are refused").encoded()
        return TLSOpening.Plaintext(answer: error, reason: "a HELLO over plain TCP: answered version_unsupported")
    }
}
