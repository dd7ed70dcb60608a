/// One HTTP/1.1 connection's protocol state, sans I/O (h11's shape): bytes and time go in,
/// actions come out — hand a request to the application, send bytes, close. The runtime owns
/// the socket; this owns keep-alive, pipelining order, `100 Continue`, and the two timeouts
/// that keep a slow or silent client from holding a connection slot.
///
/// ```swift
/// var connection = HTTPConnection(now: 0)
/// for action in connection.received(bytes, now: now) {
///     if case .handle(let request) = action { actions += connection.respond(app(request), now: now) }
/// }
/// ```
public struct HTTPConnection: Sendable {
    public enum Action: Equatable, Sendable {
        /// A complete request: answer it with `respond` before anything else.
        case handle(HTTPRequest)
        case send([UInt8])
        /// Close once what was sent has left.
        case close
    }

    public struct Timeouts: Equatable, Sendable {
        /// How long an open connection may wait for its next request. Ms.
        public var idle: Int64 = 30_000
        /// How long a request may take to arrive once its first byte did (a client dribbling a
        /// head or body holds a slot no longer; it gets 408). Ms.
        public var request: Int64 = 30_000

        public init() {}
    }

    enum State: Equatable, Sendable {
        /// Between requests, since then.
        case idle(since: Int64)
        /// Part of a request is in, since its first byte arrived.
        case receiving(since: Int64)
        /// A request is with the application; how to send its response.
        case handling(keepAlive: Bool, headOnly: Bool)
        case closed
    }

    private(set) var state: State
    private var parser: HTTPRequestParser
    public let timeouts: Timeouts

    public init(now: Int64, limits: HTTPLimits = HTTPLimits(), timeouts: Timeouts = Timeouts()) {
        state = .idle(since: now)
        parser = HTTPRequestParser(limits: limits)
        self.timeouts = timeouts
    }

    public var isClosed: Bool { state == .closed }

    /// Whether a request waits for `respond` (the runtime reads nothing more meanwhile).
    public var isHandling: Bool {
        if case .handling = state { return true }
        return false
    }

    /// Bytes from the client.
    public mutating func received<C: Collection>(_ bytes: C, now: Int64) -> [Action] where C.Element == UInt8 {
        precondition(!isHandling, "a request is answered before more input is read")
        guard state != .closed else { return [] }
        parser.append(bytes)
        return advance(now: now)
    }

    /// The client closed its side: a request cut short is dropped; nothing is answered.
    public mutating func inputEnded() -> [Action] {
        guard state != .closed, !isHandling else { return [] }
        state = .closed
        return [.close]
    }

    /// The application's answer to the request last handed over.
    public mutating func respond(_ response: HTTPResponse, now: Int64) -> [Action] {
        guard case .handling(let keepAlive, let headOnly) = state else {
            preconditionFailure("respond only to a request handed over by .handle")
        }
        var actions: [Action] = [.send(response.encoded(headOnly: headOnly, keepAlive: keepAlive))]
        guard keepAlive else {
            state = .closed
            return actions + [.close]
        }
        state = .idle(since: now)
        actions += advance(now: now)  // a pipelined request may already be in
        return actions
    }

    /// Time passed: a silent connection is closed, a slow request answered with 408.
    public mutating func tick(now: Int64) -> [Action] {
        switch state {
        case .idle(let since) where now - since >= timeouts.idle:
            state = .closed
            return [.close]
        case .receiving(let since) where now - since >= timeouts.request:
            state = .closed
            let error = HTTPResponse.error(408, "the request did not arrive within \(timeouts.request / 1000) s")
            return [.send(error.encoded(keepAlive: false)), .close]
        default:
            return []
        }
    }

    /// When `tick` next has work, or nil.
    public var deadline: Int64? {
        switch state {
        case .idle(let since): return since + timeouts.idle
        case .receiving(let since): return since + timeouts.request
        case .handling, .closed: return nil
        }
    }

    private mutating func advance(now: Int64) -> [Action] {
        var actions: [Action] = []
        while true {
            switch parser.next() {
            case .request(let request):
                state = .handling(keepAlive: request.keepAlive, headOnly: request.method == "HEAD")
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
                return actions + [.send(HTTPResponse.error(error).encoded(keepAlive: false)), .close]
            }
        }
    }
}
