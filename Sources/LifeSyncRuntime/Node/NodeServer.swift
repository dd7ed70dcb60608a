import Glibc
import LifeSync

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
    private final class Connection {
        let fd: Int32
        let id: Int
        let remote: String
        /// The remote host of an accepted connection (for the per-address cap); nil for our dials.
        let acceptedFrom: String?
        /// Set while a dial is in progress.
        var dialing: (peer: Int, deadline: Int64)?
        /// Frames waiting for the socket, oldest first; `headSent` bytes of the first already
        /// went. Large frames stay separate arrays so a 1 MiB chunk is never copied into a
        /// growing buffer; small ones are packed together so they leave in one send.
        var pending: [[UInt8]] = []
        var headSent = 0
        /// Bytes in `pending` not yet sent.
        var queued = 0
        /// False once a send met a full socket buffer, until poll reports POLLOUT: sends queue
        /// without a system call each meanwhile.
        var writable = true
        /// Not polled for input while its output is over the bound (see `Limits.maximumQueuedOutput`).
        var readPaused = false
        var pausedBefore = false
        /// Set by a close with output still queued: dropped once flushed, or at this time anyway.
        var closeWhenFlushed: Int64?

        init(fd: Int32, id: Int, remote: String, acceptedFrom: String? = nil) {
            self.fd = fd
            self.id = id
            self.remote = remote
            self.acceptedFrom = acceptedFrom
        }

        var hasOutput: Bool { !pending.isEmpty }

        func enqueue(_ frame: [UInt8]) {
            queued += frame.count
            if let last = pending.indices.last, pending[last].count + frame.count <= 64 * 1024 {
                pending[last] += frame
            } else {
                pending.append(frame)
            }
        }
    }

    /// Bounds on what peers can make the node hold. The defaults suit a personal node (a few
    /// devices); tests use small values.
    public struct Limits: Sendable {
        /// Output queued for one connection beyond which the node stops reading from it until the
        /// queue drains below half. A session keeps at most its window in flight: 4 batches of
        /// at most 2 MiB plus 4 recording chunks of 1 MiB (about 12 MiB) plus small replies, so a
        /// peer that reads is never paused at 16 MiB; one that only sends (a PING flood that never
        /// reads the PONGs) can make us queue this much plus the replies to one read (`readSize`).
        public var maximumQueuedOutput = 16 << 20
        /// Bytes read from one connection per readiness, handed to the session in one call. Two
        /// full batches fit, so batches that arrived together are committed together.
        public var readSize = 4 << 20
        /// Open connections (accepted and dialled) beyond which a newly accepted one is closed at
        /// once. Never more than RLIMIT_NOFILE allows minus `reservedFileDescriptors`.
        public var maximumConnections = 128
        /// Accepted connections from one remote address beyond which a new one is closed at once.
        public var maximumConnectionsPerAddress = 8
        /// File descriptors kept out of the connection cap: the standard streams, the listener,
        /// the replica (database, WAL, shared memory, journal), recording files being read or
        /// written, a dial in progress, and what the process embedding the node holds.
        public var reservedFileDescriptors = 32
        /// When accept fails for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM),
        /// the listener is left out of the poll for this long, doubling per failure up to
        /// `maximumAcceptBackoff`, instead of spinning on a connection it cannot take. Ms.
        public var acceptBackoff: Int64 = 100
        public var maximumAcceptBackoff: Int64 = 1_000
        /// A connection closed with output still queued (an ERROR frame) is dropped once that has
        /// left, or after this long if the peer does not read it. Ms.
        public var closeLinger: Int64 = 5_000
        /// At most one line per this interval about refused connections (a flood must not flood
        /// the log); the lines count those refused in between. Ms.
        public var refusalLogInterval: Int64 = 1_000

        public init() {}

        /// The connection cap under a descriptor limit of `fileLimit` (nil: unlimited).
        public func connectionCap(fileLimit: Int?) -> Int {
            guard let fileLimit else { return max(1, maximumConnections) }
            return max(1, min(maximumConnections, fileLimit - reservedFileDescriptors))
        }
    }

    /// What the node holds, for tests and status: published once per poll round.
    public struct Statistics: Sendable, Equatable {
        /// Open connections, accepted and dialled.
        public var connections = 0
        /// Output bytes queued for all connections now.
        public var queuedOutputBytes = 0
        /// The most output ever queued for one connection (after a send was attempted).
        public var largestQueuedOutput = 0
        /// Connections not polled for input because their output is over the bound.
        public var pausedConnections = 0
        /// Accepted connections closed at once because of a connection cap.
        public var refusedConnections = 0
        /// Times accept failed for want of resources and the listener was paused.
        public var acceptFailures = 0
        /// Poll rounds in which the listener was polled.
        public var listenerPolls = 0
        /// Whether the listener is left out of the poll (backing off after accept failed).
        public var listenerPaused = false
        /// The connection cap in force (the configured one, lowered to fit RLIMIT_NOFILE).
        public var connectionCap = 0
    }

    public let core: NodeCore
    private let log: (String) -> Void
    private var listener: Int32 = -1
    public private(set) var listeningAddress: String?
    private var connections: [Int: Connection] = [:]
    private var nextConnectionID = 1
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
    /// Accepts one connection; a seam for tests (a listener that fails with EMFILE).
    var acceptConnection: (Int32) -> Socket.AcceptOutcome = Socket.accept
    /// While set, the listener is not polled: accept failed for want of resources (see `Limits`).
    private var listenerPausedUntil: Int64?
    /// Consecutive accept failures of the current episode (0: none).
    private var acceptFailureStreak = 0
    /// Rate limit of the refusal log lines: when the last went, and how many were refused since.
    private var refusalLoggedAt: Int64?
    private var refusalsUnlogged = 0
    private var stats = Statistics()
    private var publishedStats = Statistics()
    private let statsLock = Lock()

    /// Binds the listening socket (if `listen` is given) so the port is known before `run`.
    /// Recordings live in a folder beside the replica (`<replica>.recordings`); temporary files
    /// of downloads that can no longer resume are removed here (see `removeOrphanedTemporaries`).
    public init(replica: Replica, configuration: NodeConfiguration, listen: String?, limits: Limits = Limits(),
                log: @escaping (String) -> Void) throws {
        let storage = replica.path == ":memory:" ? nil : try FileRecordingStorage(replicaPath: replica.path)
        if let storage {
            let removed = storage.removeOrphanedTemporaries { id in (try? replica.recordingFile(id: id))?.state == .partial }
            if !removed.isEmpty {
                log("removed \(removed.count) orphaned temporary file(s) from \(storage.incoming): \(removed.prefix(8).joined(separator: ", "))"
                    + (removed.count > 8 ? ", …" : ""))
            }
        }
        core = NodeCore(replica: replica, configuration: configuration, random: SystemRandom(), now: MonotonicClock.milliseconds(), storage: storage)
        self.log = log
        self.limits = limits
        readBuffer = [UInt8](repeating: 0, count: max(64 * 1024, limits.readSize))
        var fileLimit = rlimit()
        let softLimit = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &fileLimit) == 0 && fileLimit.rlim_cur != rlim_t.max
            ? Int(clamping: fileLimit.rlim_cur) : nil
        connectionCap = limits.connectionCap(fileLimit: softLimit)
        stats.connectionCap = connectionCap
        publishedStats = stats
        if let listen {
            let address = try SocketAddress(parsing: listen)
            listener = try Socket.listen(on: address)
            listeningAddress = Socket.localAddress(listener)
        }
    }

    /// What the node holds now (as of the last poll round); safe from any thread.
    public var statistics: Statistics { statsLock.withLock { publishedStats } }

    deinit {
        for connection in connections.values { close(connection.fd) }
        if listener >= 0 { close(listener) }
    }

    /// Asks `run` to shut down cleanly; safe from any thread or a signal-watching loop.
    public func requestStop() {
        stopFlag.withLock { stopRequested = true }
    }

    private var shouldStop: Bool { stopFlag.withLock { stopRequested } }

    /// Runs until `requestStop()` or `externalStop()` returns true, then closes every peer cleanly.
    public func run(externalStop: () -> Bool = { false }) {
        execute(core.start(now: MonotonicClock.milliseconds()))
        while !shouldStop && !externalStop() {
            pollOnce(maximumWait: 100)
        }
        execute(core.shutdown(now: MonotonicClock.milliseconds()))
        // Give the ERROR frames a moment to leave, bounded.
        let deadline = MonotonicClock.milliseconds() + 500
        while connections.values.contains(where: { $0.hasOutput }) && MonotonicClock.milliseconds() < deadline {
            pollOnce(maximumWait: 20)
        }
        for connection in connections.values { close(connection.fd) }
        connections.removeAll()
        if listener >= 0 { close(listener); listener = -1 }
    }

    /// One round: wait for readiness (bounded by the core's next deadline and the listener's
    /// back-off), handle it, tick.
    func pollOnce(maximumWait: Int64) {
        var now = MonotonicClock.milliseconds()
        var deadline = min(now + maximumWait, core.nextDeadline ?? now + maximumWait)
        if let until = listenerPausedUntil {
            if now >= until { listenerPausedUntil = nil } else { deadline = min(deadline, until) }
        }
        for connection in connections.values { if let linger = connection.closeWhenFlushed { deadline = min(deadline, linger) } }
        let wait = max(0, deadline - now)
        let ordered = connections.values.sorted { $0.id < $1.id }
        var fds: [pollfd] = []
        let pollListener = listener >= 0 && listenerPausedUntil == nil
        if pollListener {
            fds.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0))
            stats.listenerPolls += 1
        }
        for connection in ordered {
            updateReadPause(connection)
            var events: Int16 = 0
            // Reading is shut once a close is under way, and paused while the output is over the bound.
            if connection.closeWhenFlushed == nil && !connection.readPaused { events |= Int16(POLLIN) }
            if connection.dialing != nil || connection.hasOutput { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: connection.fd, events: events, revents: 0))
        }
        _ = poll(&fds, nfds_t(fds.count), Int32(wait))
        now = MonotonicClock.milliseconds()
        var index = 0
        if pollListener {
            if fds[0].revents & Int16(POLLIN) != 0 { acceptAll(now: now) }
            index = 1
        }
        for connection in ordered {
            let revents = fds[index].revents
            index += 1
            guard connections[connection.id] != nil else { continue }
            if let dialing = connection.dialing {
                if revents & (Int16(POLLOUT) | Int16(POLLERR) | Int16(POLLHUP)) != 0 {
                    connection.dialing = nil
                    if let failure = Socket.finishConnect(connection.fd) {
                        drop(connection)
                        execute(core.connectFailed(peer: dialing.peer, reason: failure, now: now))
                    } else {
                        execute(core.connected(connection: connection.id, peer: dialing.peer, now: now))
                    }
                } else if now > dialing.deadline {
                    drop(connection)
                    execute(core.connectFailed(peer: dialing.peer, reason: "timed out", now: now))
                }
                continue
            }
            let failed = revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0
            if revents & Int16(POLLOUT) != 0 || (failed && connection.hasOutput) {
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
            if revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 { read(connection, now: now) }
        }
        execute(core.tick(now: MonotonicClock.milliseconds()))
        publishStatistics()
    }

    /// Stops reading from a connection whose queued output is over the bound, resumes once it
    /// is below half: a peer that sends without reading then meets TCP's own back-pressure.
    private func updateReadPause(_ connection: Connection) {
        if connection.readPaused {
            if connection.queued <= limits.maximumQueuedOutput / 2 { connection.readPaused = false }
        } else if connection.queued > limits.maximumQueuedOutput {
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
        stats.listenerPaused = listenerPausedUntil != nil
        let snapshot = stats
        statsLock.withLock { publishedStats = snapshot }
    }

    /// Accepts what is pending (at most 64 per round, so a flood does not starve the connections),
    /// closing at once any connection over a cap, and backing off when accept lacks resources.
    private func acceptAll(now: Int64) {
        for _ in 0..<64 {
            switch acceptConnection(listener) {
            case .none:
                return
            case .failed(let code):
                // That one connection is gone (aborted, or a network error accept(2) passes on,
                // which Linux asks to treat like EAGAIN): go on with the next.
                if Self.transientAcceptErrors.contains(code) { continue }
                // EMFILE, ENFILE, ENOBUFS, ENOMEM, or anything unexpected: retrying at once
                // would fail again, and the listener stays readable. Back off.
                pauseListener(code, now: now)
                return
            case .accepted(let fd, let remote, let host):
                if acceptFailureStreak > 0 {
                    log("accepting connections again")
                    acceptFailureStreak = 0
                }
                if let reason = refusal(host: host) {
                    close(fd)
                    noteRefusal(remote: remote, reason: reason, now: now)
                    continue
                }
                let connection = Connection(fd: fd, id: nextConnectionID, remote: remote, acceptedFrom: host)
                nextConnectionID += 1
                connections[connection.id] = connection
                execute(core.accepted(connection: connection.id, remote: remote, now: now))
            }
        }
    }

    private static let transientAcceptErrors: Set<Int32> = [EINTR, ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN,
                                                             ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH, ETIMEDOUT]

    /// Why a new connection from `host` must be refused, or nil.
    private func refusal(host: String) -> String? {
        if connections.count >= connectionCap {
            return "\(connections.count) connections open, the limit is \(connectionCap)"
        }
        let fromHost = connections.values.reduce(0) { $0 + ($1.acceptedFrom == host ? 1 : 0) }
        if fromHost >= limits.maximumConnectionsPerAddress {
            return "\(fromHost) connections from \(host) open, the limit per address is \(limits.maximumConnectionsPerAddress)"
        }
        return nil
    }

    /// One log line per `refusalLogInterval` at most, counting those refused in between.
    private func noteRefusal(remote: String, reason: String, now: Int64) {
        stats.refusedConnections += 1
        if let last = refusalLoggedAt, now - last < limits.refusalLogInterval {
            refusalsUnlogged += 1
            return
        }
        let since = refusalsUnlogged > 0 ? " (and \(refusalsUnlogged) more since the last such line)" : ""
        log("refused connection from \(remote): \(reason)\(since)")
        refusalLoggedAt = now
        refusalsUnlogged = 0
    }

    /// Leaves the listener out of the poll for the back-off; logs once per episode.
    private func pauseListener(_ code: Int32, now: Int64) {
        let delay = min(limits.maximumAcceptBackoff, limits.acceptBackoff << Int64(min(acceptFailureStreak, 20)))
        acceptFailureStreak += 1
        stats.acceptFailures += 1
        listenerPausedUntil = now + max(1, delay)
        if acceptFailureStreak == 1 {
            log("cannot accept connections: \(errnoText(code)); pausing the listener \(delay) ms, backing off to \(limits.maximumAcceptBackoff) ms")
        }
    }

    /// Drains what the socket holds, up to the read buffer, into one call of the core: batches
    /// that arrived while the last one was being stored then reach the session together, and it
    /// commits them together.
    private func read(_ connection: Connection, now: Int64) {
        var filled = 0, ended = false
        while filled < readBuffer.count {
            let got = readBuffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress! + filled, $0.count - filled, 0) }
            if got > 0 {
                filled += got
                continue
            }
            ended = got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            break
        }
        if filled > 0 { execute(core.received(connection: connection.id, bytes: readBuffer[0..<filled], now: now)) }
        if ended, connections[connection.id] != nil {
            drop(connection)
            execute(core.closed(connection: connection.id, now: now))
        }
    }

    private func flush(_ connection: Connection, now: Int64) {
        while let head = connection.pending.first {
            let offset = connection.headSent
            let sent = head.withUnsafeBytes { raw in
                send(connection.fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                connection.headSent += sent
                connection.queued -= sent
                if connection.headSent == head.count {
                    connection.pending.removeFirst()
                    connection.headSent = 0
                }
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                if errno != EINTR { connection.writable = false }
                return
            } else {
                drop(connection)
                execute(core.closed(connection: connection.id, now: now))
                return
            }
        }
        if connection.closeWhenFlushed != nil { closeNow(connection, now: now) }
    }

    /// Drops the connection and tells the core.
    private func closeNow(_ connection: Connection, now: Int64) {
        drop(connection)
        execute(core.closed(connection: connection.id, now: now))
    }

    private func drop(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        close(connection.fd)
    }

    /// Carries out the core's actions. Frames are queued as they come and each connection is
    /// flushed once at the end, so many small replies (PONGs, acknowledgements) leave in a few
    /// sends rather than one system call and one segment each.
    private func execute(_ actions: [NodeAction]) {
        var sentTo: [Int] = []
        defer {
            for id in sentTo {
                guard let connection = connections[id] else { continue }
                if connection.writable { flush(connection, now: MonotonicClock.milliseconds()) }
                stats.largestQueuedOutput = max(stats.largestQueuedOutput, connection.queued)
            }
        }
        for action in actions {
            switch action {
            case .connect(let peer, let address):
                do {
                    let fd = try Socket.startConnect(to: try SocketAddress(parsing: address))
                    let connection = Connection(fd: fd, id: nextConnectionID, remote: address)
                    nextConnectionID += 1
                    connection.dialing = (peer, MonotonicClock.milliseconds() + connectTimeout)
                    connections[connection.id] = connection
                } catch {
                    execute(core.connectFailed(peer: peer, reason: "\(error)", now: MonotonicClock.milliseconds()))
                }
            case .send(let id, let bytes):
                guard let connection = connections[id] else { continue }
                if sentTo.last != id && !sentTo.contains(id) { sentTo.append(id) }
                connection.enqueue(bytes)
            case .close(let id):
                guard let connection = connections[id] else { continue }
                if connection.hasOutput && connection.writable { flush(connection, now: MonotonicClock.milliseconds()) }
                guard connections[id] != nil else { continue }  // the flush found it closed
                if connection.hasOutput {
                    if connection.closeWhenFlushed == nil { connection.closeWhenFlushed = MonotonicClock.milliseconds() + limits.closeLinger }
                    shutdown(connection.fd, Int32(SHUT_RD))
                } else {
                    drop(connection)
                    execute(core.closed(connection: id, now: MonotonicClock.milliseconds()))
                }
            case .event(let event):
                log(event.logLine)
            case .sessionEvent:
                break
            }
        }
    }
}
