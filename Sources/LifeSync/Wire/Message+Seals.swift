extension Message {
    /// The seal section of a BATCH (PROTOCOL.md §5.2.5), present when bytes follow `through`:
    /// a u16 count (1 … `Limits.maximumSealsPerBatch`), then per seal the origin's table index,
    /// the owning node's ID, its 91-byte key, the members (u32 count, each seq u64 and digest),
    /// and the 64-byte signature. Only the form is checked here; whose key signed what is the
    /// receiving replica's check (`Replica.checkSeals`).
    static func readSeals(_ r: inout ByteReader, table: [String]) throws(WireError) -> [Seal] {
        let count = try r.count16("seal count", minimumItemSize: Self.minimumSealSize)
        guard count >= 1 else { throw WireError(.malformed, "a seal section with no seals (leave the section out)") }
        guard count <= Limits.maximumSealsPerBatch else {
            throw WireError(.malformed, "\(count) seals exceed the batch maximum \(Limits.maximumSealsPerBatch)")
        }
        var seals: [Seal] = []
        seals.reserveCapacity(count)
        var totalMembers = 0
        for n in 0..<count {
            let index = Int(try r.u16("seal origin"))
            guard index < table.count else { throw WireError(.malformed, "seal \(n) origin index \(index) outside the table of \(table.count)") }
            let sealOrigin = table[index]
            let nodeID = try r.string("seal node_id")
            guard Identifier.role(of: nodeID) != nil else {
                throw WireError(.malformed, "seal \(n): node_id \"\(nodeID.prefix(80))\" is not {role}_{uuid-v4}")
            }
            let keyLength = Int(try r.u16("seal key length"))
            guard keyLength == Recording.originKeyLength else {
                throw WireError(.malformed, "seal \(n): a key of \(keyLength) bytes (a P-256 key is \(Recording.originKeyLength))")
            }
            let key = try r.raw(keyLength, "seal key")
            let memberCount = try r.count32("seal member count", minimumItemSize: 40)
            totalMembers += memberCount
            guard memberCount >= 1 else { throw WireError(.malformed, "seal \(n) vouches for no write") }
            guard totalMembers <= Limits.maximumSealMembersPerBatch else {
                throw WireError(.malformed, "the seals name more than \(Limits.maximumSealMembersPerBatch) writes")
            }
            var members: [Seal.Member] = []
            members.reserveCapacity(memberCount)
            for _ in 0..<memberCount {
                let sequence = try readSequence(&r, "seal \(n): seq")
                if let last = members.last, last.sequence >= sequence {
                    throw WireError(.malformed, "seal \(n): members not strictly ascending (\(sequence) after \(last.sequence))")
                }
                members.append(Seal.Member(sequence: sequence, digest: try r.digest("seal digest")))
            }
            let signature = try r.raw(Recording.signatureLength, "seal signature")
            seals.append(Seal(origin: sealOrigin, nodeID: nodeID, publicKey: key, members: members, signature: signature))
        }
        return seals
    }

    /// Origin index, an empty node ID, the key, one member and the signature.
    static let minimumSealSize = 2 + 2 + 2 + Recording.originKeyLength + 4 + 40 + Recording.signatureLength
}
