import Glibc
import LifeSync
import LifeSyncRuntime

/// The node under test as the cases see it: where it is, who the runner is to it, and the steps
/// every case is made of (connect, say HELLO, push, pull, expect an ERROR). The runner holds no
/// replica state between runs: it writes under three origins of its own node
/// (`ConformanceTarget+Origins.swift`) and takes up their sequences where the target's HELLO
/// says it holds them.
package final class ConformanceTarget {
    package let address: SocketAddress
    let tls: TLSContext
    /// The runner's node key, which `tls` presents and which signs its recordings.
    let key: NodeKey
    /// The runner, as the target trusts it.
    package let runner: ReplicaIdentity
    /// The target, as the runner's trust store names its key.
    package let trusted: TrustedPeer
    package let timeout: Double
    let random: RandomSource
    let wallClock: WallClock
    /// The target's HELLO on the first connection of the run.
    package let firstHello: Hello
    /// The join of the target's HELLO vectors so far: claiming it makes the target send only what is
    /// new since (`readBack`).
    package private(set) var knownVector: VersionVector

    /// `--listen`: the socket the node under test dials; nil when the runner dials.
    let listener: Int32?
    /// A connection accepted but not yet handed to a case, with the HELLO it opened with.
    var pending: (connection: ProbeConnection, hello: Hello)?
    /// What one client case leaves the next (`--listen` cases run in order on the dialler's sessions).
    var held: ProbeConnection?
    var clientAcked: (origin: String, sequence: UInt64)?
    /// Per origin of the runner, the last sequence handed out this run (`sequences`).
    var issued: [String: UInt64] = [:]

    init(address: SocketAddress, tls: TLSContext, key: NodeKey, runner: ReplicaIdentity, trusted: TrustedPeer, firstHello: Hello,
         timeout: Double, random: RandomSource, wallClock: WallClock, listener: Int32?) {
        self.address = address
        self.tls = tls
        self.key = key
        self.runner = runner
        self.trusted = trusted
        self.firstHello = firstHello
        knownVector = firstHello.vector
        self.timeout = timeout
        self.random = random
        self.wallClock = wallClock
        self.listener = listener
    }

    deinit {
        if let listener { Glibc.close(listener) }
    }

    /// Connects once: the keys must be paired both ways, or this throws a `PairingProblem`
    /// naming the `lifesync trust` command that is missing.
    package static func dialling(_ address: SocketAddress, key: NodeKey, runner: ReplicaIdentity, trustedPeers: [TrustedPeer],
                                timeout: Double, random: RandomSource, wallClock: WallClock) throws -> ConformanceTarget {
        let tls = try TLSContext(key: key)
        let probe = try ProbeConnection(to: address, context: tls, timeout: timeout)
        defer { probe.close() }
        guard let peer = trustedPeers.first(where: { $0.fingerprint == probe.peerKey }) else {
            throw PairingProblem.runnerDoesNotTrust(probe.peerKey)
        }
        _ = probe.send(Self.hello(runner, capabilities: [.seals], vector: VersionVector()))
        switch probe.next() {
        case .message(.hello(let hello)):
            return ConformanceTarget(address: address, tls: tls, key: key, runner: runner, trusted: peer, firstHello: hello,
                                     timeout: timeout, random: random, wallClock: wallClock, listener: nil)
        case .message(.error(let code, let text)) where code == ErrorCode.notTrusted.rawValue:
            throw PairingProblem.targetDoesNotTrust(text)
        case let other:
            throw ConformanceFailure("the target did not answer the runner's HELLO with its own: \(Self.describe(other))", probe)
        }
    }

    /// Listens on `address` and waits (`timeout` at most) for the node under test to dial in:
    /// its key must be trusted here, and it must trust the runner (else it sends ERROR
    /// `not_trusted` instead of its HELLO, §1.2).
    package static func listening(_ address: SocketAddress, key: NodeKey, runner: ReplicaIdentity, trustedPeers: [TrustedPeer],
                                 timeout: Double, random: RandomSource, wallClock: WallClock,
                                 ready: (String) -> Void = { _ in }) throws -> ConformanceTarget {
        let tls = try TLSContext(key: key)
        let fd = try Socket.listen(on: address, backlog: 4)
        ready(Socket.localAddress(fd))
        let connection: ProbeConnection
        do { connection = try accept(fd, tls: tls, timeout: timeout) } catch {
            Glibc.close(fd)
            throw error
        }
        guard let peer = trustedPeers.first(where: { $0.fingerprint == connection.peerKey }) else {
            Glibc.close(fd)
            throw PairingProblem.runnerDoesNotTrust(connection.peerKey)
        }
        switch connection.next() {
        case .message(.hello(let hello)):
            let target = ConformanceTarget(address: address, tls: tls, key: key, runner: runner, trusted: peer, firstHello: hello,
                                           timeout: timeout, random: random, wallClock: wallClock, listener: fd)
            target.pending = (connection, hello)
            return target
        case .message(.error(let code, let text)) where code == ErrorCode.notTrusted.rawValue:
            Glibc.close(fd)
            throw PairingProblem.targetDoesNotTrust(text)
        case let other:
            Glibc.close(fd)
            throw ConformanceFailure("the node that dialled in did not open with its HELLO: \(Self.describe(other))", connection)
        }
    }

    /// The next connection dialled in, TLS done, within `timeout`.
    static func accept(_ listener: Int32, tls: TLSContext, timeout: Double) throws -> ProbeConnection {
        let deadline = MonotonicClock.seconds() + timeout
        while true {
            switch Socket.accept(listener) {
            case .accepted(let fd, _, _): return try ProbeConnection(accepted: fd, context: tls, timeout: timeout)
            case .failed(let code): throw TLSDialer.Failure(description: "accept: \(String(cString: strerror(code)))")
            case .none:
                let left = Int32((deadline - MonotonicClock.seconds()) * 1000)
                guard left > 0 else { throw TLSDialer.Failure(description: "no node dialled in within \(timeout) s") }
                var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, min(left, 100))
            }
        }
    }

    /// Why the runner cannot start: the two nodes are not paired.
    package enum PairingProblem: Error {
        case runnerDoesNotTrust(SHA256.Digest)
        case targetDoesNotTrust(String)
    }

    // MARK: Connections

    /// A new connection: dialled, or with `--listen` the next one the node under test dials.
    package func connect() throws -> ProbeConnection {
        guard let listener else { return try ProbeConnection(to: address, context: tls, timeout: timeout) }
        return try Self.accept(listener, tls: tls, timeout: timeout)
    }

    /// A HELLO as `identity` (the runner unless a case says otherwise).
    static func hello(_ identity: ReplicaIdentity, capabilities: Capabilities, vector: VersionVector,
                      minimum: UInt16 = ProtocolVersion.minimum, maximum: UInt16 = ProtocolVersion.maximum) -> Message {
        .hello(Hello(minimumVersion: minimum, maximumVersion: maximum, nodeID: identity.nodeID, role: identity.role,
                     incarnation: identity.incarnation, capabilities: capabilities, clock: .zero, vector: vector))
    }

    /// A new session: the runner's HELLO (claiming `vector`, by default everything the target
    /// last said it holds, so it has nothing to send), then the target's, which must come first.
    package func open(vector: VersionVector? = nil, capabilities: Capabilities = [.seals, .receivesEntries]) throws -> (ProbeConnection, Hello) {
        let connection = try connect()
        _ = connection.send(Self.hello(runner, capabilities: capabilities, vector: vector ?? knownVector))
        let hello = try expectHello(on: connection)
        return (connection, hello)
    }

    /// The target's HELLO as the first frame it sends.
    func expectHello(on connection: ProbeConnection) throws -> Hello {
        switch connection.next() {
        case .message(.hello(let hello)):
            knownVector = knownVector.joined(with: hello.vector)
            return hello
        case let other:
            throw ConformanceFailure("expected the target's HELLO as its first frame, got \(Self.describe(other))", connection)
        }
    }

    /// Reads until `match` takes a message, passing over what it does not take. An ERROR, a
    /// close, an undecodable frame or silence past the step's timeout is a failure, `what`
    /// saying what was awaited. At most `limit` messages are passed over.
    @discardableResult
    func waitFor<T>(_ what: String, on connection: ProbeConnection, limit: Int = 100_000, _ match: (Message) throws -> T?) throws -> T {
        for _ in 0..<limit {
            let arrival = connection.next()
            if case .message(let message) = arrival {
                if let found = try match(message) { return found }
                if case .error = message {} else { continue }
            }
            throw ConformanceFailure("waiting for \(what), got \(Self.describe(arrival))", connection)
        }
        throw ConformanceFailure("waiting for \(what): \(limit) other messages came instead", connection)
    }

    /// The ERROR a conforming target sends for what the case just sent, then the close that
    /// follows it (§7.8). Frames before the ERROR (its HELLO, CAUGHT_UP) are passed over.
    @discardableResult
    func expectError(_ code: ErrorCode, on connection: ProbeConnection, after what: String) throws -> String {
        for _ in 0..<1_000 {
            let arrival = connection.next()
            switch arrival {
            case .message(.error(let got, let text)):
                guard got == code.rawValue else {
                    throw ConformanceFailure("after \(what), expected ERROR \(code) (\(code.rawValue)), got ERROR \(Self.codeName(got)) (\(got)) \"\(text)\"", connection)
                }
                guard case .closed = connection.next() else {
                    throw ConformanceFailure("after \(what), the target sent ERROR \(code) but did not close the connection (§7.8)", connection)
                }
                return text
            case .message(.hello), .message(.caughtUp), .message(.batch), .message(.ping), .message(.pong):
                continue
            default:
                throw ConformanceFailure("after \(what), expected ERROR \(code) (\(code.rawValue)), got \(Self.describe(arrival))", connection)
            }
        }
        throw ConformanceFailure("after \(what), expected ERROR \(code): too many other frames", connection)
    }

    /// After a refusal the node still serves: a new connection completes a handshake (§6).
    func expectStillServing(after what: String) throws {
        let connection: ProbeConnection
        do { connection = try connect() } catch {
            throw ConformanceFailure("after \(what), a new connection failed: \(error)")
        }
        defer { connection.close() }
        _ = connection.send(Self.hello(runner, capabilities: [.seals], vector: VersionVector()))
        do { _ = try expectHello(on: connection) } catch let failure as ConformanceFailure {
            throw ConformanceFailure("after \(what), the target no longer serves a second client: " + failure.description)
        }
    }

    // MARK: What the runner writes

    package func newEntryID() -> String { "conformance_" + Identifier.uuidV4(random: random) }

    /// Now, as an HLC of the runner's wall clock (counter 0).
    package var now: HLCTimestamp { HLCTimestamp(milliseconds: wallClock.nowMilliseconds(), counter: 0) }

    /// A valid entry in canonical JSON (§5.2.2): members sorted, no whitespace, UTC with milliseconds.
    package func entryJSON(id: String, text: String, extra: String = "") -> [UInt8] {
        precondition(text.allSatisfy { $0.isASCII && $0 != "\"" && $0 != "\\" && $0 >= " " }, "plain text needs no escapes")
        let time = Timestamp(millisecondsSince1970: wallClock.nowMilliseconds()).iso8601
        return Array(("{\"data\":{" + extra + "\"text\":\"\(text)\"},\"device_id\":\"\(runner.nodeID)\",\"id\":\"\(id)\","
                      + "\"recorded_at\":\"\(time)\",\"source\":\"conformance\",\"timestamp\":\"\(time)\"}").utf8)
    }

    /// A write of `origin`: a new entry, or a version of `id` that has seen `seen` (its vector).
    package func change(id: String, origin: String, sequence: UInt64, hlc: HLCTimestamp? = nil, seen: VersionVector = VersionVector(),
                       deleted: Bool = false, text: String = "conformance") -> EncodedChange {
        var vector = seen
        vector[origin] = max(vector[origin], sequence)
        return EncodedChange(id: id, stamp: VersionStamp(hlc: hlc ?? now, origin: origin, sequence: sequence, vector: vector, deleted: deleted),
                             payload: deleted ? [] : entryJSON(id: id, text: text))
    }

    /// A BATCH frame of the runner's changes, its origins named as the runner's node and sealed
    /// by the runner's key (§5.2.5); `through` by default each origin's highest sequence in it.
    package func batch(_ id: UInt64, _ changes: [EncodedChange], through: VersionVector? = nil) -> [UInt8] {
        var covered = VersionVector()
        for change in changes { covered[change.stamp.origin] = max(covered[change.stamp.origin], change.stamp.sequence) }
        let origins = Set(changes.map(\.stamp.origin)).sorted().map { OriginInfo(origin: $0, nodeID: runner.nodeID, role: runner.role) }
        return Message.encodedBatch(id: id, origins: origins, changes: changes, through: through ?? covered, seals: seals(over: changes))
    }

    /// The runner's seals over `changes`, as their origin's owner.
    func seals(over changes: [EncodedChange]) -> [Seal] {
        // The runner's key signs in memory; a failure here is OpenSSL failing, not the target.
        (try? Seal.sealing(changes, as: runner.nodeID, signer: key)) ?? []
    }

    /// Sends BATCH `id` and waits for its ACK.
    @discardableResult
    func push(_ changes: [EncodedChange], id: UInt64 = 1, on connection: ProbeConnection) throws -> Ack {
        _ = connection.send(batch(id, changes))
        return try waitFor("ACK of BATCH \(id)", on: connection) { message in
            guard case .ack(let ack) = message else { return nil }
            guard ack.batchID == id else { throw ConformanceFailure("expected ACK \(id), got ACK \(ack.batchID)", connection) }
            return ack
        }
    }

    /// Pushes each group as its own batch on one new session, each acknowledged before the next.
    func pushAll(_ groups: [[EncodedChange]]) throws {
        try requireReceivesEntries()
        let (connection, _) = try open()
        defer { connection.close() }
        for (i, group) in groups.enumerated() { try push(group, id: UInt64(i + 1), on: connection) }
    }

    func requireReceivesEntries() throws {
        guard firstHello.capabilities.contains(.receivesEntries) else {
            throw ConformanceSkip("the target's HELLO does not set receives_entries: it takes no changes (§7.3)")
        }
    }

    // MARK: Describing

    static func codeName(_ code: UInt16) -> String { ErrorCode(rawValue: code)?.description ?? "unknown code" }

    static func describe(_ arrival: ProbeConnection.Arrival) -> String {
        switch arrival {
        case .message(.error(let code, let text)): return "ERROR \(codeName(code)) (\(code)) \"\(text)\""
        case .message(let message): return "\(message.type)"
        case .undecodable(let error, _): return "a frame that does not decode: \(error)"
        case .closed: return "the connection closed"
        case .silent: return "nothing within the step's timeout"
        }
    }
}
