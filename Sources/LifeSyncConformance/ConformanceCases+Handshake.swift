import LifeSync

/// The opening of a session and the session-level messages (§1.2, §5.1, §5.5, §7.1, §7.2, §7.9).
extension ConformanceCases {
    static let handshake: [ConformanceCase] = [
        ConformanceCase("7.2", "handshake.hello-answered", "a HELLO is answered by the target's HELLO, with valid fields naming the key's node") { target in
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(ConformanceTarget.hello(target.runner, capabilities: [.seals], vector: VersionVector()))
            let hello = try target.expectHello(on: connection)
            guard hello.minimumVersion <= ProtocolVersion.maximum, hello.maximumVersion >= ProtocolVersion.minimum else {
                throw ConformanceFailure("the target speaks versions \(hello.minimumVersion)…\(hello.maximumVersion), not 2", connection)
            }
            guard hello.nodeID == target.trusted.nodeID, hello.role == target.trusted.role else {
                throw ConformanceFailure("the HELLO names \(hello.nodeID) (\(hello.role.rawValue)); its key is trusted as \(target.trusted.nodeID) (\(target.trusted.role.rawValue)) (§1.2)", connection)
            }
            if hello.role == .watch, hello.capabilities.contains(.receivesRecordings) {
                throw ConformanceFailure("a watch's HELLO sets receives_recordings (§5.1: a watch must never set it)", connection)
            }
            return .pass("versions \(hello.minimumVersion)…\(hello.maximumVersion), \(hello.role.rawValue), capabilities \(hello.capabilities.rawValue), \(hello.vector.entries.count) origins")
        },
        ConformanceCase("5.1", "handshake.reserved-bits-zero", "the target's HELLO sets no reserved capability bit", level: .should) { target in
            let reserved = target.firstHello.capabilities.subtracting(.defined).rawValue  // bits 0-8 are defined (§5.1)
            return reserved == 0 ? .pass(nil) : .fail("capabilities 0x\(String(target.firstHello.capabilities.rawValue, radix: 16)) set reserved bits (§5.1: senders set 0)")
        },
        ConformanceCase("7.2", "handshake.version-unsupported", "a HELLO of version 1 only is refused with ERROR version_unsupported") { target in
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(ConformanceTarget.hello(target.runner, capabilities: [.seals], vector: VersionVector(), minimum: 1, maximum: 1))
            try target.expectError(.versionUnsupported, on: connection, after: "a HELLO of versions 1…1")
            try target.expectStillServing(after: "a version-1 HELLO")
            return .pass(nil)
        },
        ConformanceCase("7.2", "handshake.version-overlap", "a HELLO offering versions 1…3 is accepted: the session speaks 2") { target in
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(ConformanceTarget.hello(target.runner, capabilities: [.seals], vector: target.knownVector, minimum: 1, maximum: 3))
            _ = try target.expectHello(on: connection)
            // Any PONG shows the session is open (its nonce is session.ping-pong's business).
            _ = connection.send(.ping(nonce: 2))
            try target.waitFor("a PONG in a session of versions 1…3", on: connection) { message in
                if case .pong = message { return true }
                return nil
            }
            return .pass(nil)
        },
        ConformanceCase("7.1", "handshake.hello-first", "a PING before HELLO is refused with ERROR unexpected_message") { target in
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(.ping(nonce: 1))
            try target.expectError(.unexpectedMessage, on: connection, after: "a PING as the first frame")
            try target.expectStillServing(after: "a PING before HELLO")
            return .pass(nil)
        },
        ConformanceCase("5.1", "handshake.bad-magic", "a HELLO whose magic is not LSYN is refused with ERROR bad_handshake") { target in
            var bytes = ConformanceTarget.hello(target.runner, capabilities: [.seals], vector: VersionVector()).encoded()
            bytes.replaceSubrange(5..<9, with: Array("LSYX".utf8))
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(bytes)
            try target.expectError(.badHandshake, on: connection, after: "a HELLO with magic LSYX")
            try target.expectStillServing(after: "a bad magic")
            return .pass(nil)
        },
        ConformanceCase("5.1", "handshake.malformed-hello", "a HELLO with role code 9 is refused with ERROR malformed") { target in
            var bytes = ConformanceTarget.hello(target.runner, capabilities: [.seals], vector: VersionVector()).encoded()
            bytes[15 + target.runner.nodeID.utf8.count] = 9
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(bytes)
            try target.expectError(.malformed, on: connection, after: "a HELLO with role code 9")
            try target.expectStillServing(after: "a malformed HELLO")
            return .pass(nil)
        },
        ConformanceCase("7.1", "handshake.second-hello", "a second HELLO in an open session is refused with ERROR unexpected_message") { target in
            let (connection, _) = try target.open()
            defer { connection.close() }
            _ = connection.send(ConformanceTarget.hello(target.runner, capabilities: [.seals, .receivesEntries], vector: target.knownVector))
            try target.expectError(.unexpectedMessage, on: connection, after: "a second HELLO")
            try target.expectStillServing(after: "a second HELLO")
            return .pass(nil)
        },
        ConformanceCase("1.2", "handshake.identity-binding", "a HELLO naming another node than the one the TLS key is trusted as is refused with ERROR not_trusted") { target in
            var other = target.runner
            other.nodeID = Identifier.make(role: other.role, random: target.random)
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(ConformanceTarget.hello(other, capabilities: [.seals], vector: VersionVector()))
            try target.expectError(.notTrusted, on: connection, after: "a HELLO naming \(other.nodeID) with the key of \(target.runner.nodeID)")
            try target.expectStillServing(after: "a HELLO under another node ID")
            return .pass(nil)
        },
        ConformanceCase("7.2", "handshake.own-incarnation", "a HELLO claiming the target's own incarnation is refused with ERROR identity_conflict") { target in
            var copy = target.runner
            copy.incarnation = target.firstHello.incarnation
            let connection = try target.connect()
            defer { connection.close() }
            _ = connection.send(ConformanceTarget.hello(copy, capabilities: [.seals], vector: VersionVector()))
            try target.expectError(.identityConflict, on: connection, after: "a HELLO with the target's incarnation \(copy.incarnation)")
            try target.expectStillServing(after: "a HELLO with the target's incarnation")
            return .pass(nil)
        },
        ConformanceCase("5.5", "session.ping-pong", "a PING is answered by a PONG with the same nonce") { target in
            let (connection, _) = try target.open()
            defer { connection.close() }
            let nonce = target.random.nextUInt64()
            _ = connection.send(.ping(nonce: nonce))
            let answered = try target.waitFor("PONG \(nonce)", on: connection) { message -> UInt64? in
                if case .pong(let got) = message { return got }
                return nil
            }
            guard answered == nonce else { throw ConformanceFailure("PING \(nonce) answered by PONG \(answered) (§5.6: the nonce of the PING it answers)", connection) }
            return .pass(nil)
        },
        ConformanceCase("7.9", "session.duplicate-connection", "a second session of the same dialler replaces the first, which ends with ERROR duplicate_connection") { target in
            let (first, _) = try target.open()
            defer { first.close() }
            // The first must be open on the target's side before the second: a PONG proves it.
            _ = first.send(.ping(nonce: 7))
            try target.waitFor("PONG 7 on the first session", on: first) { if case .pong = $0 { return true }; return nil }
            let (second, _) = try target.open()
            defer { second.close() }
            try target.expectError(.duplicateConnection, on: first, after: "a second session from the same node")
            _ = second.send(.ping(nonce: 8))
            try target.waitFor("a PONG on the session that was kept", on: second) { if case .pong = $0 { return true }; return nil }
            return .pass(nil)
        },
    ]
}

/// Every case the runner knows, by group.
package enum ConformanceCases {
    package static var all: [ConformanceCase] { handshake + framing + delta + merge + fields + badInput + ownOrigin + seals + history + recordings + recordingSend + timers }
}
