/// The dialling side of one peer: connect on start, reconnect with capped exponential backoff and
/// jitter, never two attempts at once. A dialer is made for each configured `--peer` address and,
/// when the node dials trusted peers (`NodeConfiguration.dialTrustedPeers`), for each trusted node
/// with somewhere to reach it; it tries its addresses in turn, the next one after each failure.
struct PeerDialer {
    enum State: Equatable {
        case idle
        case connecting
        case connected(connection: Int)
        case waiting(until: Int64)
        /// The peer is connected through a connection it dialled to us: no need to dial it.
        case covered
    }

    /// The `--peer` address this dialer was configured with; nil for a trusted peer's dialer.
    let configured: String?
    /// Where to dial: the configured address first (then, once it is known to reach a trusted
    /// node, that node's addresses); for a trusted peer, what discovery heard first, then the
    /// trust store's addresses.
    private(set) var addresses: [String]
    /// The index in `addresses` of the next attempt.
    private(set) var next = 0
    var state: State = .idle
    var failures = 0
    /// The node at this address, once a handshake told us (a trusted peer's dialer: that peer).
    var nodeID: String?
    /// Whether the peer asked for entries in its last HELLO (a watch does not, by default).
    var receivesEntries: Bool?
    /// What the peer held when last seen (its last session's vector, or its saved row's): what
    /// is pending for it is judged by this while it is away.
    var peerVector = VersionVector()
    /// A trusted peer's dialer whose node is no longer trusted, or is reached by a configured
    /// dialer: it keeps its index (the driver knows it by that) but never dials.
    var retired = false

    init(address: String) {
        configured = address
        addresses = [address]
    }

    init(trusted nodeID: String, addresses: [String]) {
        configured = nil
        self.nodeID = nodeID
        self.addresses = addresses
    }

    /// Where the current (or next) attempt goes.
    var address: String { addresses.isEmpty ? configured ?? "" : addresses[next % addresses.count] }

    /// Replaces the addresses, keeping the next attempt on the same one if it is still there.
    mutating func setAddresses(_ new: [String]) {
        let current = address
        addresses = new
        next = new.firstIndex(of: current) ?? 0
    }

    /// The next attempt tries `address` (an address just heard), if it is one of ours.
    mutating func prefer(_ address: String) {
        if let index = addresses.firstIndex(of: address) { next = index }
    }

    /// After a failed attempt: the next address.
    mutating func advance() {
        next = addresses.isEmpty ? 0 : (next + 1) % addresses.count
    }

    /// The delay before the next attempt after `failures` failures in a row.
    static func backoff(failures: Int, base: Int64, maximum: Int64, random: RandomSource) -> Int64 {
        let exponent = min(failures, 20)
        let raw = min(maximum, base << Int64(exponent))
        let jitter = 0.8 + 0.4 * random.nextUnit()
        return max(1, Int64(Double(raw) * jitter))
    }
}
