import Glibc
import LifeSync
import LifeSyncAPI

/// Runs a `NodeCore` over real TCP: one thread, one poll(2) loop over the listening socket and
/// every connection, non-blocking sockets with per-connection output buffers. The replica is
/// only ever touched from this thread. What a peer can make it hold is bounded (`Limits`):
/// output queued for a peer that does not read, connections in all and per address, and a
/// listener that cannot accept backs off rather than spinning.
///
/// ```swift
/// let server = try NodeServer(replica: replica, configuration: config, listen: "127.0.0.1:0") { print($0) }
/// print(server.listeningAddress!)     // "127.0.0.1:41234"
/// server.run()                         // until requestStop()
/// ```
public final class NodeServer: @unchecked Sendable {
    package let core: NodeCore
    /// The node's key: what peers pin, and what signs its recordings.
    public let key: NodeKey
    /// The TLS profile every peer connection uses, with `key`.
    package let tls: TLSContext
    let log: (String) -> Void
    /// The accept side (`Listener`), when the node listens.
    var listener: Listener?
    public private(set) var listeningAddress: String?
    var connections: [Int: PeerConnection] = [:]
    var nextConnectionID = 1
    private let stopFlag = Lock()
    private var stopRequested = false
    /// How long a dial may take before it counts as failed.
    public var connectTimeout: Int64 = 5_000
    public let limits: Limits
    /// `limits.maximumConnections`, lowered to fit RLIMIT_NOFILE at start.
    let connectionCap: Int
    /// Bytes read per connection per readiness (`limits.readSize`): bounds how much one peer can
    /// make us hold. Two full batches fit (see `read`).
    private var readBuffer: [UInt8]
    /// The read buffer while over the input budget (`Limits.budgetReadSize`).
    private var budgetReadBuffer: [UInt8]
    /// Unfinished frames held by all sessions, kept current read by read (`NodeServer+Budget`).
    var inputBudget: InputBudget
    /// Output queued for all connections at the start of this round.
    var totalQueued = 0
    /// When free heap memory is next looked at, to be given back (`giveMemoryBack`).
    var nextTrim: Int64 = 0
    /// Whether the node synced since the last turn of `giveMemoryBack` (a read or a send larger
    /// than keepalives, `Limits.keepaliveBytes`), and whether the page cache went back since.
    var syncedSinceTrim = false
    var cacheGivenBack = false
    var stats = Statistics()
    /// Counters for `GET /metrics`, kept on the loop's thread (the HTTP API reads them there).
    package internal(set) var metrics = NodeMetrics()
    private var publishedStats = Statistics()
    private let statsLock = Lock()
    /// The UDP port of LAN discovery (`Announcement.port`; see `NodeDiscovery`).
    let discoveryPort: UInt16
    /// The LifeLog HTTP API, when served (`serveHTTP`): another participant of `run`'s loop.
    package internal(set) var http: HTTPServer?
    /// Wakes the loop when an incoming chunk was checked on its file's queue (`QueuedFileWriter`).
    let waker: LoopWaker
    /// The connections of this round's interests, in their order, after the listener if polled.
    private var polled: (listener: Bool, connections: [PeerConnection]) = (false, [])

