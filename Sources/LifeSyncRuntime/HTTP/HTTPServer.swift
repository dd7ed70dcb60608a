import Glibc
import LifeSync
import LifeSyncAPI
import LifeSyncHTTP

/// The LifeLog HTTP API of a node: a second participant of the node's poll loop, beside the
/// sync server, on the same thread — so the API reads and writes the replica with no lock, and
/// no thread per connection. Sockets and timing are here; HTTP is `HTTPConnection`'s and the
/// routes are `LifeLogAPI`'s.
///
/// Bounded: connections (over the cap: 503 and closed), bytes read per round, output queued
/// per client (a pipelining client that does not read waits), a request's size and time
/// (`HTTPLimits`, `HTTPConnection.Timeouts`), and a client that stops reading its response.
/// Streamed bodies are pulled only while their client's queue is under `streamQueueBound`, so
/// a slow reader slows its producer; open event streams are capped (`maximumEventStreams`).
package final class HTTPServer {
    let api: LifeLogAPI
    let limits: Limits
    let log: (String) -> Void
    /// Entries were written over HTTP: the node pushes them after its debounce, and says the
    /// replica changed (`replicaChanged`), which wakes the event streams.
    let wrote: (Int64) -> Void
    /// HTTPS: the node's HTTPS certificate, no client certificate asked (nil: plain HTTP).
    /// Replaced when `renewTLS` gives a new one; connections under the old one keep it.
    private(set) var tls: TLSContext?
    /// Under HTTPS: a new context when the certificate was renewed, else nil. Asked when a
    /// client connects, at most once per `renewalCheckInterval` (milliseconds; an hour).
    var renewTLS: (() -> TLSContext?)? {
        didSet { nextRenewalCheck = MonotonicClock.milliseconds() + renewalCheckInterval }
    }
    var renewalCheckInterval: Int64 = 3_600_000
    var nextRenewalCheck: Int64 = 0
    /// The accept side, shared in kind with the sync server (`Listener`).
    let listener: Listener
    package let listeningAddress: String
    private var clients: [Int: HTTPClient] = [:]
    private var nextID = 1
    private var readBuffer: [UInt8]
    /// This round's polled clients, after the listener when it was polled.
    private var polled: (listener: Bool, clients: [Int]) = (false, [])
    /// The node said the replica changed (`NodeAction.replicaChanged`): waiting event streams look.
    private var changed = false
    /// The last change sequence seen.
    private var seenChange: Int64 = -1
    /// `currentDate()`'s last answer, and the second it is of.
    private var dateSecond = Int64.min
    private var dateText = ""

    init(listener: Listener, api: LifeLogAPI, limits: Limits, tls: TLSContext? = nil, log: @escaping (String) -> Void,
         wrote: @escaping (Int64) -> Void) {
        self.tls = tls
        self.listener = listener
        listeningAddress = listener.address
        self.api = api
        self.limits = limits
        self.log = log
        self.wrote = wrote
        readBuffer = [UInt8](repeating: 0, count: max(1024, limits.readSize))
    }

    deinit { stop() }

    /// Closes the listener and every client. An event stream first gets its last chunk, so its
    /// client sees the stream end (best effort: what the socket takes at once, as for the
    /// rest of what is queued).
    func stop() {
        let now = MonotonicClock.milliseconds()
        for client in clients.values {
            if client.opening == nil && !client.closing {
                perform(client.connection.shutdown(), on: client, now: now)
                _ = client.flush(now: now)
            }
            client.stream.close()
        }
        clients.removeAll()
        listener.close()
    }

    package var connectionCount: Int { clients.count }

    /// Open event streams.
    package var eventStreamCount: Int { clients.values.count { $0.body?.isOpenEnded ?? false } }

    /// The node's one notice that the replica changed (a batch or repair applied, a recording's
    /// file, a write over HTTP, another process's write the node noticed): event streams waiting
    /// for changes look at once. Nothing else wakes them.
    package func replicaChanged() { changed = true }

    /// The `Date` of responses sent now (RFC 9110 §6.6.1): the node's wall clock, the one its
    /// replica stamps writes with (the HTTP code reads none), formatted once a second.
    private func currentDate() -> String {
        let milliseconds = api.replica.now.millisecondsSince1970
        let second = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        if second != dateSecond {
            dateSecond = second
            dateText = Timestamp(millisecondsSince1970: second * 1000).httpDate
        }
        return dateText
    }

    private func acceptAll(now: Int64) {
        if let renewTLS, now >= nextRenewalCheck {
            nextRenewalCheck = now + renewalCheckInterval
            if let fresh = renewTLS() { tls = fresh }
        }
        listener.acceptAll(now: now) { fd, remote, _ in
            if clients.count >= limits.maximumConnections { makeRoom(now: now) }
            guard clients.count < limits.maximumConnections else {
                // A clear answer, best effort: the socket is new, so its buffer takes it.
                // (Under HTTPS there is no channel for one before a handshake: closed.)
                let stream = TCPStream(fd: fd)
                if tls == nil {
                    let busy = HTTPResponse.error(503, "\(clients.count) HTTP connections open, the limit is \(limits.maximumConnections); retry shortly")
                    _ = busy.encoded(keepAlive: false, date: currentDate()).withUnsafeBytes { stream.write($0) }
                }
                stream.close()
                listener.noteRefusal(remote, reason: "\(limits.maximumConnections) HTTP connections open", now: now)
                return
            }
            let secured: TLSStream?
            do { secured = try tls?.stream(fd: fd, dialing: false) } catch { close(fd); return }
            let stream: any ByteStream = secured ?? TCPStream(fd: fd)
            var connection = HTTPConnection(now: now, limits: limits.request, timeouts: limits.timeouts)
            connection.date = currentDate()
            // Under HTTPS the handshake comes first, within the connection's idle time.
            let opening = secured.map { _ in TLSOpening(sniffing: .plainHTTP, now: now, timeout: limits.timeouts.idle) }
            clients[nextID] = HTTPClient(stream: stream, tls: secured, opening: opening, remote: remote, connection: connection, now: now)
            nextID += 1
        }
    }

    /// At the connection cap, the oldest client that never made a request with a valid key
    /// gives way to the newcomer: unfinished requests without a key (64 of them held every slot,
    /// 503 for every keyed client for 30 s a wave) cannot lock the node's clients out. A keyed
    /// client proves itself with its first request, in milliseconds.
    private func makeRoom(now: Int64) {
        guard let (id, oldest) = clients.filter({ !$0.value.proven }).min(by: { ($0.value.openedAt, $0.key) < ($1.value.openedAt, $1.key) }) else { return }
        drop(id)
        listener.noteRefusal(oldest.remote, reason: "closed after \(now - oldest.openedAt) ms without a request bearing a key, to make room for a newer connection", now: now)
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
            case .close:
                client.closing = true
                client.body = nil
            case .pullBody:
                precondition(client.body != nil, "a streamed body to pull")
                pump(client, now: now)
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
        var (response, wroteEntries) = api.handle(request)
        if response.status != 401 && (request.headers["Authorization"] != nil || request.parameter("token") != nil) { client.proven = true }
        if wroteEntries { wrote(now) }
        if response.body.isOpenEnded && eventStreamCount >= limits.maximumEventStreams {
            response = HTTPResponse.error(503, "\(limits.maximumEventStreams) event streams are open, the limit; retry shortly")
            response.headers.set("Retry-After", "5")
        }
        if case .bytes = response.body {} else { client.body = response.body }
        client.fileRead = 0
        client.awaitingChanges = false
        perform(client.connection.respond(response, now: now), on: client, now: now)
        if !client.connection.isStreaming { client.body = nil }  // HEAD, or a status without a body
    }

    /// Pulls the client's streamed body while its queue is under the bound (a bounded number
    /// of pieces per round; the next round continues).
    private func pump(_ client: HTTPClient, now: Int64) {
        for _ in 0..<16 {
            guard let body = client.body, client.connection.isStreaming, !client.awaitingChanges,
                  client.queued < limits.streamQueueBound else { return }
            let piece: HTTPBodyPiece
            do {
                piece = try next(of: body, for: client)
            } catch {
                log("HTTP: the response to \(client.remote) was cut short: \(error)")
                client.body = nil
                perform(client.connection.bodyFailed(), on: client, now: now)
                return
            }
            switch piece {
            case .bytes(let bytes): perform(client.connection.bodyPiece(bytes, now: now), on: client, now: now)
            case .later: client.awaitingChanges = true
            case .end:
                client.body = nil
                perform(client.connection.bodyEnded(now: now), on: client, now: now)
            }
        }
    }

    struct FileUnreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// The next piece of a body: from its source, or read from the recording file.
    private func next(of body: HTTPBody, for client: HTTPClient) throws -> HTTPBodyPiece {
        switch body {
        case .bytes: preconditionFailure("a whole body is sent with its head")
        case .source(let source): return try source.next(maximumBytes: limits.bodyPieceSize)
        case .file(let name, let offset, let length):
            guard client.fileRead < length else { return .end }
            guard let storage = api.recordingStorage else { throw FileUnreadable(description: "this node keeps no recording files") }
            let count = Int(min(UInt64(limits.bodyPieceSize), length - client.fileRead))
            var buffer = [UInt8](repeating: 0, count: count)
            let read = try buffer.withUnsafeMutableBytes { try storage.read(name, offset: offset + client.fileRead, into: $0) }
            guard read > 0 else { throw FileUnreadable(description: "\(name) ended \(length - client.fileRead) bytes early") }
            client.fileRead += UInt64(read)
            return .bytes(Array(buffer[0..<read]))
        }
    }

    /// Wakes the event streams waiting for changes once the node said the replica changed and
    /// the change feed moved: one query for all streams, none while no stream waits.
    private func wakeEventStreams(now: Int64) {
        let waiting = clients.values.filter(\.awaitingChanges)
        guard !waiting.isEmpty, changed else { return }
        changed = false
        guard let latest = try? api.replica.latestChangeSequence(), latest != seenChange else { return }
        seenChange = latest
        for client in waiting {
            client.awaitingChanges = false
            pump(client, now: now)
        }
    }

    private func drop(_ id: Int) {
        clients.removeValue(forKey: id)?.stream.close()
    }
}

