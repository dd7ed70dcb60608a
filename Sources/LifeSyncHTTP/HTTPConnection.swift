/// One HTTP/1.1 connection's protocol state, sans I/O (h11's shape): bytes and time go in,
/// actions come out — hand a request to the application, send bytes, close. The runtime owns
/// the socket; this owns keep-alive, pipelining order, `100 Continue`, and the two timeouts
/// that keep a slow or silent client from holding a connection slot.
///
/// A streamed body (`HTTPBody.source`, `.file`) is framed here and produced by the runtime:
/// `respond` asks for it with `.pullBody`; the runtime pulls pieces while the client's output
/// queue is under its bound and hands each to `bodyPiece`, then calls `bodyEnded` (or
/// `bodyFailed`). An open-ended body gets its keepalive from `tick`.
///
/// ```swift
/// var connection = HTTPConnection(now: 0)
/// for action in connection.received(bytes, now: now) {
///     if case .handle(let request) = action { actions += connection.respond(app(request), now: now) }
/// }
/// ```
package struct HTTPConnection: Sendable {
    package enum Action: Equatable, Sendable {
        /// A complete request: answer it with `respond` before anything else.
        case handle(HTTPRequest)
        case send([UInt8])
        /// Start producing the streamed body of the response just given to `respond`.
        case pullBody
        /// Close once what was sent has left.
        case close
    }

    /// A streamed body on its way out.
    struct Streaming: Equatable, Sendable {
        var keepAlive: Bool
        var framing: HTTPResponse.Framing
        /// Bytes still owed under a Content-Length.
        var remaining: UInt64?
        /// For an open-ended body: its keepalive and when the last bytes went.
        var keepalive: Int64?
        var keepaliveBytes: [UInt8]
        var lastSent: Int64
    }

    package struct Timeouts: Equatable, Sendable {
        /// How long an open connection may wait for its next request. Ms.
        package var idle: Int64 = 30_000
        /// How long a request may take to arrive once its first byte did (a client dribbling a
        /// head or body holds a slot no longer; it gets 408). Ms.
        package var request: Int64 = 30_000

        package init() {}
    }

    enum State: Equatable, Sendable {
        /// Between requests, since then.
        case idle(since: Int64)
        /// Part of a request is in, since its first byte arrived.
        case receiving(since: Int64)
        /// A request is with the application; how to send its response.
        case handling(keepAlive: Bool, headOnly: Bool, http11: Bool)
        /// A streamed body is being produced.
        case streaming(Streaming)
        case closed
    }

    private(set) var state: State
    private var parser: HTTPRequestParser
    package let timeouts: Timeouts
    /// The `Date` every response head from now on carries (RFC 9110 §6.6.1), as
    /// `Timestamp.httpDate` writes it. The runtime sets it from its wall clock before feeding
    /// the connection; this code reads no clock. Nil: no `Date` (a server without a clock).
    package var date: String?

    package init(now: Int64, limits: HTTPLimits = HTTPLimits(), timeouts: Timeouts = Timeouts()) {
        state = .idle(since: now)
        parser = HTTPRequestParser(limits: limits)
        self.timeouts = timeouts
    }

    package var isClosed: Bool { state == .closed }

    /// Whether a request waits for `respond`, or its body is still being produced.
    package var isHandling: Bool {
        switch state {
        case .handling, .streaming: return true
        case .idle, .receiving, .closed: return false
        }
    }

    /// Whether the runtime should read from the client: between requests, and during an
    /// open-ended body, to notice the client leaving (a request pipelined behind a body that
    /// never ends can never be answered, so those bytes are dropped). A finite body is finished
    /// first, leaving pipelined input in the socket (TCP's own back-pressure).
    package var readsInput: Bool {
        switch state {
        case .idle, .receiving: return true
        case .streaming(let streaming): return streaming.keepalive != nil
        case .handling, .closed: return false
        }
    }

    /// Whether a streamed body is being produced (the runtime pulls it).
    package var isStreaming: Bool {
        if case .streaming = state { return true }
        return false
    }

    /// Bytes from the client.
    package mutating func received<C: Collection>(_ bytes: C, now: Int64) -> [Action] where C.Element == UInt8 {
        precondition(readsInput || state == .closed, "a request is answered before more input is read")
        guard state != .closed else { return [] }
        if case .streaming = state { return [] }
        parser.append(bytes)
        return advance(now: now)
    }

    /// The client closed its side: a request cut short is dropped, an open-ended body ends.
    package mutating func inputEnded() -> [Action] {
        guard state != .closed, !isHandling || readsInput else { return [] }
        state = .closed
        return [.close]
    }

    /// The application's answer to the request last handed over.
    package mutating func respond(_ response: HTTPResponse, now: Int64) -> [Action] {
        guard case .handling(var keepAlive, let headOnly, let http11) = state else {
            preconditionFailure("respond only to a request handed over by .handle")
        }
        let framing = response.framing(http11: http11)
        if framing == .untilClose { keepAlive = false }
        let head = response.head(framing: framing, keepAlive: keepAlive, http10: !http11, date: date)
        if case .bytes(let bytes) = response.body {
            return finish(sending: headOnly || !response.hasBody ? head : head + bytes, keepAlive: keepAlive, now: now)
        }
        guard !headOnly && response.hasBody else { return finish(sending: head, keepAlive: keepAlive, now: now) }
        var remaining: UInt64?
        if case .length(let length) = framing { remaining = length }
        let keepalive = response.body.keepalive
        state = .streaming(Streaming(keepAlive: keepAlive, framing: framing, remaining: remaining, keepalive: keepalive?.interval,
                                     keepaliveBytes: keepalive?.bytes ?? [], lastSent: now))
        return [.send(head), .pullBody]
    }

    /// A piece of the streamed body, framed.
    package mutating func bodyPiece(_ bytes: [UInt8], now: Int64) -> [Action] {
        guard case .streaming(var streaming) = state else { preconditionFailure("a body piece only while streaming") }
        guard !bytes.isEmpty else { return [] }
        if let remaining = streaming.remaining {
            precondition(UInt64(bytes.count) <= remaining, "a body never exceeds its Content-Length")
            streaming.remaining = remaining - UInt64(bytes.count)
        }
        streaming.lastSent = now
        state = .streaming(streaming)
        return [.send(streaming.framing == .chunked ? HTTPResponse.chunk(bytes) : bytes)]
    }

    /// The streamed body is complete. One that ends short of its Content-Length is cut
    /// (`bodyFailed`): the client must see it incomplete rather than take it as whole.
    package mutating func bodyEnded(now: Int64) -> [Action] {
        guard case .streaming(let streaming) = state else { preconditionFailure("a body ends only while streaming") }
        if let remaining = streaming.remaining, remaining > 0 { return bodyFailed() }
        return finish(sending: streaming.framing == .chunked ? HTTPResponse.lastChunk : [], keepAlive: streaming.keepAlive, now: now)
    }

    /// The body cannot go on (its source failed, or its client left): the connection closes,
    /// without the last chunk, so the client sees the body cut short.
    package mutating func bodyFailed() -> [Action] {
        guard state != .closed else { return [] }
        state = .closed
        return [.close]
    }

    /// The server is stopping: an open-ended body (an event stream) ends with its last chunk,
    /// so the client sees it end rather than break off, and the connection closes. A finite
    /// body still going out is cut instead: ending it whole would pass off a part as all.
    package mutating func shutdown() -> [Action] {
        guard state != .closed else { return [] }
        var actions: [Action] = []
        if case .streaming(let streaming) = state, streaming.keepalive != nil, streaming.framing == .chunked {
            actions.append(.send(HTTPResponse.lastChunk))
        }
        state = .closed
        return actions + [.close]
    }

    /// After a response: idle for the next request, or closed.
    private mutating func finish(sending bytes: [UInt8], keepAlive: Bool, now: Int64) -> [Action] {
        var actions: [Action] = bytes.isEmpty ? [] : [.send(bytes)]
        guard keepAlive else {
            state = .closed
            return actions + [.close]
        }
        state = .idle(since: now)
        actions += advance(now: now)  // a pipelined request may already be in
        return actions
    }

    /// Time passed: a silent connection is closed, a slow request answered with 408.
    package mutating func tick(now: Int64) -> [Action] {
        switch state {
        case .idle(let since) where now - since >= timeouts.idle:
            state = .closed
            return [.close]
        case .streaming(var streaming) where streaming.keepalive.map({ now - streaming.lastSent >= $0 }) ?? false:
            streaming.lastSent = now
            state = .streaming(streaming)
            return [.send(streaming.framing == .chunked ? HTTPResponse.chunk(streaming.keepaliveBytes) : streaming.keepaliveBytes)]
        case .receiving(let since) where now - since >= timeouts.request:
            state = .closed
            let error = HTTPResponse.error(408, "the request did not arrive within \(timeouts.request / 1000) s")
            return [.send(error.encoded(keepAlive: false, date: date)), .close]
        default:
            return []
        }
    }

    /// When `tick` next has work, or nil.
    package var deadline: Int64? {
        switch state {
        case .idle(let since): return since + timeouts.idle
        case .receiving(let since): return since + timeouts.request
        case .streaming(let streaming): return streaming.keepalive.map { streaming.lastSent + $0 }
        case .handling, .closed: return nil
        }
    }

    private mutating func advance(now: Int64) -> [Action] {
        var actions: [Action] = []
        while true {
            switch parser.next() {
            case .request(let request):
                state = .handling(keepAlive: request.keepAlive, headOnly: request.method == "HEAD", http11: request.minorVersion >= 1)
                return actions + [.handle(request)]
            case .continueWanted:
                actions.append(.send(HTTPResponse.continueBytes))
            case .needMore:
                if parser.isMidRequest {
                    if case .receiving = state {} else { state = .receiving(since: now) }
                } else if case .receiving = state {
                    state = .idle(since: now)
                }
                return actions
            case .failed(let error):
                state = .closed
                return actions + [.send(HTTPResponse.error(error).encoded(keepAlive: false, date: date)), .close]
            }
        }
    }
}