    /// Binds the listening socket (if `listen` is given) so the port is known before `run`.
    /// Recordings live in a folder beside the replica (`<replica>.recordings`); temporary files
    /// of downloads that can no longer resume are removed here (see `removeOrphanedTemporaries`),
    /// and copies marked damaged that check out again are offered again.
    /// The node's key is `key`, or the one beside the replica (`<replica>.key`, made on first
    /// use); an in-memory replica without `key` gets one for this run only.
    /// LAN discovery runs when `configuration.discovery` is on and the listener is not on
    /// loopback (`NodeDiscovery`), on `discoveryPort`.
    /// Every line `log` receives starts with `[name] `, so the lines of several nodes in one
    /// process stay apart; `name` defaults to `NodeServer.defaultName(of:)` ("phone_550e8400").
    public init(replica: Replica, configuration: NodeConfiguration, listen: String?, limits: Limits = Limits(), key: NodeKey? = nil,
                discoveryPort: UInt16 = Announcement.port, name: String? = nil, log: @escaping (String) -> Void) throws {
        let nodeID = replica.identity.nodeID
        let prefix = "[\(name ?? NodeServer.defaultName(of: nodeID))] "
        let log: (String) -> Void = { line in log(prefix + line) }
        let key = try key ?? (replica.path == ":memory:" ? NodeKey.generate(nodeID: nodeID)
                                                         : NodeKey.loadOrCreate(path: NodeKey.path(forReplica: replica.path), nodeID: nodeID))
        self.key = key
        tls = try TLSContext(key: key)
        // The key that signs this node's recordings; recordings attached before they were signed
        // are signed now, so peers of protocol version 2 take them.
        if let evidence = try replica.startFreshIfRestoredNow() {
            log("this replica was restored from an older copy (\(evidence)): serving under a new incarnation, \(replica.identity.incarnation)")
        }
        let signed = try replica.adoptSigningKey(key)
        if signed > 0 { log("signed \(signed) recording(s) attached before recordings were signed") }
        let storage = replica.path == ":memory:" ? nil : try FileRecordingStorage(replicaPath: replica.path)
        if let storage {
            let removed = storage.removeOrphanedTemporaries { id in (try? replica.recordingFile(id: id))?.state == .partial }
            if !removed.isEmpty {
                log("removed \(removed.count) orphaned temporary file(s) from \(storage.incoming): \(removed.prefix(8).joined(separator: ", "))"
                    + (removed.count > 8 ? ", …" : ""))
            }
            let restored = try replica.recheckDamagedRecordings(in: storage)
            if !restored.isEmpty { log("\(restored.count) recording(s) marked damaged check out again and are offered again: \(restored.prefix(8).joined(separator: ", "))") }
            let copies = try replica.reconcileStoredCopies(in: storage)
            if !copies.adopted.isEmpty { log("\(copies.adopted.count) recording(s) found intact in \(storage.folder), which the replica did not count as held (restored from an older copy?): \(copies.adopted.prefix(8).joined(separator: ", "))") }
            if !copies.missing.isEmpty { log("\(copies.missing.count) recording(s) the replica counted as held are missing from \(storage.folder) and are awaited from peers again: \(copies.missing.prefix(8).joined(separator: ", "))") }
        }
        let waker = try LoopWaker()
        storage?.onVerdict = { waker.wake() }
        self.waker = waker
        core = NodeCore(replica: replica, configuration: configuration, random: SystemRandom(), now: MonotonicClock.milliseconds(), storage: storage)
        self.log = log
        self.limits = limits
        inputBudget = InputBudget(limit: limits.maximumBufferedInput, stalledTimeout: limits.stalledFrameTimeout)
        self.discoveryPort = discoveryPort
        readBuffer = [UInt8](repeating: 0, count: max(64 * 1024, limits.readSize))
        budgetReadBuffer = [UInt8](repeating: 0, count: max(1, min(limits.budgetReadSize, limits.readSize)))
        var fileLimit = rlimit()
        let softLimit = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &fileLimit) == 0 && fileLimit.rlim_cur != rlim_t.max
            ? Int(clamping: fileLimit.rlim_cur) : nil
        connectionCap = limits.connectionCap(fileLimit: softLimit)
        stats.connectionCap = connectionCap
        publishedStats = stats
        if let listen {
            let address = try SocketAddress(parsing: listen)
            let listener = try Listener(on: address, backoff: limits.acceptBackoff, maximumBackoff: limits.maximumAcceptBackoff,
                                        refusalLogInterval: limits.refusalLogInterval, log: log)
            self.listener = listener
            listeningAddress = listener.address
        }
    }

    /// A node's name in its log lines when its embedder gives none: its role and the first
    /// eight hex digits of its ID (`phone_550e8400` for `phone_550e8400-e29b-…`), short and
    /// still telling two phones apart.
    public static func defaultName(of nodeID: String) -> String { Identifier.short(nodeID) }

    /// What the node holds now (as of the last poll round); safe from any thread.
    public var statistics: Statistics { statsLock.withLock { publishedStats } }

    deinit {
        for connection in connections.values { connection.stream.close() }
        listener?.close()
    }

    /// Asks `run` to shut down cleanly; safe from any thread or a signal-watching loop.
    public func requestStop() {
        stopFlag.withLock { stopRequested = true }
    }

    private var shouldStop: Bool { stopFlag.withLock { stopRequested } }

    /// Runs until `requestStop()` or `externalStop()` returns true, then closes every peer cleanly.
    public func run(externalStop: () -> Bool = { false }) {
        let discovery = NodeDiscovery.make(for: self, port: discoveryPort)
        let loop = PollLoop(participants: [waker, self] + (discovery.map { [$0] } ?? []) + (http.map { [$0] } ?? []))
        execute(core.start(now: MonotonicClock.milliseconds()))
        while !shouldStop && !externalStop() {
            loop.runOnce(maximumWait: 100)
        }
        execute(core.shutdown(now: MonotonicClock.milliseconds()))
        // Give the ERROR frames a moment to leave, bounded.
        let deadline = MonotonicClock.milliseconds() + 500
        while connections.values.contains(where: { $0.hasOutput }) && MonotonicClock.milliseconds() < deadline {
            loop.runOnce(maximumWait: 20)
        }
        for connection in connections.values { connection.stream.close() }
        connections.removeAll()
        listener?.close()
        listener = nil
        http?.stop()
    }

    /// One round of a poll loop with this server as its only participant (`run`'s loop).
    func pollOnce(maximumWait: Int64) { PollLoop(participants: [waker, self] + (http.map { [$0] } ?? [])).runOnce(maximumWait: maximumWait) }

    /// Stops reading from a connection whose queued output is over the bound, resumes once it
    /// is below half: a peer that sends without reading then meets TCP's own back-pressure.
    private func updateReadPause(_ connection: PeerConnection) {
        if connection.readPaused {
            if connection.queued <= limits.maximumQueuedOutput / 2 && !chargedForTotalOutput(connection) { connection.readPaused = false }
        } else if connection.queued > limits.maximumQueuedOutput || chargedForTotalOutput(connection) {
            connection.readPaused = true
            if !connection.pausedBefore {
                connection.pausedBefore = true
                log("\(connection.remote) leaves \(connection.queued) bytes of our output unread; not reading from it until that drains")
            }
        }
    }

    private func publishStatistics() {
        stats.connections = connections.count
        stats.queuedOutputBytes = 0
        stats.pausedConnections = 0
        for connection in connections.values {
            stats.queuedOutputBytes += connection.queued
            if connection.readPaused { stats.pausedConnections += 1 }
        }
        stats.listenerPaused = listener?.pausedUntil != nil
        stats.acceptFailures = listener?.failures ?? 0
        stats.listenerPolls = listener?.polls ?? 0
        stats.bufferedInputBytes = inputBudget.total
        let snapshot = stats
        statsLock.withLock { publishedStats = snapshot }
    }

    /// Drains what the stream holds, up to the read buffer, into one call of the core: batches
    /// that arrived while the last one was being stored then reach the session together, and it
    /// commits them together. Small pieces (`Limits.budgetReadSize`) while over the input budget,
    /// and from a peer whose last read was mostly tiny frames (`Limits.tinyFrameBytes`).
    private func read(_ connection: PeerConnection, now: Int64) {
        if waitsForInputBudget(connection) { return }  // its unfinished frame waits for room
        let small = inputBudget.isSpent || connection.sendsTinyFrames
        let (filled, ended) = small ? connection.stream.readAvailable(into: &budgetReadBuffer)
                                    : connection.stream.readAvailable(into: &readBuffer)
        if filled > 0 {
            if filled > limits.keepaliveBytes { syncedSinceTrim = true }
            metrics.received(bytes: filled)
            let started = MonotonicClock.seconds()
            let actions = small ? core.received(connection: connection.id, bytes: budgetReadBuffer[0..<filled], now: now)
                                : core.received(connection: connection.id, bytes: readBuffer[0..<filled], now: now)
            if NodeMetrics.appliedBatch(actions) { metrics.observeApply(seconds: MonotonicClock.seconds() - started) }
            connection.sendsTinyFrames = actions.count > filled / max(1, limits.tinyFrameBytes)
            execute(actions)
            noteHeldInput(connection, now: now)
        }
        if ended, connections[connection.id] != nil { closeNow(connection, now: now) }
    }

    private func flush(_ connection: PeerConnection, now: Int64) {
        switch connection.flush() {
        case .blocked: return
        case .failed: closeNow(connection, now: now)
        case .drained: if connection.closeWhenFlushed != nil { closeNow(connection, now: now) }
        }
    }

    /// Drops the connection and tells the core.
    func closeNow(_ connection: PeerConnection, now: Int64) {
        drop(connection)
        execute(core.closed(connection: connection.id, now: now))
    }

    func drop(_ connection: PeerConnection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        connection.stream.close()
        releaseBudget(of: connection)
    }

    /// Carries out the core's actions. Frames are queued as they come and each connection is
    /// flushed once at the end, so many small replies (PONGs, acknowledgements) leave in a few
    /// writes rather than one system call and one segment each.
    func execute(_ actions: [NodeAction]) {
        var sentTo: [Int] = []
        defer {
            for id in sentTo {
                guard let connection = connections[id] else { continue }
                if connection.writable { flush(connection, now: MonotonicClock.milliseconds()) }
                stats.largestQueuedOutput = max(stats.largestQueuedOutput, connection.queued)
            }
        }
        for action in actions {
            metrics.record(action)
            switch action {
            case .connect(let peer, let address):
                do {
                    let fd = try Socket.startConnect(to: try SocketAddress(parsing: address))
                    let stream: TLSStream
                    do { stream = try tls.stream(fd: fd, dialing: true) } catch { close(fd); throw error }
                    let connection = PeerConnection(stream: stream, id: nextConnectionID, remote: address)
                    nextConnectionID += 1
                    connection.dialing = (peer, MonotonicClock.milliseconds() + connectTimeout)
                    connections[connection.id] = connection
                } catch {
                    execute(core.connectFailed(peer: peer, reason: "\(error)", now: MonotonicClock.milliseconds()))
                }
            case .send(let id, let bytes):
                guard let connection = connections[id] else { continue }
                if bytes.count > limits.keepaliveBytes { syncedSinceTrim = true }
                if sentTo.last != id && !sentTo.contains(id) { sentTo.append(id) }
                connection.enqueue(bytes)
            case .close(let id):
                guard let connection = connections[id] else { continue }
                if connection.hasOutput && connection.writable { flush(connection, now: MonotonicClock.milliseconds()) }
                guard connections[id] != nil else { continue }  // the flush found it closed
                if connection.hasOutput {
                    if connection.closeWhenFlushed == nil { connection.closeWhenFlushed = MonotonicClock.milliseconds() + limits.closeLinger }
                    connection.stream.shutdownReading()
                } else {
                    closeNow(connection, now: MonotonicClock.milliseconds())
                }
            case .event(let event):
                log(event.logLine(naming: core.replica.deviceLabel))
            case .replicaChanged:
                http?.replicaChanged()
            case .sessionEvent:
                break
            }
        }
    }
}

