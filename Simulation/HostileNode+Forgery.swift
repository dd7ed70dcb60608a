import LifeSync

/// The forging peer of issue 29 §1 and issue 25 §4: a trusted node that writes under another
/// node's origin, at that node's next sequence number, where the honest node's own next write
/// will land. Seals (PROTOCOL.md §5.2.5) must make every honest node refuse it, and the honest
/// write must still arrive (`InvariantChecker.checkForgeries` and the ledger's "no acknowledged
/// write lost").
extension HostileNode {
    /// The prefix of every entry ID it forges, so the checker can tell them from honest entries.
    static let forgedPrefix = "forged_"

    func forgeHonestWrite(on link: Link) {
        let victims = learned.sorted { $0.key < $1.key }.filter { $0.value.incarnation != incarnation }
        guard !victims.isEmpty else { return }
        let (owner, info) = victims[Int(random.next(below: UInt64(victims.count)))]
        count(.forgeHonestWrite)
        let next = info.vector[info.incarnation] + 1 + random.next(below: 3)
        let id = Self.forgedPrefix + Identifier.uuidV4(random: random)
        let write = OwnWrite(id: id, sequence: next, hlc: nextHLC(), deleted: false, payload: entryJSON(id: id, text: "forged in \(owner)'s name"))
        // The origin table names the owner, or no one; the seal claims the owner, or itself.
        let table = [TableEntry(origin: info.incarnation, nodeID: random.next(below: 2) == 0 ? owner : "", role: info.role)]
        let sealAs = random.next(below: 2) == 0 ? owner : nodeID
        send(batch(on: link, table: table, changes: [RawChange(own: write, origin: 0)], through: [(0, next)], sealAs: sealAs),
             on: link, hubOnly: true, sampleable: false)
    }
}

extension InvariantChecker {
    /// No replica holds a write the hostile node forged in an honest node's name.
    func checkForgeries() -> [String] {
        var violations: [String] = []
        for name in simulator.names {
            guard let replica = simulator.nodes[name]?.replica else { continue }
            let forged = ((try? replica.changes(after: VersionVector())) ?? []).filter { $0.id.hasPrefix(HostileNode.forgedPrefix) }
            if let first = forged.first {
                violations.append("forged write stored: \(name) holds \(first.id) under \(first.stamp.origin)#\(first.stamp.sequence), which its owner never made")
            }
        }
        return violations
    }
}
