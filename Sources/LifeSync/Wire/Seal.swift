/// An origin's signature over a set of its writes (PROTOCOL.md §5.2.5): what lets every replica
/// a write reaches, through any number of relays, check that the node owning the write's origin
/// made it. A relay can forward a seal, and it can leave writes out, but it cannot add a write
/// to a seal, change one, or make a seal in another node's name.
///
/// One signature covers a whole batch of an origin's writes: the origin seals what it sends, at
/// the time it sends it, so a bulk sync checks one signature per origin and batch, not one per
/// entry. Each member is a write's sequence and its digest (`WriteDigest`), ascending.
///
/// Here is what a seal is and the bytes it signs, which BATCH and HISTORY carry; making one and
/// checking its signature are Trust's (`Seal+Signing.swift`).
///
/// ```swift
/// let seal = try Seal(origin: incarnation, nodeID: nodeID, members: members, signer: key)
/// seal.hasValidSignature(verifier)          // the carried key's signature over these members
/// seal.vouches(for: 42, digest: digest)     // write 42 of the origin is this one
/// ```
package struct Seal: Equatable, Sendable {
    /// The incarnation whose writes this seal vouches for.
    package var origin: String
    /// The node that owns `origin` and made the seal.
    package var nodeID: String
    /// The node's key (DER SubjectPublicKeyInfo, P-256, 91 bytes), whose SHA-256 is its fingerprint.
    package var publicKey: [UInt8]
    /// The writes vouched for, strictly ascending by sequence.
    package var members: [Member]
    /// ECDSA P-256 over `message`, r ‖ s (64 bytes).
    package var signature: [UInt8]

    package struct Member: Equatable, Sendable {
        package var sequence: UInt64
        package var digest: SHA256.Digest

        package init(sequence: UInt64, digest: SHA256.Digest) {
            self.sequence = sequence
            self.digest = digest
        }
    }

    /// Separates these signatures from the node key's other uses (TLS, recording metadata).
    static let domain = Array("lifesync-seal-v2".utf8) + [0]

    package init(origin: String, nodeID: String, publicKey: [UInt8], members: [Member], signature: [UInt8]) {
        self.origin = origin
        self.nodeID = nodeID
        self.publicKey = publicKey
        self.members = members
        self.signature = signature
    }

    /// The signed bytes: the domain, the node ID and the origin as `str16`, the member count as
    /// u32, then each member's sequence (u64) and digest (32 bytes).
    package var message: [UInt8] {
        var writer = ByteWriter(capacity: Self.domain.count + 96 + members.count * 40)
        writer.raw(Self.domain)
        writer.string(nodeID)
        writer.string(origin)
        writer.u32(UInt32(members.count))
        Seal.write(members, to: &writer)
        return writer.bytes
    }

    static func write(_ members: [Member], to writer: inout ByteWriter) {
        for member in members {
            writer.u64(member.sequence)
            writer.digest(member.digest)
        }
    }

    /// Whether this seal names write `sequence` of its origin with exactly this digest.
    package func vouches(for sequence: UInt64, digest: SHA256.Digest) -> Bool {
        var low = 0, high = members.count
        while low < high {
            let middle = (low + high) / 2
            if members[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        return low < members.count && members[low].sequence == sequence && members[low].digest == digest
    }

    /// The members as stored and sent: each sequence (u64) and digest, concatenated.
    package var encodedMembers: [UInt8] {
        var writer = ByteWriter(capacity: members.count * 40)
        Seal.write(members, to: &writer)
        return writer.bytes
    }

    /// The member with the greatest sequence at or below `sequence` among members in their
    /// stored form, found by halving without reading the others (a seal vouches for a batch of
    /// writes, and a HISTORY looks up one or two of them per probe). Nil if there is none, or
    /// the bytes are not whole members.
    package static func member(atMost sequence: UInt64, in bytes: UnsafeRawBufferPointer) -> Member? {
        guard bytes.count % 40 == 0 else { return nil }
        func number(at index: Int) -> UInt64 { (0..<8).reduce(0) { $0 << 8 | UInt64(bytes[index * 40 + $1]) } }
        var low = 0, high = bytes.count / 40  // ends at the first member above `sequence`
        while low < high {
            let middle = (low + high) / 2
            if number(at: middle) <= sequence { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let start = (low - 1) * 40 + 8
        return Member(sequence: number(at: low - 1), digest: SHA256.Digest(bytes: bytes[start..<(start + 32)]))
    }

    /// Members from their stored form; nil if the bytes are not whole members.
    static func members(from bytes: [UInt8]) -> [Member]? {
        guard bytes.count % 40 == 0 else { return nil }
        var reader = ByteReader(bytes[...])
        var members: [Member] = []
        members.reserveCapacity(bytes.count / 40)
        for _ in 0..<(bytes.count / 40) {
            guard let sequence = try? reader.u64("seq"), let digest = try? reader.digest("digest") else { return nil }
            members.append(Member(sequence: sequence, digest: digest))
        }
        return members
    }
}