extension NodeServer: PollParticipant {
    /// The listener (unless backing off after accept failed) and every connection: input unless
    /// closing or paused for unread output, output while dialling or holding output.
    func interests(now: Int64) -> (interests: [PollLoop.Interest], deadline: Int64?) {
        // A burst's text catch-up goes on a step each turn, between the events that come in.
        var deadline = core.replica.textCatchUpDue ? now : core.nextDeadline
        var interests: [PollLoop.Interest] = []
        var pollListener = false
        if let listener {
            let (poll, pausedUntil) = listener.shouldPoll(now: now)
            if let pausedUntil { deadline = min(deadline ?? pausedUntil, pausedUntil) }
            if poll { interests.append(PollLoop.Interest(fd: listener.fd, events: Int16(POLLIN))) }
            pollListener = poll
        }
        let ordered = connections.values.sorted { $0.id < $1.id }
        totalQueued = ordered.reduce(0) { $0 + $1.queued }
        inputBudget.chooseFinishing(now: now)
        if let turnEnds = inputBudget.turnEnds { deadline = min(deadline ?? turnEnds, turnEnds) }
        for connection in ordered {
            if let linger = connection.closeWhenFlushed { deadline = min(deadline ?? linger, linger) }
            updateReadPause(connection)
            var events: Int16 = 0
            // Reading is shut once a close is under way, and paused while the output is over the bound.
            if let opening = connection.handshake?.opening, connection.dialing == nil {
                deadline = min(deadline ?? opening.deadline, opening.deadline)
                interests.append(opening.interest(connection.stream))
                continue
            }
            if let expiry = preAuthenticationExpiry(connection) { deadline = min(deadline ?? expiry, expiry) }
            if connection.closeWhenFlushed == nil && !connection.readPaused && !waitsForInputBudget(connection) {
                events |= Int16(POLLIN)
                // Decrypted input waiting inside TLS: poll cannot see it, so do not wait.
                if connection.stream.hasBufferedInput { deadline = now }
            }
            if connection.dialing != nil || connection.hasOutput || connection.stream.wantsWritable { events |= Int16(POLLOUT) }
            interests.append(PollLoop.Interest(fd: connection.fd, events: events))
        }
        polled = (pollListener, ordered)
        return (interests, deadline)
    }

