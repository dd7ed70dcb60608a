/// A node this replica trusts: its node ID bound to the fingerprint of its key (the SHA-256 of
/// its public key, PROTOCOL.md §1.1), and where it can be reached. A connection is that node
/// only when the peer proved it holds that key and its HELLO names that node ID.
package struct TrustedPeer: Equatable, Sendable {
    package var nodeID: String
    package var role: Role
    package var fingerprint: SHA256.Digest
    /// `host:port` dial targets in dial order: as given when trusting (at most
    /// `PairingString.maximumAddresses`); as stored, with those verified and heard (Replica+DialAddresses).
    package var addresses: [String]
    package var trustedAt: Timestamp

    package init(nodeID: String, role: Role, fingerprint: SHA256.Digest, addresses: [String] = [], trustedAt: Timestamp) {
        self.nodeID = nodeID
        self.role = role
        self.fingerprint = fingerprint
        self.addresses = addresses
        self.trustedAt = trustedAt
    }
}

/// A key that connected (or answered our dial) without being trusted: shown to the user, who may
/// accept it. What it claimed (node ID, role) is unproven until then; the list is bounded
/// (Replica+Pending), the least recently seen dropped first.
package struct PendingPeer: Equatable, Sendable {
    package var fingerprint: SHA256.Digest
    /// The node ID its HELLO named, if it sent one.
    package var claimedNodeID: String?
    package var claimedRole: Role?
    package var address: String
    package var firstSeen: Timestamp
    package var lastSeen: Timestamp
    package var attempts: Int
    /// Pairing codes typed for its claim that matched no key claiming it (`noteWrongCode`).
    package var wrongCodes: Int

    package init(fingerprint: SHA256.Digest, claimedNodeID: String?, claimedRole: Role?, address: String,
                firstSeen: Timestamp, lastSeen: Timestamp, attempts: Int, wrongCodes: Int = 0) {
        self.wrongCodes = wrongCodes
        self.fingerprint = fingerprint
        self.claimedNodeID = claimedNodeID
        self.claimedRole = claimedRole
        self.address = address
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.attempts = attempts
    }
}

/// A node heard announcing itself on the local network (PROTOCOL.md §1.3) that this replica does
/// not trust: listed for the user, never dialled. What it announced is unproven; the list is
/// bounded (`Replica.discoveredLimit`), the least recently heard dropped first.
package struct DiscoveredPeer: Equatable, Sendable {
    package var nodeID: String
    package var role: Role
    package var fingerprint: SHA256.Digest
    /// `host:port`: the datagram's source and the announced port.
    package var address: String
    package var firstSeen: Timestamp
    package var lastSeen: Timestamp

    package init(nodeID: String, role: Role, fingerprint: SHA256.Digest, address: String, firstSeen: Timestamp, lastSeen: Timestamp) {
        self.nodeID = nodeID
        self.role = role
        self.fingerprint = fingerprint
        self.address = address
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }

    /// The pairing string the announcement amounts to: for the user to check against `lifesync id`
    /// on that device before trusting it (a broadcast can claim anything).
    package var pairing: PairingString { PairingString(nodeID: nodeID, fingerprint: fingerprint, addresses: [address]) }
}