extension TLSOpening.Sniff {
    /// Plain HTTP sent to the HTTPS port (a URL without its s) is told so in plain HTTP. Its
    /// first four bytes tell it: an HTTP method is upper-case letters (then a space, for GET
    /// and PUT), a TLS record starts with 0x16.
    static let plainHTTP = TLSOpening.Sniff(count: 4) { first in
        guard first.prefix(3).allSatisfy({ (0x41...0x5A).contains($0) }), (0x41...0x5A).contains(first[3]) || first[3] == 0x20 else { return nil }
        let text = "This port speaks HTTPS: use https:// (lifesync id --https-ca prints the root certificate to trust).\n"
        let answer = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
            + "Content-Length: \(text.utf8.count)\r\n\r\n" + text
        return TLSOpening.Plaintext(answer: Array(answer.utf8), reason: "plain HTTP on the HTTPS port: answered 400", readsRequestFirst: true)
    }
}

extension HTTPServer: PollParticipant {
    func interests(now: Int64) -> (interests: [PollLoop.Interest], deadline: Int64?) {
        var interests: [PollLoop.Interest] = []
        let (pollListener, pausedUntil) = listener.shouldPoll(now: now)
        var deadline = pausedUntil
        if pollListener { interests.append(PollLoop.Interest(fd: listener.fd, events: Int16(POLLIN))) }
        polled = (pollListener, clients.keys.sorted())
        for id in polled.clients {
            let client = clients[id]!
            var events: Int16 = 0
            if let tls = client.tls, let opening = client.opening {
                deadline = min(deadline ?? opening.deadline, opening.deadline)
                interests.append(opening.interest(tls))
                continue
            }
            if client.tls?.wantsWritable == true { events |= Int16(POLLOUT) }
            if client.stream.hasBufferedInput && client.waiting == nil && client.connection.readsInput { deadline = now }
            if !client.closing && client.waiting == nil && client.connection.readsInput { events |= Int16(POLLIN) }
            if client.body != nil && !client.awaitingChanges && client.queued < limits.streamQueueBound { deadline = now }
            if client.awaitingChanges && changed { deadline = now }  // the node said the replica changed
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
        precondition(revents.count == polled.clients.count + (polled.listener ? 1 : 0), "readiness for every interest")
        let date = currentDate()
        for client in clients.values { client.connection.date = date }
        if polled.listener && revents[0] & Int16(POLLIN) != 0 { acceptAll(now: now) }
        let first = polled.listener ? 1 : 0
        for (index, id) in polled.clients.enumerated() {
            guard let client = clients[id] else { continue }
            let events = revents[index + first]
            if let tls = client.tls, let step = client.opening?.step(tls, now: now) {
                switch step {
                case .done: client.opening = nil
                case .waiting: continue
                case .failed: drop(id); continue
                }
            }
            if client.queued > 0 && events & (Int16(POLLOUT) | Int16(POLLERR) | Int16(POLLHUP)) != 0 {
                if client.flush(now: now) == .failed { drop(id); continue }
                serveWaiting(client, now: now)
            }
            pump(client, now: now)
            if (events & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 || client.stream.hasBufferedInput)
                && !client.closing && client.waiting == nil {
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
        wakeEventStreams(now: now)
    }
}
