import LifeSync

/// An HTTP/1.1 request parser (RFC 9112) as a value: bytes go in with `append`, complete requests
/// come out of `next`, one at a time, so pipelined requests are answered in order. It never
/// touches a socket or a clock, which is what lets it be fuzzed (Tests/Fuzz, target `http`).
///
/// Every bound in `HTTPLimits` is checked before the bytes it guards are kept; a request that
/// breaks one, or is malformed, ends in `.failed` with the status to answer and a sentence
/// naming the problem, and the parser stays failed (the connection must close: nothing after a
/// broken request can be framed reliably).
///
/// ```swift
/// var parser = HTTPRequestParser()
/// parser.append(Array("GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
/// parser.next()   // .request(HTTPRequest(method: "GET", path: "/api/status", …))
/// parser.next()   // .needMore
/// ```
package struct HTTPRequestParser: Sendable {
    package enum Event: Equatable, Sendable {
        case request(HTTPRequest)
        /// Nothing complete yet: read more.
        case needMore
        /// The head asked for `100 Continue` before sending its body (curl does, over 1 KiB).
        case continueWanted
        case failed(HTTPError)
    }

    /// What the parser waits for.
    enum State: Sendable {
        case head
        /// The body of a `Content-Length` request.
        case body(Head, length: Int)
        /// A chunked body: what has been de-chunked so far, and where in the framing we are.
        case chunked(Head, body: [UInt8], step: ChunkStep)
        case failed(HTTPError)
    }

    enum ChunkStep: Equatable, Sendable {
        case sizeLine
        case data(remaining: Int)
        /// The CRLF after a chunk's data.
        case dataEnd
        /// Trailer fields after the last chunk, up to the empty line; `bytes` so far.
        case trailers(bytes: Int)
    }

    /// A parsed head waiting for its body.
    struct Head: Sendable {
        var method: String
        var target: String
        var minorVersion: Int
        var headers: HTTPHeaders
        var keepAlive: Bool
        var wantsContinue: Bool
    }

    package let limits: HTTPLimits
    private(set) var state: State = .head
    /// Received bytes; `consumed` of them are parsed. Compacted when a request completes.
    var buffer: [UInt8] = []
    var consumed = 0
    /// How far the search for the end of the head got, so a head sent byte by byte costs
    /// linear time.
    var scanned = 0
    private var continueSent = false
    /// The body bound of the request being read (`HTTPLimits.bodyBytes(method:path:)`), and the
    /// words a refusal adds.
    var bodyBound = 0
    var bodyBoundNamed = ""

    package init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Whether a request has begun arriving and is not complete (for the slow-client timeout).
    package var isMidRequest: Bool {
        if case .head = state { return consumed < buffer.count }
        if case .failed = state { return false }
        return true
    }

    package var hasFailed: Bool {
        if case .failed = state { return true }
        return false
    }

    /// Takes bytes from the connection. More than `limits.bufferedBytes` unparsed fails with 413
    /// without keeping them.
    package mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        guard !hasFailed else { return }
        guard buffer.count - consumed + bytes.count <= limits.bufferedBytes else {
            return fail(HTTPError(413, "the request is larger than the \(limits.bufferedBytes) bytes a request may take"))
        }
        if consumed > 0 && consumed == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            scanned = 0
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next event: a complete request, a wish for `100 Continue`, more input needed, or failure.
    package mutating func next() -> Event {
        switch state {
        case .failed(let error):
            return .failed(error)
        case .head:
            do {
                guard let head = try parseHead() else { return .needMore }
                return try begin(head)
            } catch {
                fail(error)
                return .failed(error)
            }
        case .body(let head, let length):
            guard buffer.count - consumed >= length else { return wantBody(head) }
            let body = Array(buffer[consumed..<(consumed + length)])
            consumed += length
            return finish(head, body: body)
        case .chunked(let head, var body, var step):
            state = .failed(HTTPError(500, "chunked parsing interrupted"))  // replaced below; avoids copying `body`
            do {
                if try parseChunks(&body, &step) { return finish(head, body: body) }
                state = .chunked(head, body: body, step: step)
                return wantBody(head)
            } catch {
                fail(error)
                return .failed(error)
            }
        }
    }

    private mutating func fail(_ error: HTTPError) {
        state = .failed(error)
        buffer = []
        consumed = 0
        scanned = 0
    }

    private mutating func wantBody(_ head: Head) -> Event {
        if head.wantsContinue && !continueSent {
            continueSent = true
            return .continueWanted
        }
        return .needMore
    }

    private mutating func finish(_ head: Head, body: [UInt8]) -> Event {
        state = .head
        continueSent = false
        scanned = consumed
        do {
            return .request(try HTTPRequest(method: head.method, target: head.target, minorVersion: head.minorVersion,
                                            headers: head.headers, body: body, keepAlive: head.keepAlive))
        } catch {
            fail(error)
            return .failed(error)
        }
    }

    /// After the head: decides how the body is framed (RFC 9112 §6.3), refusing what is
    /// ambiguous (both Content-Length and Transfer-Encoding: the request-smuggling shape).
    private mutating func begin(_ head: Head) throws(HTTPError) -> Event {
        let path = (try? HTTPRequest.split(target: head.target).path) ?? head.target
        let bound = limits.bodyBytes(method: head.method, path: path)
        bodyBound = bound.bytes
        bodyBoundNamed = bound.route.map { " on \($0)" } ?? ""
        let encodings = head.headers.tokens("Transfer-Encoding").map { $0.lowercased() }
        let lengths = head.headers.values("Content-Length")
        if !encodings.isEmpty {
            guard lengths.isEmpty else { throw HTTPError(400, "both Content-Length and Transfer-Encoding given; send one") }
            guard head.minorVersion == 1 else { throw HTTPError(400, "Transfer-Encoding is not allowed in HTTP/1.0") }
            guard encodings == ["chunked"] else {
                throw HTTPError(501, "Transfer-Encoding \(encodings.joined(separator: ", ")) is not supported; only chunked is")
            }
            state = .chunked(head, body: [], step: .sizeLine)
            return next()
        }
        var length = 0
        if let first = lengths.first {
            let values = Set(lengths.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.withoutOptionalWhitespace } })
            guard values.count == 1 else { throw HTTPError(400, "Content-Length given more than once with different values") }
            guard let text = values.first, !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let value = Int(text) else {
                throw HTTPError(400, "Content-Length must be a decimal number of bytes, got \"\(first.prefix(40))\"")
            }
            length = value
        }
        guard length <= bodyBound else {
            throw HTTPError(413, "the body is \(length) bytes; at most \(bodyBound) are accepted\(bodyBoundNamed)")
        }
        state = .body(head, length: length)
        return next()
    }
}
