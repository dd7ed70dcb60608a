import LifeSync

/// Delta sync (§5.2–5.4, §7.4–7.6): what the target sends, what it takes, and that an ACK means
/// the batch is stored. Every write is the runner's, under origins fresh for the run.
extension ConformanceCases {
    /// `count` new entries of `origin`, at its next sequences.
    static func entries(_ target: ConformanceTarget, origin: String, count: Int) -> [EncodedChange] {
        target.sequences(origin, count: count).enumerated().map { i, sequence in
            target.change(id: target.newEntryID(), origin: origin, sequence: sequence, text: "conformance \(i)")
        }
    }

    /// What the target sent back for `changes` must be them, unchanged: the same stamp and the
    /// same canonical bytes (§7.4 Relay).
    static func expectUnchanged(_ sent: [EncodedChange], in pulled: ConformanceTarget.Pulled) throws -> String? {
        let got = Dictionary(pulled.changes.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        guard pulled.changes.count == Set(pulled.changes.map(\.id)).count else {
            return "the read-back holds \(pulled.changes.count) changes for \(got.count) entries: an entry was sent twice"
        }
        for change in sent {
            guard let back = got[change.id] else { return "\(change.id) (\(change.stamp.origin):\(change.stamp.sequence)) is missing from the read-back" }
            guard back.stamp == change.stamp else { return "\(change.id) came back stamped \(back.stamp), sent \(change.stamp)" }
            let bytes = back.entry.map { Array($0.json.canonicalText.utf8) } ?? []
            guard bytes == change.payload else {
                return "\(change.id) came back as \(String(decoding: bytes, as: UTF8.self)), sent \(String(decoding: change.payload, as: UTF8.self))"
            }
        }
        guard pulled.changes.count == sent.count else { return "read back \(pulled.changes.count) changes, \(sent.count) were sent" }
        return nil
    }

    static let delta: [ConformanceCase] = [
        ConformanceCase("7.5", "delta.caught-up-at-once", "a peer claiming everything the target holds gets CAUGHT_UP and no BATCH") { target in
            let (connection, _) = try target.open(vector: try target.refreshVector())
            defer { connection.close() }
            let pulled = try target.pull(on: connection)
            guard pulled.batches == 0 else { throw ConformanceFailure("\(pulled.batches) BATCHes sent to a peer that claims the target's whole vector", connection) }
            return .pass(nil)
        },
        ConformanceCase("7.4", "delta.pull-all", "from an empty vector the target sends everything it holds, each write once, then CAUGHT_UP covering its HELLO vector") { target in
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(ConformanceTarget.hello(target.runner, capabilities: [.seals, .receivesEntries], vector: VersionVector()))
            let hello = try target.expectHello(on: connection)
            let pulled = try target.pull(on: connection)
            // An entry comes once per write it holds: its latest, and the earlier writes that
            // still win a field or the delete it outlived (§8). A write comes once.
            var seen = Set<String>()
            for change in pulled.changes {
                guard seen.insert("\(change.stamp.origin):\(change.stamp.sequence)").inserted else {
                    throw ConformanceFailure("\(change.id)'s write \(change.stamp.origin):\(change.stamp.sequence) sent twice in one pull", connection)
                }
                guard change.stamp.sequence <= hello.vector[change.stamp.origin] else {
                    throw ConformanceFailure("\(change.id) at \(change.stamp.origin):\(change.stamp.sequence) is above the target's own HELLO vector (\(hello.vector[change.stamp.origin]))", connection)
                }
            }
            guard pulled.caughtUp == pulled.through else {
                throw ConformanceFailure("CAUGHT_UP \(pulled.caughtUp) is not the join of the batches' through \(pulled.through) (§5.4, from an empty vector)", connection)
            }
            return .pass("\(pulled.changes.count) changes in \(pulled.batches) batches")
        },
        ConformanceCase("5.2.4", "delta.pull-covers-hello", "a full pull's through vectors reach every origin of the target's HELLO vector", level: .should) { target in
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends only its own origins (§7.3)") }
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(ConformanceTarget.hello(target.runner, capabilities: [.seals, .receivesEntries], vector: VersionVector()))
            let hello = try target.expectHello(on: connection)
            let pulled = try target.pull(on: connection)
            // The spec describes the reference filling through[o] up to its vector; a node may
            // leave superseded tails uncovered, which costs its peers an extra BATCH next time.
            for entry in hello.vector.entries where pulled.through[entry.origin] < entry.sequence {
                return .fail("the batches' through covers \(entry.origin) up to \(pulled.through[entry.origin]); the target's HELLO says it holds \(entry.sequence)")
            }
            return .pass(nil)
        },
        ConformanceCase("7.4", "delta.push-read-back", "a BATCH of the runner's writes is acknowledged, and a later session reads them back unchanged") { target in
            try target.requireReceivesEntries()
            let origin = target.origin, before = target.position(of: origin)
            let sent = entries(target, origin: origin, count: 3)
            let (connection, _) = try target.open()
            try target.push(sent, on: connection)
            connection.close()
            let (again, hello) = try target.open()
            again.close()
            guard hello.vector[origin] == before + 3 else {
                throw ConformanceFailure("after ACK, the target's next HELLO says \(origin) up to \(hello.vector[origin]), not \(before + 3) (§7.4)")
            }
            if let problem = try expectUnchanged(sent, in: target.readBack([origin: before])) { throw ConformanceFailure(problem) }
            return .pass(nil)
        },
        ConformanceCase("5.3", "delta.ack-counts", "an ACK counts the changes that became current: all of a new batch, none of the same batch again", level: .should) { target in
            try target.requireReceivesEntries()
            let sent = entries(target, origin: target.origin, count: 3)
            let (connection, _) = try target.open()
            defer { connection.close() }
            let first = try target.push(sent, id: 1, on: connection)
            let again = try target.push(sent, id: 2, on: connection)
            guard first.applied == 3, first.conflicts == 0 else { return .fail("ACK 1 says applied \(first.applied), conflicts \(first.conflicts) for 3 new entries") }
            guard again.applied == 0 else { return .fail("ACK 2 says applied \(again.applied) for the same 3 writes again (§8: the same write changes nothing)") }
            return .pass(nil)
        },
        ConformanceCase("5.2", "delta.origin-owner-named", "relayed origins keep their owner: the target's origin table names the runner's node for the runner's origin", level: .should) { target in
            try target.requireReceivesEntries()
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch relays no other node's writes (§7.3)") }
            let origin = target.origin, before = target.position(of: origin)
            try target.pushAll([entries(target, origin: origin, count: 1)])
            let pulled = try target.readBack([origin: before])
            guard let owner = pulled.owners[origin] else { return .fail("the read-back's origin table leaves the owner of \(origin) empty") }
            guard owner.nodeID == target.runner.nodeID, owner.role == target.runner.role else {
                return .fail("the origin table names \(owner.nodeID ?? "") (\(owner.role?.rawValue ?? "")) for \(origin), owned by \(target.runner.nodeID)")
            }
            return .pass(nil)
        },
        ConformanceCase("7.4", "delta.window-acks-in-order", "four BATCHes sent back to back are acknowledged in order, each after it was stored") { target in
            try target.requireReceivesEntries()
            let origin = target.origin, before = target.position(of: origin)
            let (connection, _) = try target.open()
            defer { connection.close() }
            let groups = (0..<4).map { _ in entries(target, origin: origin, count: 2) }
            for (i, group) in groups.enumerated() { _ = connection.send(target.batch(UInt64(i + 1), group)) }
            var acked: [UInt64] = []
            try target.waitFor("ACKs 1…4", on: connection) { message -> Bool? in
                if case .ack(let ack) = message { acked.append(ack.batchID) }
                return acked.count == 4 ? true : nil
            }
            guard acked == [1, 2, 3, 4] else { throw ConformanceFailure("ACKs \(acked), expected [1, 2, 3, 4]", connection) }
            if let problem = try expectUnchanged(groups.flatMap { $0 }, in: target.readBack([origin: before])) { throw ConformanceFailure(problem) }
            return .pass(nil)
        },
        ConformanceCase("3.1", "delta.batch-at-limit", "a BATCH of exactly 10 000 changes is accepted and acknowledged") { target in
            try target.requireReceivesEntries()
            // Tombstones of new IDs: the smallest valid changes, stored like writes (§8).
            let changes = target.sequences(target.origin, count: Message.Limits.maximumChangesPerBatch).map { sequence in
                target.change(id: target.newEntryID(), origin: target.origin, sequence: sequence, deleted: true)
            }
            let (connection, _) = try target.open()
            defer { connection.close() }
            try target.push(changes, on: connection)
            return .pass(nil)
        },
        ConformanceCase("3.1", "delta.batch-over-limit", "a BATCH of 10 001 changes is refused with ERROR malformed, and nothing of it is stored") { target in
            try target.requireReceivesEntries()
            let origin = target.origin, held = try target.refreshVector()[origin]
            let changes = target.sequences(origin, count: Message.Limits.maximumChangesPerBatch + 1).map { sequence in
                target.change(id: target.newEntryID(), origin: origin, sequence: sequence, deleted: true)
            }
            let (connection, _) = try target.open()
            defer { connection.close() }
            _ = connection.send(target.batch(1, changes))
            try target.expectError(.malformed, on: connection, after: "a BATCH of 10 001 changes")
            let (again, hello) = try target.open()
            again.close()
            guard hello.vector[origin] == held else {
                throw ConformanceFailure("after refusing it, the target holds \(origin) up to \(hello.vector[origin]), not \(held)")
            }
            return .pass(nil)
        },
        ConformanceCase("5.2.3", "delta.invalid-change", "a BATCH with one invalid entry among valid ones is refused with ERROR invalid_change; nothing of it is acknowledged or stored") { target in
            try target.requireReceivesEntries()
            let origin = target.origin, held = try target.refreshVector()[origin]
            var changes = entries(target, origin: origin, count: 3)
            // The middle one has a latitude of 91 (§5.2.3: −90 … 90).
            changes[1].payload = target.entryJSON(id: changes[1].id, text: "latitude 91", extra: "\"location\":{\"latitude\":91,\"longitude\":0},")
            let (connection, _) = try target.open()
            defer { connection.close() }
            _ = connection.send(target.batch(1, changes))
            for _ in 0..<1_000 {
                switch connection.next() {
                case .message(.ack(let ack)): throw ConformanceFailure("ACK \(ack.batchID) (applied \(ack.applied)) for a batch with an invalid change (§5.2.3)", connection)
                case .message(.error(let code, _)) where code == ErrorCode.invalidChange.rawValue:
                    let (again, hello) = try target.open()
                    again.close()
                    guard hello.vector[origin] == held else {
                        throw ConformanceFailure("the target stored part of a refused batch: it holds \(origin) up to \(hello.vector[origin]), not \(held)")
                    }
                    try target.expectStillServing(after: "an invalid change")
                    return .pass(nil)
                case .message(.hello), .message(.caughtUp), .message(.batch): continue
                case let other: throw ConformanceFailure("expected ERROR invalid_change (7), got \(ConformanceTarget.describe(other))", connection)
                }
            }
            throw ConformanceFailure("expected ERROR invalid_change: too many other frames", connection)
        },
        ConformanceCase("5.2.1", "delta.seq-above-through", "a change above its batch's through is refused with ERROR invalid_change") { target in
            try target.requireReceivesEntries()
            let origin = target.origin
            let changes = entries(target, origin: origin, count: 2)
            let first = changes[0].stamp.sequence
            return try refusedInSession(target, target.batch(1, changes, through: VersionVector([(origin, first)])), .invalidChange,
                                        "a BATCH whose change \(origin):\(first + 1) is above through \(origin):\(first)")
        },
        ConformanceCase("7.4", "delta.resume-after-cut", "a batch cut mid-frame stores nothing; sent again it is stored once, and a duplicate delivery changes nothing") { target in
            try target.requireReceivesEntries()
            let origin = target.origin, held = try target.refreshVector()[origin], before = target.position(of: origin)
            let sent = entries(target, origin: origin, count: 5)
            let frame = target.batch(1, sent)
            let (cut, _) = try target.open()
            _ = cut.send(Array(frame[0..<(frame.count / 2)]))
            cut.cut()
            let (second, hello) = try target.open()
            guard hello.vector[origin] == held else {
                throw ConformanceFailure("a half-sent batch was stored: the target holds \(origin) up to \(hello.vector[origin]), not \(held)", second)
            }
            try target.push(sent, on: second)
            second.close()
            // The same batch again, as a sender does when it never saw the ACK (§7.4: applying twice is harmless).
            let (third, _) = try target.open()
            try target.push(sent, on: third)
            third.close()
            if let problem = try expectUnchanged(sent, in: target.readBack([origin: before])) { throw ConformanceFailure(problem) }
            return .pass(nil)
        },
        ConformanceCase("7.6", "delta.sync-request", "SYNC_REQUEST with a vector lacking an origin makes the target send that origin's writes again, then CAUGHT_UP") { target in
            try target.requireReceivesEntries()
            guard target.firstHello.role != .watch else { throw ConformanceSkip("a watch sends no other node's writes (§7.3)") }
            let origin = target.origin, before = target.position(of: origin)
            let sent = entries(target, origin: origin, count: 2)
            try target.pushAll([sent])
            let (connection, _) = try target.open(vector: try target.refreshVector())
            defer { connection.close() }
            let first = try target.pull(on: connection)
            guard first.changes.filter({ $0.stamp.origin == origin }).isEmpty else {
                throw ConformanceFailure("the target sent \(origin)'s writes to a peer whose HELLO claimed them", connection)
            }
            var claim = target.knownVector
            claim[origin] = before
            _ = connection.send(.syncRequest(vector: claim))
            var again = try target.pull(on: connection, firstBatchID: UInt64(first.batches + 1))
            again.changes = again.changes.filter { $0.stamp.origin == origin && $0.stamp.sequence > before }
            if let problem = try expectUnchanged(sent, in: again) { throw ConformanceFailure("after SYNC_REQUEST: " + problem, connection) }
            return .pass(nil)
        },
    ]
}
