/// Every change verifiable against its origin's key (PROTOCOL.md §5.2.5). A batch's changes are
/// stored only when each is a member of a seal that the node owning the change's origin signed;
/// the seals are kept, so the writes can be relayed with their proof to replicas that never met
/// their origin.
///
/// Whose key a seal must carry is decided as for recording metadata (§5.9.7): the key the trust
/// store pins for the node, else the key this replica already bound to it, else the key becomes
/// the node's (first seen). This node's own origins are only ever sealed with its own key, and
/// a bound origin only as the node it names (§2.3.1).
extension Replica {
    /// The seals of one received batch and what each change's digest was as received (empty:
    /// only the canonical form is tried).
    public struct ReceivedSeals: Sendable {
        package var seals: [Seal]
        package var receivedDigests: [SHA256.Digest]

        package init(seals: [Seal], receivedDigests: [SHA256.Digest] = []) {
            self.seals = seals
            self.receivedDigests = receivedDigests
        }
    }

    /// Checks that every change of the batch is sealed by its origin, and returns, per change,
    /// the index of the seal that vouches for it. Inside the apply transaction: a refusal leaves
    /// nothing written (keys bound here roll back with it).
    /// - Throws: `ReplicaError.forgedWrite` naming the change and what is wrong with it.
    func checkSeals(_ changes: [Change], _ received: ReceivedSeals, own: Set<String>) throws -> [Int] {
        var byOrigin: [String: [Int]] = [:]
        for (index, seal) in received.seals.enumerated() {
            try checkSealer(seal, own: own)
            guard seal.hasValidSignature(signatureVerifier) else {
                throw ReplicaError.forgedWrite("a seal of origin \(seal.origin) does not verify with the key it carries (node \(seal.nodeID))")
            }
            byOrigin[seal.origin, default: []].append(index)
        }
        var vouching: [Int] = []
        vouching.reserveCapacity(changes.count)
        for n in changes.indices {  // read in place, not copied
            let sequence = changes[n].stamp.sequence
            guard let candidates = byOrigin[changes[n].stamp.origin] else {
                let change = changes[n]
                throw ReplicaError.forgedWrite("change \(n) (\(change.id), write \(change.stamp.origin)#\(sequence)) is not sealed by its origin")
            }
            if n < received.receivedDigests.count,
               let found = candidates.first(where: { received.seals[$0].vouches(for: sequence, digest: received.receivedDigests[n]) }) {
                vouching.append(found)
                continue
            }
            // Content spelled otherwise than canonically: its canonical form is what was sealed.
            let change = changes[n]
            let digest = change.digest
            guard let found = candidates.first(where: { received.seals[$0].vouches(for: sequence, digest: digest) }) else {
                throw ReplicaError.forgedWrite("change \(n) (\(change.id), write \(change.stamp.origin)#\(sequence)) differs from what its origin "
                                               + "\(received.seals[candidates[0]].nodeID) sealed, or was never sealed by it")
            }
            vouching.append(found)
        }
        return vouching
    }

    /// The seal's node owns its origin, and the key it carries is that node's. Our own writes
    /// can come back (a replica put back from an older copy): only our own key seals them.
    ///
    /// An origin's owner is never what an origin table or a HELLO claimed: those are a peer's
    /// word, and a buggy peer naming itself the owner of another node's origin must not make
    /// that node's own sealed writes look forged. A bound origin (`Identifier.isBound`) names its
    /// node, so only seals made as that node vouch for it, whoever sealed first; an origin made
    /// by an earlier version is owned by the node whose verified seal first vouched for a write
    /// of it (`seal_owners`). Either way the key must then be the owner's (`requireNodeKey`).
    private func checkSealer(_ seal: Seal, own: Set<String>) throws {
        let origin = seal.origin, node = seal.nodeID
        if own.contains(origin), node != identity.nodeID {
            throw ReplicaError.forgedWrite("a seal of this node's origin \(origin) is made as \(node)")
        }
        let owner = try sealOwner(origin)
        if Identifier.isBound(origin) {
            guard Identifier.incarnation(origin, isBoundTo: node) else {
                throw ReplicaError.forgedWrite("a seal of origin \(origin) is made as \(node), which is not the node that origin is bound to")
            }
        } else if let owner, owner != node {
            throw ReplicaError.forgedWrite("a seal of origin \(origin) is made as \(node), but that origin's writes are sealed by \(owner)")
        }
        try requireNodeKey(seal.publicKey, of: node, what: "a seal of origin \(origin)", refusal: ReplicaError.forgedWrite)
        if owner != node {
            try database.run("INSERT OR REPLACE INTO seal_owners(origin, node_id) VALUES (?, ?)", [.text(origin), .text(node)])
        }
        if let role = Identifier.role(of: node) { try recordOriginIfUnknown(origin, nodeID: node, role: role) }
    }

