import LifeSync

/// `--listen`: the node under test dials the runner, which checks it as a dialler (§1 Opening,
/// §7.2, §7.4). The cases run in order on the sessions the node opens, each taking up where the
/// one before left off; a node reconnects by itself after a session ends (§7.7 reconnect).
extension ConformanceCases {
    package static let client: [ConformanceCase] = [
        ConformanceCase("7.2", "client.hello-first", "the dialler sends its HELLO first, with valid fields naming the key's node, then its delta and CAUGHT_UP") { target in
            guard let (connection, hello) = target.pending else { throw ConformanceFailure("no session of the dialler is waiting") }
            target.pending = nil
            guard hello.nodeID == target.trusted.nodeID, hello.role == target.trusted.role else {
                throw ConformanceFailure("the HELLO names \(hello.nodeID) (\(hello.role.rawValue)); its key is trusted as \(target.trusted.nodeID) (§1.2)", connection)
            }
            guard hello.minimumVersion <= ProtocolVersion.maximum, hello.maximumVersion >= ProtocolVersion.minimum else {
                throw ConformanceFailure("the dialler speaks versions \(hello.minimumVersion)…\(hello.maximumVersion), not 2", connection)
            }
            // Our HELLO with an empty vector: the dialler owes us its whole delta (§7.4).
            _ = connection.send(ConformanceTarget.hello(target.runner, capabilities: [.seals, .receivesEntries], vector: VersionVector()))
            let pulled = try target.pull(on: connection)
            target.held = connection
            return .pass("\(pulled.changes.count) changes in \(pulled.batches) batches")
        },
        ConformanceCase("7.4", "client.acks-what-it-applied", "the dialler acknowledges a valid BATCH and refuses one holding an invalid change with ERROR invalid_change") { target in
            try target.requireReceivesEntries()
            guard let connection = target.held else { throw ConformanceSkip("no open session of the dialler (client.hello-first did not pass)") }
            target.held = nil
            defer { connection.close() }
            let origin = target.origin
            let good = entries(target, origin: origin, count: 1)
            try target.push(good, id: 1, on: connection)
            target.clientAcked = (origin, good[0].stamp.sequence)
            var bad = entries(target, origin: origin, count: 1)
            bad[0].payload = target.entryJSON(id: bad[0].id, text: "latitude 91", extra: "\"location\":{\"latitude\":91,\"longitude\":0},")
            _ = connection.send(target.batch(2, bad))
            try target.expectError(.invalidChange, on: connection, after: "a BATCH with an entry at latitude 91")
            return .pass(nil)
        },
        ConformanceCase("7.4", "client.hello-holds-acked", "the dialler reconnects, and its HELLO vector holds what it acknowledged and nothing it refused; PING is answered") { target in
            guard let (origin, acked) = target.clientAcked else { throw ConformanceSkip("client.acks-what-it-applied did not run") }
            let connection = try target.connect()
            defer { connection.close() }
            let hello = try target.expectHello(on: connection)
            guard hello.vector[origin] == acked else {
                throw ConformanceFailure("the dialler's HELLO holds \(origin) up to \(hello.vector[origin]); it acknowledged \(acked) and refused \(acked + 1) (§7.4)", connection)
            }
            _ = connection.send(ConformanceTarget.hello(target.runner, capabilities: [.seals, .receivesEntries], vector: hello.vector))
            let nonce = target.random.nextUInt64()
            _ = connection.send(.ping(nonce: nonce))
            try target.waitFor("PONG \(nonce)", on: connection) { message -> Bool? in
                guard case .pong(let got) = message else { return nil }
                guard got == nonce else { throw ConformanceFailure("PING \(nonce) answered by PONG \(got) (§5.6)", connection) }
                return true
            }
            return .pass(nil)
        },
    ]
}