    func ready(_ revents: [Int16], now: Int64) {
        let (pollListener, ordered) = polled
        precondition(revents.count == ordered.count + (pollListener ? 1 : 0), "readiness for every interest")
        var index = 0
        if pollListener {
            if revents[0] & Int16(POLLIN) != 0 { acceptAll(now: now) }
            index = 1
        }
        for connection in ordered {
            let events = revents[index]
            index += 1
            guard connections[connection.id] != nil else { continue }
            if let dialing = connection.dialing {
                if events & (Int16(POLLOUT) | Int16(POLLERR) | Int16(POLLHUP)) != 0 {
                    connection.dialing = nil
                    if let failure = Socket.finishConnect(connection.fd) {
                        drop(connection)
                        execute(core.connectFailed(peer: dialing.peer, reason: failure, now: now))
                    } else {
                        connection.handshake = (dialing.peer, TLSOpening(sniffing: nil, now: now, timeout: limits.handshakeTimeout))
                        stepHandshake(connection, now: now)
                    }
                } else if now > dialing.deadline {
                    drop(connection)
                    execute(core.connectFailed(peer: dialing.peer, reason: "timed out", now: now))
                }
                continue
            }
            if connection.handshake != nil {
                stepHandshake(connection, now: now)
                continue
            }
            if let expiry = preAuthenticationExpiry(connection), now > expiry {
                // A stranger that got through TLS and sent no HELLO (or never read our refusal).
                closeNow(connection, now: now)
                noteRefusal(remote: connection.remote, reason: "not proven a paired peer within \(limits.preAuthenticationTimeout) ms", now: now)
                continue
            }
            let failed = events & (Int16(POLLHUP) | Int16(POLLERR)) != 0
            if events & Int16(POLLOUT) != 0 || (failed && connection.hasOutput) {
                connection.writable = true
                flush(connection, now: now)
            }
            guard connections[connection.id] != nil else { continue }
            if connection.closeWhenFlushed != nil || connection.readPaused {
                // Not reading: an error or hang-up that the flush did not already act on ends it,
                // and so does a close whose output the peer left unread past the linger.
                if failed || now >= (connection.closeWhenFlushed ?? .max) { closeNow(connection, now: now) }
                continue
            }
            if events & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 || connection.stream.hasBufferedInput
                || (connection.stream.wantsWritable && events & Int16(POLLOUT) != 0) {
                read(connection, now: now)
            }
        }
        execute(core.tick(now: MonotonicClock.milliseconds()))
        closeStalledFrames(now: now)
        giveMemoryBack(now: now)
        _ = try? core.replica.stepTextCatchUp()
        publishStatistics()
    }
}
