import LifeSync
import LifeSyncRuntime

/// The dialling side of one connection as a node makes it, cut down to what the handshake bench
/// times: TCP connect to 127.0.0.1, the TLS 1.3 handshake with both certificates (`TLSDialer`),
/// our HELLO out, the node's HELLO in, close. Every wait is bounded: a bench must end even when
/// the node under test does not answer.
struct HandshakeClient {
    let tls: TLSContext
    let hello: [UInt8]
    let address: SocketAddress

    /// A client proving `key` and saying it is `identity` (which the node must trust); its HELLO
    /// asks for nothing, so the cycle times the handshake alone.
    init(key: NodeKey, identity: ReplicaIdentity, port: UInt16) throws {
        tls = try TLSContext(key: key)
        hello = TLSDialer.introduction(of: identity)
        address = try SocketAddress(parsing: "127.0.0.1:\(port)")
    }

    /// One cycle; returns the node's HELLO. Throws if any step fails or takes over `timeout` s.
    func cycle(timeout: Double = 5) throws -> Hello {
        let dialer = try TLSDialer(to: address, context: tls, timeout: timeout)
        defer { dialer.close() }
        try dialer.send(hello)
        switch try dialer.nextMessage() {
        case .hello(let hello)?: return hello
        case let other?: throw TLSDialer.Failure(description: "the node answered \(other) instead of its HELLO")
        case nil: throw TLSDialer.Failure(description: "the node closed before its HELLO")
        }
    }
}
