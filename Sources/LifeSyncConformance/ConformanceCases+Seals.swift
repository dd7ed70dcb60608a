import LifeSync
import LifeSyncRuntime

/// Every change verifiable against its origin's key (§5.2.5): the target refuses a change its
/// origin did not seal (a bound origin's, §2.3.1, whoever seals first), and relays another node's write with that node's own seal. (That the
/// target seals what it sends is checked on every pull, `ConformanceTarget.checkSeals`.)
extension ConformanceCases {
    static let seals: [ConformanceCase] = [
        ConformanceCase("5.2.5", "seals.unsealed-refused", "a BATCH whose change carries no seal is refused with ERROR forged_change and nothing of it is stored") { target in
            try target.refusesForged("with no seal") { _ in [] }
        },
        ConformanceCase("5.2.5", "seals.other-key-refused", "a BATCH sealed as the runner with a key that is not the runner's is refused with ERROR forged_change and nothing of it is stored") { target in
            let impostor = try NodeKey.generate(nodeID: target.runner.nodeID)
            return try target.refusesForged("sealed with a key the target does not pin for the runner") { change in
                (try? Seal.sealing([change], as: target.runner.nodeID, signer: impostor)) ?? []
            }
        },
        ConformanceCase("5.2.5", "seals.bound-origin-claimed", "a write under an incarnation bound to another node (§2.3.1), sealed as the runner with its own key before that node's seal reached the target, is refused with ERROR forged_change and nothing of it is stored") { target in
            let node = Identifier.make(role: .watch, random: target.random)
            return try target.refusesForged("under \(node)'s incarnation, sealed as the runner", origin: Identifier.incarnation(boundTo: node, random: target.random)) { change in
                target.seals(over: [change])
            }
        },
        ConformanceCase("5.2.5", "seals.relay-keeps-origin-seal", "a write of a node the target never met, sealed by that node, is stored and sent on with that node's seal, not the target's") { target in
            try target.requireReceivesEntries()
            let node = Identifier.make(role: .mac, random: target.random), origin = Identifier.uuidV4(random: target.random)
            let key = try NodeKey.generate(nodeID: node)
            let change = target.change(id: target.newEntryID(), origin: origin, sequence: 1, text: "relayed")
            let (connection, _) = try target.open()
            _ = connection.send(Message.encodedBatch(id: 1, origins: [OriginInfo(origin: origin, nodeID: node, role: .mac)], changes: [change],
                                                     through: VersionVector([(origin, 1)]), seals: try Seal.sealing([change], as: node, signer: key)))
            try target.waitFor("ACK of the BATCH of \(node)'s sealed write", on: connection) { message -> Bool? in
                guard case .ack(let ack) = message else { return nil }
                return ack.batchID == 1 ? true : nil
            }
            connection.close()
            let pulled = try target.readBack([origin: 0])
            guard pulled.change(id: change.id) != nil else {
                throw ConformanceFailure("\(node)'s write \(change.id) was acknowledged but is not sent on")
            }
            guard pulled.seals.contains(where: { $0.origin == origin && $0.nodeID == node && $0.publicKey == key.publicKey }) else {
                throw ConformanceFailure("\(node)'s write was sent on without \(node)'s own seal (seals: \(pulled.seals.map(\.nodeID))): a relay forwards the seal it received (§5.2.5)")
            }
            return .pass(nil)
        },
    ]
}

extension ConformanceTarget {
    /// Pushes one new write of `origin` (the runner's by default), named as the runner's, with
    /// `seals(change)`; expects ERROR forged_change, and checks the write is not stored.
    func refusesForged(_ how: String, origin: String? = nil, seals: (EncodedChange) -> [Seal]) throws -> ConformanceOutcome {
        try requireReceivesEntries()
        let origin = origin ?? self.origin
        let sequence = sequences(origin, count: 1).lowerBound
        let change = change(id: newEntryID(), origin: origin, sequence: sequence, text: "forged")
        let (connection, _) = try open()
        defer { connection.close() }
        _ = connection.send(Message.encodedBatch(id: 1, origins: [OriginInfo(origin: origin, nodeID: runner.nodeID, role: runner.role)],
                                                 changes: [change], through: VersionVector([(origin, sequence)]), seals: seals(change)))
        _ = try expectError(.forgedChange, on: connection, after: "a BATCH whose change is \(how)")
        if let stored = try readBack([origin: sequence - 1]).change(id: change.id) {
            throw ConformanceFailure("the refused write \(change.id) is stored at \(stored.stamp.origin):\(stored.stamp.sequence): nothing of a refused batch is kept (§5.2.5)")
        }
        return .pass(nil)
    }
}
