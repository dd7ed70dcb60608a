/// Where a trusted node is dialled, by where each address came from (schema 16):
///
/// | Source | Kept | Dropped |
/// |---|---|---|
/// | given: the pairing string, `pair`, `trust` | all (at most `PairingString.maximumAddresses`) | only by trusting the node again |
/// | verified: a handshake with the pinned key completed there | the `verifiedLimit` latest | by newer verified ones only |
/// | heard: announced on the LAN with the node's ID and pinned key | the `heardLimit` latest | by newer heard ones |
///
/// An announcement proves nothing (its ID and fingerprint are public, anyone can send it), so
/// what is heard can never push out what the user gave or what a handshake proved: a flood of
/// forged announcements costs at most a failed dial each, in turn with the real addresses.
/// The dial order (`trusted_peers.addresses`, `TrustedPeer.addresses`) is the latest heard first
/// — a node that moved is found at once — then the verified, then the given, then the rest.
extension Replica {
    /// Heard addresses kept per node.
    public static let heardLimit = 2
    /// Verified addresses kept per node.
    public static let verifiedLimit = 4

    /// A trusted peer was heard announcing itself at `address`: first in its dial order. Only
    /// while `nodeID` is still trusted with `fingerprint`; false when nothing changed.
    @discardableResult
    package func putDiscoveredAddressFirst(nodeID: String, fingerprint: SHA256.Digest, address: String) throws -> Bool {
        try remember(address, as: "heard_addresses", limit: Self.heardLimit, nodeID: nodeID, fingerprint: fingerprint)
    }

    /// Our dial of `nodeID` at `address` completed a handshake with its pinned `fingerprint`: an
    /// address that reaches it, kept against anything heard. False when nothing changed.
    @discardableResult
    package func noteVerifiedAddress(nodeID: String, fingerprint: SHA256.Digest, address: String) throws -> Bool {
        try remember(address, as: "verified_addresses", limit: Self.verifiedLimit, nodeID: nodeID, fingerprint: fingerprint)
    }

    /// Puts `address` first in the list `column` (keeping `limit`) and remakes the dial order.
    private func remember(_ address: String, as column: String, limit: Int, nodeID: String, fingerprint: SHA256.Digest) throws -> Bool {
        precondition(PairingString.isAddress(address), "an address is a host:port")
        return try database.transaction {
            guard let list = try database.firstRow("SELECT \(column) FROM trusted_peers WHERE node_id = ? AND fingerprint = ?",
                                                   [.text(nodeID), .text(fingerprint.hex)], { Self.addressList($0.string(0)) }),
                  list.first != address else { return false }
            let updated = [address] + list.filter { $0 != address }.prefix(limit - 1)
            try database.run("UPDATE trusted_peers SET \(column) = ? WHERE node_id = ?", [.text(updated.joined(separator: " ")), .text(nodeID)])
            try updateDialOrder(nodeID: nodeID)
            return true
        }
    }

    /// Remakes `addresses` of `nodeID` from its three lists (inside the caller's transaction).
    func updateDialOrder(nodeID: String) throws {
        guard let (given, verified, heard) = try database.firstRow(
            "SELECT given_addresses, verified_addresses, heard_addresses FROM trusted_peers WHERE node_id = ?", [.text(nodeID)], {
                (Self.addressList($0.string(0)), Self.addressList($0.string(1)), Self.addressList($0.string(2)))
            }) else { return }
        var order: [String] = []
        for address in heard.prefix(1) + verified + given + heard.dropFirst() where !order.contains(address) { order.append(address) }
        try database.run("UPDATE trusted_peers SET addresses = ? WHERE node_id = ?", [.text(order.joined(separator: " ")), .text(nodeID)])
    }

    private static func addressList(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }
}
