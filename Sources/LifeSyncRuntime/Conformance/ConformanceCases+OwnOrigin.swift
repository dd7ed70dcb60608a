import LifeSync

/// A peer's claims about the target's own writes (§5.2.4 "Claims about the receiver's own
/// writes are never taken", §7.2.1, §8 "Absorbed changes" and "Clashes"): the target is the
/// authority on its own incarnation, so a BATCH that forges a write of it changes nothing there.
extension ConformanceCases {
    static let ownOrigin: [ConformanceCase] = [
        ConformanceCase("5.2.4", "bad.forged-target-origin", "a BATCH forging the target's own incarnation (a change at a seq it wrote, a through past its count) is acknowledged and absorbed: its incarnation, vector and writes unchanged") { target in
            try target.requireReceivesEntries()
            let (connection, hello) = try target.open()
            defer { connection.close() }
            let own = hello.incarnation, count = hello.vector[own]
            guard count >= 1 else {
                // At count 0 a change of its incarnation is delivered data it is told to apply (§7.2.1).
                throw ConformanceSkip("the target has written nothing under its current incarnation")
            }
            // A new entry at (own, count): the target holds another write there, so the change is
            // absorbed (seq ≤ its vector) and at most kept as a clash, never applied (§8). The owner
            // is left empty in the origin table: the runner claims only the write, not the origin.
            let forged = target.change(id: target.newEntryID(), origin: own, sequence: count, text: "forged")
            _ = connection.send(Message.encodedBatch(id: 1, origins: [OriginInfo(origin: own, nodeID: nil, role: nil)], changes: [forged],
                                                     through: VersionVector([(own, count + 1_000)])))
            try target.waitFor("ACK of the BATCH forging \(own):\(count)", on: connection) { message -> Bool? in
                guard case .ack(let ack) = message else { return nil }
                guard ack.batchID == 1 else { throw ConformanceFailure("expected ACK 1, got ACK \(ack.batchID)", connection) }
                return true
            }
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
