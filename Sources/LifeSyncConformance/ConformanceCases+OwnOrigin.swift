import LifeSync

/// A peer's claims about the target's own writes (§5.2.4 "Claims about the receiver's own
/// writes are never taken", §7.2.1, §8 "Absorbed changes" and "Clashes"): the target is the
/// authority on its own incarnation, so a BATCH that forges a write of it changes nothing there.
extension ConformanceCases {
    static let ownOrigin: [ConformanceCase] = [
        ConformanceCase("5.2.5", "bad.forged-target-origin", "a BATCH forging a write of the target's own incarnation, sealed by the runner's key, is refused with ERROR forged_change: its incarnation, vector and writes unchanged") { target in
            try target.requireReceivesEntries()
            let (connection, hello) = try target.open()
            defer { connection.close() }
            let own = hello.incarnation, count = hello.vector[own]
            guard count >= 1 else {
                // At count 0 a change of its incarnation is delivered data it is told to apply (§7.2.1).
                throw ConformanceSkip("the target has written nothing under its current incarnation")
            }
            // A new entry at (own, count), sealed by the runner: only the target's own key seals
            // its incarnation (§5.2.5), so nothing of it may be stored, whatever the target holds
            // there. The owner is left empty in the origin table: the runner claims only the write.
            let forged = target.change(id: target.newEntryID(), origin: own, sequence: count, text: "forged")
            _ = connection.send(Message.encodedBatch(id: 1, origins: [OriginInfo(origin: own, nodeID: nil, role: nil)], changes: [forged],
                                                     through: VersionVector([(own, count + 1_000)]), seals: target.seals(over: [forged])))
            _ = try target.expectError(.forgedChange, on: connection, after: "a BATCH forging \(own):\(count) under the runner's seal")
            connection.close()
            let (again, after) = try target.open()
            again.close()
            guard after.incarnation == own else {
                throw ConformanceFailure("a forged write at a seq the target holds made it rotate its incarnation \(own) → \(after.incarnation): only writes above its count are evidence (§7.2.1)")
            }
            guard after.vector[own] == count else {
                throw ConformanceFailure("the target's vector for its own incarnation went \(count) → \(after.vector[own]): a through never advances a receiver's own origins (§5.2.4)")
            }
            let pulled = try target.readBack([own: count - 1])
            if let stored = pulled.change(id: forged.id) {
                throw ConformanceFailure("the forged write \(forged.id) is stored at \(stored.stamp.origin):\(stored.stamp.sequence): a change at or below the vector is absorbed, not applied (§8)")
            }
            try target.expectStillServing(after: "a BATCH forging the target's own incarnation")
            return .pass(nil)
        },
    ]
}
