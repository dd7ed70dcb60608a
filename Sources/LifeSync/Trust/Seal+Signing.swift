/// Making a seal and checking its signature (PROTOCOL.md §5.2.5): the node key signs, and a
/// verifier checks the carried key's signature over the members. Whose key that must be, the
/// replica decides (`Replica.checkSeals`).
extension Seal {
    /// Seals `members` (ascending, no sequence twice) as `nodeID`, the owner of `origin`.
    /// - Throws: what the signer throws.
    package init(origin: String, nodeID: String, members: [Member], signer: RecordingSigner) throws {
        precondition(zip(members, members.dropFirst()).allSatisfy { $0.sequence < $1.sequence }, "seal members ascend")
        self.init(origin: origin, nodeID: nodeID, publicKey: signer.publicKey, members: members, signature: [])
        signature = try signer.sign(message)
    }

    /// Seals over `changes` as `nodeID`, one per origin in the order the origins first appear,
    /// each over its changes' sequences and digests: how a node sends its own writes.
    /// - Throws: what the signer throws.
    package static func sealing(_ changes: [EncodedChange], as nodeID: String, signer: RecordingSigner) throws -> [Seal] {
        var byOrigin: [String: [Member]] = [:]
        var order: [String] = []
        let hasher = SHA256()
        for change in changes {
            if byOrigin[change.stamp.origin] == nil { order.append(change.stamp.origin) }
            byOrigin[change.stamp.origin, default: []].append(Member(sequence: change.stamp.sequence, digest: change.digest(hasher: hasher)))
        }
        return try order.map { origin in
            try Seal(origin: origin, nodeID: nodeID, members: byOrigin[origin]!.sorted { $0.sequence < $1.sequence }, signer: signer)
        }
    }

    /// Whether the carried signature is the carried key's over the members. Whose key that is,
    /// the replica decides (`Replica.checkSeals`).
    package func hasValidSignature(_ verifier: SignatureVerifier) -> Bool {
        verifier.isValid(signature: signature, of: message, publicKey: publicKey)
    }
}
