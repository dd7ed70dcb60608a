import Glibc
import LifeSync

/// Runs a `NodeCore` over real TCP: one thread, one poll(2) loop over the listening socket and
/// every connection, non-blocking sockets with per-connection output buffers. The replica is
/// only ever touched from this thread.
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
        /// Set while a dial is in progress.
        var dialing: (peer: Int, deadline: Int64)?
        /// Frames waiting for the socket, oldest first; `headSent` bytes of the first already
        /// went. Large frames stay separate arrays so a 1 MiB chunk is never copied into a
        /// growing buffer; small ones are packed together so they leave in one send.
        var pending: [[UInt8]] = []
        var headSent = 0
        var closeWhenFlushed = false

        init(fd: Int32, id: Int, remote: String) {
            self.fd = fd
            self.id = id
            self.remote = remote
        }

        var hasOutput: Bool { !pending.isEmpty }

        func enqueue(_ frame: [UInt8]) {
            if let last = pending.indices.last, pending[last].count + frame.count <= 64 * 1024 {
                pending[last] += frame
            } else {
                pending.append(frame)
            }
        }
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
    /// Bytes read per connection per readiness: bounds how much one peer can make us hold.
    /// Two full batches fit (see `read`).
    private var readBuffer = [UInt8](repeating: 0, count: 4 * 1024 * 1024)

    /// Binds the listening socket (if `listen` is given) so the port is known before `run`.
    /// Recordings live in a folder beside the replica (`<replica>.recordings`).
    public init(replica: Replica, configuration: NodeConfiguration, listen: String?, log: @escaping (String) -> Void) throws {
        let storage = replica.path == ":memory:" ? nil : try FileRecordingStorage(replicaPath: replica.path)
        core = NodeCore(replica: replica, configuration: configuration, random: SystemRandom(), now: MonotonicClock.milliseconds(), storage: storage)
        self.log = log
        if let listen {
            let address = try SocketAddress(parsing: listen)
            listener = try Socket.listen(on: address)
            listeningAddress = Socket.localAddress(listener)
        }
    }

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

    /// One round: wait for readiness (bounded by the core's next deadline), handle it, tick.
    private func pollOnce(maximumWait: Int64) {
        var now = MonotonicClock.milliseconds()
        let wait = max(0, min(maximumWait, (core.nextDeadline ?? now + maximumWait) - now))
        let ordered = connections.values.sorted { $0.id < $1.id }
        var fds: [pollfd] = []
        if listener >= 0 { fds.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
        for connection in ordered {
            var events = Int16(POLLIN)
            if connection.dialing != nil || connection.hasOutput { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: connection.fd, events: events, revents: 0))
        }
        _ = poll(&fds, nfds_t(fds.count), Int32(wait))
        now = MonotonicClock.milliseconds()
        var index = 0
        if listener >= 0 {
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
            if revents & Int16(POLLOUT) != 0 { flush(connection, now: now) }
            if revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 { read(connection, now: now) }
        }
        execute(core.tick(now: MonotonicClock.milliseconds()))
    }

    private func acceptAll(now: Int64) {
        while let (fd, remote) = Socket.accept(listener) {
            let connection = Connection(fd: fd, id: nextConnectionID, remote: remote)
            nextConnectionID += 1
            connections[connection.id] = connection
            execute(core.accepted(connection: connection.id, remote: remote, now: now))
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
                if connection.headSent == head.count {
                    connection.pending.removeFirst()
                    connection.headSent = 0
                }
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                return
            } else {
                drop(connection)
                execute(core.closed(connection: connection.id, now: now))
                return
            }
        }
        if connection.closeWhenFlushed {
            drop(connection)
            execute(core.closed(connection: connection.id, now: now))
        }
    }

    private func drop(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        close(connection.fd)
    }

    /// Carries out the core's actions.
    private func execute(_ actions: [NodeAction]) {
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
                connection.enqueue(bytes)
                flush(connection, now: MonotonicClock.milliseconds())
            case .close(let id):
                guard let connection = connections[id] else { continue }
                if connection.hasOutput {
                    connection.closeWhenFlushed = true
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