    /// The node whose seals vouch for `origin`'s writes here.
    func sealOwner(_ origin: String) throws -> String? {
        try database.firstRow("SELECT node_id FROM seal_owners WHERE origin = ?", [.text(origin)]) { $0.string(0) }
    }

    /// Notes that `nodeID` sent a batch refused as forged, keeping the 50 latest notes. In a
    /// transaction of its own: the refused batch's was rolled back.
    public func noteRefusedBatch(from nodeID: String, reason: String) throws {
        try writeTransaction {
            try database.run("INSERT INTO refused_batches(node_id, refused_at, reason) VALUES (?, ?, ?)",
                             [.text(nodeID), .text(now.iso8601), .text(String(reason.prefix(512)))])
            try database.run("DELETE FROM refused_batches WHERE id <= (SELECT max(id) FROM refused_batches) - 50")
        }
    }

    /// The batches refused as forged, newest first: who sent each, when, and why.
    public func refusedBatches() throws -> [(nodeID: String, at: Timestamp, reason: String)] {
        try database.rows("SELECT node_id, refused_at, reason FROM refused_batches ORDER BY id DESC") { row in
            (row.string(0), (try? Timestamp(iso8601: row.string(1))) ?? Timestamp(millisecondsSince1970: 0), row.string(2))
        }
    }

    /// Keeps the seals that vouch for `changes` of other nodes' origins that are new here, so
    /// those writes can be relayed with them: one row per seal, found again by its range.
    func keepSeals(_ changes: [Change], vouching: [Int], seals: [Seal], own: Set<String>, absorbed: [String: UInt64]) throws {
        var needed = Set<Int>()
        // Read in place: iterating copied every change (a dozen references retained and released).
        for n in changes.indices where !own.contains(changes[n].stamp.origin) {
            if changes[n].stamp.sequence > absorbed[changes[n].stamp.origin, default: 0] { needed.insert(vouching[n]) }
        }
        for index in needed.sorted() {
            let seal = seals[index]
            try database.run("""
                INSERT OR IGNORE INTO seals(origin, first_seq, last_seq, node_id, public_key, members, signature)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, [.text(seal.origin), .counter(seal.members.first!.sequence), .counter(seal.members.last!.sequence), .text(seal.nodeID),
                      .blob(seal.publicKey), .blob(seal.encodedMembers), .blob(seal.signature)])
        }
    }

    /// The stored seals of `origin` whose range meets `first…last`, newest first: the candidates
    /// to vouch for writes in that range (`Seal.vouches` decides).
    func storedSealRanges(origin: String, from first: UInt64, through last: UInt64) throws -> [(id: Int64, range: ClosedRange<UInt64>)] {
        try database.rows("SELECT id, first_seq, last_seq FROM seals WHERE origin = ? AND last_seq >= ? AND first_seq <= ? ORDER BY id DESC",
                          [.text(origin), .counter(first), .counter(last)]) { row in
            let low = UInt64(clamping: row.int64(1)), high = UInt64(clamping: row.int64(2))
            return (row.int64(0), low...max(low, high))
        }
    }

    /// A stored seal, as received; nil if it is gone or its row does not read back.
    func storedSeal(id: Int64) throws -> Seal? {
        try database.firstRow("SELECT origin, node_id, public_key, members, signature FROM seals WHERE id = ?", [.integer(id)]) { row -> Seal? in
            guard let members = Seal.members(from: row.blob(3)), !members.isEmpty else { return nil }
            return Seal(origin: row.string(0), nodeID: row.string(1), publicKey: row.blob(2), members: members, signature: row.blob(4))
        } ?? nil
    }
}
