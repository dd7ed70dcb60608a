import LifeSync

/// Histories compared at the handshake (§5.10, §7.2.3): a peer that sets capability bit 4 gets the
/// HISTORY exchange in its order, and nothing else before it ends.
extension ConformanceCases {
    static let history: [ConformanceCase] = [
        ConformanceCase("7.2.3", "history.exchange", "with capability bit 4 on both HELLOs, the HISTORY exchange runs in its order before anything else, then the session goes on") { target in
            guard target.firstHello.capabilities.contains(.histories) else { return .skipped("the target's HELLO does not set bit 4 (histories)") }
            let (connection, hello) = try target.open(capabilities: [.seals, .receivesEntries, .histories])
            defer { connection.close() }
            let ours = History(vector: target.knownVector, incarnation: target.runner.incarnation)
            func expectHistory(_ what: String) throws -> History {
                try target.waitFor(what, on: connection) { message in
                    switch message {
                    case .history(let history): return history
                    case .ping, .pong: return nil
                    default: throw ConformanceFailure("\(message.type) before the HISTORY exchange ended (§7.2.3)", connection)
                    }
                }
            }
            if hello.nodeID < target.runner.nodeID {
                _ = try expectHistory("the target's HISTORY (it speaks first: the smaller node ID)")
                _ = connection.send(.history(ours))
                _ = try expectHistory("the target's last HISTORY")
            } else {
                _ = connection.send(.history(ours))
                _ = try expectHistory("the target's HISTORY, after ours")
                _ = connection.send(.history(ours))
            }
            _ = connection.send(.ping(nonce: 7))
            try target.waitFor("a PONG once the exchange is over", on: connection) { message in
                if case .pong = message { return true }
                return nil
            }
            return .pass(nil)
        },
    ]
}
