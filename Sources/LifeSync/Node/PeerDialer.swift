/// The dialling side of one configured peer: connect on start, reconnect with capped
/// exponential backoff and jitter, never two attempts at once.
struct PeerDialer {
    enum State: Equatable {
        case idle
        case connecting
        case connected(connection: Int)
        case waiting(until: Int64)
        /// The peer is connected through a connection it dialled to us: no need to dial it.
        case covered
    }

    let address: String
    var state: State = .idle
    var failures = 0
    /// The node at this address, once a handshake told us.
    var nodeID: String?
    /// Whether the peer asked for entries in its last HELLO (a watch does not, by default).
    var receivesEntries: Bool?

    init(address: String) { self.address = address }

    /// The delay before the next attempt after `failures` failures in a row.
    static func backoff(failures: Int, base: Int64, maximum: Int64, random: RandomSource) -> Int64 {
        let exponent = min(failures, 20)
        let raw = min(maximum, base << Int64(exponent))
        let jitter = 0.8 + 0.4 * random.nextUnit()
        return max(1, Int64(Double(raw) * jitter))
    }
}
