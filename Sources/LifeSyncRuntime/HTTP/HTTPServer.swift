import Glibc
import LifeSync

/// The LifeLog HTTP API of a node: a second participant of the node's poll loop, beside the
/// sync server, on the same thread — so the API reads and writes the replica with no lock, and
/// no thread per connection. Sockets and timing are here; HTTP is `HTTPConnection`'s and the
/// routes are `LifeLogAPI`'s.
///
/// Bounded: connections (over the cap: 503 and closed), bytes read per round, output queued
/// per client (a pipelining client that does not read waits), a request's size and time
/// (`HTTPLimits`, `HTTPConnection.Timeouts`), and a client that stops reading its response.
public final class HTTPServer {
    let api: LifeLogAPI
    let limits: Limits
    let log: (String) -> Void
    /// Entries were written over HTTP: the node pushes them after its debounce.
    let wrote: (Int64) -> Void
    private var listener: Int32
    public let listeningAddress: String
    private var clients: [Int: HTTPClient] = [:]
    private var nextID = 1
    private var readBuffer: [UInt8]
    private var polled: [Int] = []
    private var refusalLoggedAt: Int64?

    init(listen: SocketAddress, api: LifeLogAPI, limits: Limits, log: @escaping (String) -> Void, wrote: @escaping (Int64) -> Void) throws {
        listener = try Socket.listen(on: listen)
        listeningAddress = Socket.localAddress(listener)
        self.api = api
        self.limits = limits
        self.log = log
        self.wrote = wrote
        readBuffer = [UInt8](repeating: 0, count: max(1024, limits.readSize))
    }

    deinit { stop() }

    /// Closes the listener and every client (what is queued is dropped).
    func stop() {
        for client in clients.values { client.stream.close() }
        clients.removeAll()
        if listener >= 0 { close(listener); listener = -1 }
    }

    public var connectionCount: Int { clients.count }

    private func acceptAll(now: Int64) {
        for _ in 0..<64 {
            switch Socket.accept(listener) {
            case .none, .failed: return
            case .accepted(let fd, let remote, _):
                let stream = TCPStream(fd: fd)
                guard clients.count < limits.maximumConnections else {
                    // A clear answer, best effort: the socket is new, so its buffer takes it.
                    let busy = HTTPResponse.error(503, "\(clients.count) HTTP connections open, the limit is \(limits.maximumConnections); retry shortly")
                    _ = busy.encoded(keepAlive: false).withUnsafeBytes { stream.write($0) }
                    stream.close()
                    if refusalLoggedAt.map({ now - $0 >= 1_000 }) ?? true {
                        refusalLoggedAt = now
                        log("HTTP: refused \(remote): \(limits.maximumConnections) connections open")
                    }
                    continue
                }
                let connection = HTTPConnection(now: now, limits: limits.request, timeouts: limits.timeouts)
                clients[nextID] = HTTPClient(stream: stream, remote: remote, connection: connection, now: now)
                nextID += 1
            }
        }
    }

    /// Reads what the client sent (at most `readSize` per round) into its connection.
    private func read(_ client: HTTPClient, now: Int64) {
        let (filled, ended) = client.stream.readAvailable(into: &readBuffer)
        if filled > 0 { perform(client.connection.received(readBuffer[0..<filled], now: now), on: client, now: now) }
        if ended { perform(client.connection.inputEnded(), on: client, now: now) }
    }

    /// Carries out a connection's actions; a request is answered at once unless the client's
    /// output is over its bound, when it waits (`serveWaiting`).
    private func perform(_ actions: [HTTPConnection.Action], on client: HTTPClient, now: Int64) {
        for action in actions {
            switch action {
            case .send(let bytes): client.enqueue(bytes, now: now)
            case .close: client.closing = true
            case .handle(let request):
                precondition(client.waiting == nil, "one request at a time per connection")
                client.waiting = request
                serveWaiting(client, now: now)
            }
        }
    }

    private func serveWaiting(_ client: HTTPClient, now: Int64) {
        guard let request = client.waiting, client.queued <= limits.maximumQueuedOutput else { return }
        client.waiting = nil
        let (response, wroteEntries) = api.handle(request)
        if wroteEntries { wrote(now) }
        perform(client.connection.respond(response, now: now), on: client, now: now)
    }

    private func drop(_ id: Int) {
        clients.removeValue(forKey: id)?.stream.close()
    }
}

extension HTTPServer: PollParticipant {
    func interests(now: Int64) -> (interests: [PollLoop.Interest], deadline: Int64?) {
        var interests = [PollLoop.Interest(fd: listener, events: Int16(POLLIN))]
        var deadline: Int64?
        polled = clients.keys.sorted()
        for id in polled {
            let client = clients[id]!
            var events: Int16 = 0
            if !client.closing && client.waiting == nil && !client.connection.isHandling { events |= Int16(POLLIN) }
            if client.queued > 0 {
                events |= Int16(POLLOUT)
                deadline = min(deadline ?? .max, client.lastProgress + limits.writeStall)
            }
            if let due = client.connection.deadline { deadline = min(deadline ?? due, due) }
            interests.append(PollLoop.Interest(fd: client.stream.fd, events: events))
        }
        return (interests, deadline)
    }

    func ready(_ revents: [Int16], now: Int64) {
        precondition(revents.count == polled.count + 1, "readiness for the listener and every client")
        if revents[0] & Int16(POLLIN) != 0 { acceptAll(now: now) }
        for (index, id) in polled.enumerated() {
            guard let client = clients[id] else { continue }
            let events = revents[index + 1]
            if client.queued > 0 && events & (Int16(POLLOUT) | Int16(POLLERR) | Int16(POLLHUP)) != 0 {
                if client.flush(now: now) == .failed { drop(id); continue }
                serveWaiting(client, now: now)
            }
            if events & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 && !client.closing && client.waiting == nil {
                read(client, now: now)
            }
            perform(client.connection.tick(now: now), on: client, now: now)
            if client.queued > 0 && client.flush(now: now) == .failed { drop(id); continue }
            if client.queued > 0 && now - client.lastProgress >= limits.writeStall {
                log("HTTP: dropped \(client.remote): it read none of its response for \(limits.writeStall / 1000) s")
                drop(id)
            } else if client.queued == 0 && (client.closing || client.connection.isClosed) {
                drop(id)
            }
        }
    }
}
