import Glibc
import LifeSync

/// A TLS connection from its TCP connection to its finished handshake, one machine for both
/// servers (`NodeServer`, `HTTPServer`). An accepted connection's first bytes are looked at
/// first: plaintext where TLS is due (a URL without its s, a node of an older build) is told
/// why in the clear and closed, instead of a connection closed without a word. Then the
/// handshake is stepped as far as the socket allows, until it is done, fails, or its deadline
/// passes. What plaintext a server answers, and what follows the handshake, are its own.
struct TLSOpening {
    /// Plaintext found in a connection's first bytes, and what it is told before the close.
    struct Plaintext: Sendable {
        /// Sent in the clear.
        var answer: [UInt8]
        /// Why the connection was closed, for the server's log.
        var reason: String
        /// The request is taken off the socket before the answer, and the answer ends the
        /// writing side: closing with it unread would reset the connection, and a client that
        /// reads until the close would see that instead of the answer.
        var readsRequestFirst = false
    }

    /// How a server looks at an accepted connection's first `count` bytes, peeked (nothing is
    /// consumed): `classify` gets them all and returns the plaintext it recognises, or nil for
    /// TLS (a ClientHello passes, anything else fails in the handshake). Fewer bytes, a closed
    /// connection or a socket error go to TLS too.
    struct Sniff: Sendable {
        let count: Int
        let classify: @Sendable ([UInt8]) -> Plaintext?
    }

    private enum State {
        /// Accepted, and nothing has arrived yet.
        case sniffing(Sniff)
        case handshaking
        /// Done or failed: stepped no more.
        case finished
    }

    /// What a step came to.
    enum Step {
        /// Waiting for the socket (`interest`).
        case waiting
        /// The handshake is done: the key the peer proved it holds, nil when no certificate
        /// was asked of it (an HTTPS client).
        case done(SHA256.Digest?)
        /// Failed, past its deadline, or plaintext answered: why. The connection is the
        /// server's to close.
        case failed(String)
    }

    private var state: State
    /// When it is dropped if not done, `timeout` after it was opened.
    let deadline: Int64
    let timeout: Int64

    /// A connection opened at `now`; `sniff` nil for our own dials, which start with the
    /// handshake.
    init(sniffing sniff: Sniff?, now: Int64, timeout: Int64) {
        state = sniff.map { .sniffing($0) } ?? .handshaking
        deadline = now + timeout
        self.timeout = timeout
    }

    /// What to poll `stream` for meanwhile.
    func interest(_ stream: TLSStream) -> PollLoop.Interest {
        PollLoop.Interest(fd: stream.fd, events: Int16(POLLIN) | (stream.wantsWritable ? Int16(POLLOUT) : 0))
    }

    /// Takes the opening as far as `stream`'s socket allows. While nothing has arrived it
    /// stays `waiting`, so poll never spins on bytes left unread.
    mutating func step(_ stream: TLSStream, now: Int64) -> Step {
        if case .sniffing(let sniff) = state {
            guard let first = Socket.peek(stream.fd, count: sniff.count) else {
                return now > deadline ? finish(.failed("nothing was sent within \(timeout) ms")) : .waiting
            }
            if first.count == sniff.count, let plaintext = sniff.classify(first) {
                Self.answer(plaintext, on: stream.fd)
                return finish(.failed(plaintext.reason))
            }
            state = .handshaking
        }
        guard case .handshaking = state else { preconditionFailure("a TLS opening stepped after it finished") }
        switch stream.handshake() {
        case .done(let key): return finish(.done(key))
        case .established: return finish(.done(nil))
        case .inProgress: return now > deadline ? finish(.failed("TLS handshake not done within \(timeout) ms")) : .waiting
        case .failed(let reason): return finish(.failed(reason))
        }
    }

    private mutating func finish(_ step: Step) -> Step {
        state = .finished
        return step
    }

    /// Sends the answer if the socket takes it now (never waits).
    private static func answer(_ plaintext: Plaintext, on fd: Int32) {
        if plaintext.readsRequestFirst {
            var request = [UInt8](repeating: 0, count: 16 * 1024)
            _ = recv(fd, &request, request.count, Int32(MSG_DONTWAIT))
        }
        _ = plaintext.answer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if plaintext.readsRequestFirst { shutdown(fd, Int32(SHUT_WR)) }
    }
}
