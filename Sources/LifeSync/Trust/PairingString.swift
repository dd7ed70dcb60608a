/// What one node gives another to be trusted, in one copy-pasteable token: its node ID, the
/// fingerprint of its key, and where it listens.
///
///     lifesync://phone_0f8fad5b-d9cb-469f-a165-70867728950e?key=9f86d0…0a08&addr=192.168.1.20:7002
///
/// `key` is the 64 lowercase hex digits of the fingerprint (PROTOCOL.md §1.1); `addr` appears
/// 0–8 times, each `host:port` (a name, an IPv4 address or a bracketed IPv6 address). Parsing
/// is strict: anything else, or anything repeated, is refused by name, so a truncated or edited
/// string never pairs with the wrong key.
package struct PairingString: Equatable, Sendable, CustomStringConvertible {
    package static let scheme = "lifesync://"
    package static let maximumAddresses = 8
    package static let maximumLength = 1_024

    package var nodeID: String
    package var fingerprint: SHA256.Digest
    package var addresses: [String]

    package init(nodeID: String, fingerprint: SHA256.Digest, addresses: [String]) {
        precondition(Identifier.isValid(nodeID), "a pairing string names a valid node ID")
        precondition(addresses.count <= Self.maximumAddresses && addresses.allSatisfy(Self.isAddress), "addresses are host:port, 8 at most")
        self.nodeID = nodeID
        self.fingerprint = fingerprint
        self.addresses = addresses
    }

    package var role: Role { Identifier.role(of: nodeID)! }

    package var description: String {
        Self.scheme + nodeID + "?key=" + fingerprint.hex + addresses.map { "&addr=" + $0 }.joined()
    }

    /// The peer to trust, as of `trustedAt`.
    package func peer(trustedAt: Timestamp) -> TrustedPeer {
        TrustedPeer(nodeID: nodeID, role: role, fingerprint: fingerprint, addresses: addresses, trustedAt: trustedAt)
    }

    package init(parsing text: String) throws {
        func refuse(_ reason: String) -> ValidationError { ValidationError(field: "pairing string", reason: reason) }
        let text = text.trimmingSpaces
        guard text.utf8.count <= Self.maximumLength else { throw refuse("longer than \(Self.maximumLength) bytes") }
        guard text.hasPrefix(Self.scheme) else { throw refuse("does not start with \(Self.scheme)") }
        let rest = text.dropFirst(Self.scheme.count)
        guard let question = rest.firstIndex(of: "?") else { throw refuse("has no ?key=") }
        let nodeID = String(rest[..<question])
        guard Identifier.isValid(nodeID) else { throw refuse("'\(nodeID.prefix(64))' is not a node ID ({role}_{uuid-v4})") }
        var key: SHA256.Digest?
        var addresses: [String] = []
        for parameter in rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false) {
            guard let equals = parameter.firstIndex(of: "=") else { throw refuse("'\(parameter.prefix(32))' is not name=value") }
            let name = parameter[..<equals], value = String(parameter[parameter.index(after: equals)...])
            switch name {
            case "key":
                guard key == nil else { throw refuse("names key twice") }
                guard value.utf8.count == 64, value.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
                      let digest = SHA256.Digest(hex: value) else { throw refuse("key is not 64 lowercase hex digits") }
                key = digest
            case "addr":
                guard Self.isAddress(value) else { throw refuse("'\(value.prefix(64))' is not host:port") }
                guard !addresses.contains(value) else { throw refuse("names \(value) twice") }
                guard addresses.count < Self.maximumAddresses else { throw refuse("has more than \(Self.maximumAddresses) addresses") }
                addresses.append(value)
            default:
                throw refuse("has an unknown part '\(name.prefix(32))'")
            }
        }
        guard let key else { throw refuse("has no key") }
        self.init(nodeID: nodeID, fingerprint: key, addresses: addresses)
    }

    /// `host:port`: a DNS name or IPv4 address (letters, digits, '.', '-'; at most 253 bytes) or
    /// an IPv6 address in brackets, and a port 1–65535.
    package static func isAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else { return false }
        let host = text[..<colon]
        if host.hasPrefix("[") {
            let inner = host.dropFirst().dropLast()
            return host.hasSuffix("]") && !inner.isEmpty && inner.utf8.count <= 45
                && inner.utf8.allSatisfy { $0 == 0x3A || $0 == 0x2E || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
        }
        return !host.isEmpty && host.utf8.count <= 253
            && host.utf8.allSatisfy { $0 == 0x2E || $0 == 0x2D || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) }
    }
}
