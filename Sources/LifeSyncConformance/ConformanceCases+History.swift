import LifeSync

/// Histories compared at the handshake (§5.10, §7.2.3): a peer that sets capability bit 4 gets the
/// HISTORY exchange in its order, and nothing else before it ends; with bit 6, a fork list
/// (§7.2.4) is taken in when well formed and refused when not.
extension ConformanceCases {
    static let history: [ConformanceCase] = [
        ConformanceCase("7.2.3", "history.exchange", "with capability bit 4 on both HELLOs, the HISTORY exchange runs in its order before anything else, then the session goes on") { target in
            guard target.firstHello.capabilities.contains(.histories) else { return .skipped("the target's HELLO does not set bit 4 (histories)") }
            let (connection, hello) = try target.open(capabilities: [.seals, .receivesEntries, .histories])
            defer { connection.close() }
            let ours = History(vector: target.knownVector, incarnation: target.runner.incarnation)
            try exchange(target, connection, hello, ours: ours)
            _ = connection.send(.ping(nonce: 7))
            try target.waitFor("a PONG once the exchange is over", on: connection) { message in
                if case .pong = message { return true }
                return nil
            }
            return .pass(nil)
        },
        ConformanceCase("7.2.4", "history.fork-list", "with bits 4 and 6 on both HELLOs, a HISTORY ending with a fork list is taken in (the session goes on); an empty fork list written out is malformed") { target in
            guard target.firstHello.capabilities.isSuperset(of: [.histories, .forks]) else { return .skipped("the target's HELLO does not set bits 4 and 6 (histories, forks)") }
            let stranger = "0f0e0d0c-0b0a-4908-8706-050403020100"
            let fork = History.Fork(origin: stranger, agreed: 2, sequence: 3,
                                    digests: (SHA256.hash(Array("one write at #3".utf8)), SHA256.hash(Array("another write at #3".utf8))))
            let ours = History(vector: target.knownVector, incarnation: target.runner.incarnation, forks: [fork])
            do {
                let (connection, hello) = try target.open(capabilities: [.seals, .receivesEntries, .histories, .forks])
                defer { connection.close() }
                try exchange(target, connection, hello, ours: ours)
                _ = connection.send(.ping(nonce: 8))
                try target.waitFor("a PONG after a HISTORY with a fork list", on: connection) { message in
                    if case .pong = message { return true }
                    return nil
                }
            }
            let (connection, hello) = try target.open(capabilities: [.seals, .receivesEntries, .histories, .forks])
            defer { connection.close() }
            if hello.nodeID < target.runner.nodeID {
                _ = try expectHistory(target, connection, "the target's HISTORY (it speaks first: the smaller node ID)")
            }
            let plain = Message.history(History(vector: target.knownVector, incarnation: target.runner.incarnation)).encoded()
            var empty = plain + [0, 0]
            let length = UInt32(empty.count - 4)
            empty.replaceSubrange(0..<4, with: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
            _ = connection.send(empty)
            try target.expectError(.malformed, on: connection, after: "a HISTORY whose fork list names none")
            return .pass(nil)
        },
    ]

    /// Waits for the target's next HISTORY; nothing but PING and PONG may come before it.
    private static func expectHistory(_ target: ConformanceTarget, _ connection: ProbeConnection, _ what: String) throws -> History {
        try target.waitFor(what, on: connection) { message in
            switch message {
            case .history(let history): return history
            case .ping, .pong: return nil
            default: throw ConformanceFailure("\(message.type) before the HISTORY exchange ended (§7.2.3)", connection)
            }
        }
    }

    /// The HISTORY exchange in its order (§7.2.3), `ours` as the runner's word each time.
    private static func exchange(_ target: ConformanceTarget, _ connection: ProbeConnection, _ hello: Hello, ours: History) throws {
        if hello.nodeID < target.runner.nodeID {
            _ = try expectHistory(target, connection, "the target's HISTORY (it speaks first: the smaller node ID)")
            _ = connection.send(.history(ours))
            _ = try expectHistory(target, connection, "the target's last HISTORY")
        } else {
            _ = connection.send(.history(ours))
            _ = try expectHistory(target, connection, "the target's HISTORY, after ours")
            _ = connection.send(.history(ours))
        }
    }
}
