import LifeSync
import LifeSyncHTTP
import Testing

@Suite struct HTTPRequestParserTests {
    /// Every event the parser gives for `text`, until it needs more or fails.
    static func events(_ text: String, limits: HTTPLimits = HTTPLimits()) -> [HTTPRequestParser.Event] {
        var parser = HTTPRequestParser(limits: limits)
        parser.append(Array(text.utf8))
        var events: [HTTPRequestParser.Event] = []
        for _ in 0..<100 {
            let event = parser.next()
            events.append(event)
            if case .request = event { continue }
            if case .continueWanted = event { continue }
            break
        }
        return events
    }

    static func failure(_ text: String, limits: HTTPLimits = HTTPLimits()) -> HTTPError? {
        if case .failed(let error) = events(text, limits: limits).last { return error }
        return nil
    }

    @Test func simpleGetWithQuery() throws {
        let events = Self.events("GET /api/entries?since=2026-11-22&search=buy+gro%C3%A7eries&tag= HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n")
        guard case .request(let request) = events.first else { Issue.record("no request: \(events)"); return }
        #expect(request.method == "GET" && request.path == "/api/entries" && request.minorVersion == 1 && request.keepAlive)
        #expect(request.parameter("since") == "2026-11-22")
        #expect(request.parameter("search") == "buy groçeries")
        #expect(request.parameter("tag") == "")
        #expect(request.headers["accept"] == "*/*" && request.body.isEmpty)
        #expect(events.last == .needMore)
    }

    @Test func contentLengthBodyAndPipelining() throws {
        let events = Self.events("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(events.count == 3)
        guard case .request(let first) = events[0], case .request(let second) = events[1] else { Issue.record("\(events)"); return }
        #expect(first.body == Array("hello".utf8) && first.keepAlive)
        #expect(second.path == "/b" && !second.keepAlive)
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() throws {
        let events = Self.events("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;name=v\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: 1\r\n\r\n")
        guard case .request(let request) = events.first else { Issue.record("\(events)"); return }
        #expect(String(decoding: request.body, as: UTF8.self) == "hello, world!!!")
    }

    /// A bare LF ends a chunk's lines as it ends the head's, fed whole or byte by byte: such a
    /// request waited for CRLFs that never came and got 408 thirty seconds later. A CR is taken
    /// only before an LF.
    @Test func chunkedBodyWithBareLineFeeds() throws {
        let text = "POST /a HTTP/1.1\nHost: x\nTransfer-Encoding: chunked\n\n5;name=v\nhello\nA\r\n, world!!!\n0\nX-Trailer: 1\n\nGET /b HTTP/1.1\nHost: x\n\n"
        let whole = Self.events(text)
        guard case .request(let request) = whole.first, case .request(let next) = whole.dropFirst().first else { Issue.record("\(whole)"); return }
        #expect(String(decoding: request.body, as: UTF8.self) == "hello, world!!!" && next.path == "/b")
        var parser = HTTPRequestParser(limits: HTTPLimits())
        var bodies: [String] = []
        for byte in text.utf8 {
            parser.append([byte])
            while case .request(let got) = parser.next() { bodies.append(String(decoding: got.body, as: UTF8.self)) }
        }
        #expect(bodies == ["hello, world!!!", ""])
        #expect(Self.failure("POST /a HTTP/1.1\nHost: x\nTransfer-Encoding: chunked\n\n5\rx\nhello\n0\n\n")?.status == 400)
        #expect(Self.failure("POST /a HTTP/1.1\nHost: x\nTransfer-Encoding: chunked\n\n5\nhello\rX0\n\n")?.status == 400)
    }

    /// The same requests fed byte by byte give the same result as fed whole.
    /// A head that is a request line alone is judged by that line, not by what follows it in
    /// the buffer (the fuzzer's fourth find: whole it got 413, cut in two 400).
    @Test func aHeadOfOneLineIsMeasuredByThatLine() throws {
        var limits = HTTPLimits()
        limits.requestLineBytes = 64
        let alone = "GET /x HTTP/1.0\r\n\r\n"
        let followed = alone + "GET /" + String(repeating: "a", count: 200) + " HTTP/1.0\r\n\r\n"
        guard case .request(let request) = Self.events(followed, limits: limits).first else {
            Issue.record("no request: \(Self.events(followed, limits: limits))"); return
        }
        #expect(request.path == "/x")
        #expect(Self.failure("GET /x\r\n\r\n" + String(repeating: "a", count: 200), limits: limits)?.status == 400)
    }

    @Test func byteByByteMatchesWhole() throws {
        let text = "PUT /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nHEAD /y HTTP/1.0\r\n\r\n"
        var parser = HTTPRequestParser()
        var requests: [HTTPRequest] = []
        for byte in Array(text.utf8) {
            parser.append([byte])
            while case .request(let request) = parser.next() { requests.append(request) }
        }
        #expect(requests.map(\.path) == ["/x", "/y"])
        #expect(requests[0].body == Array("abc".utf8))
        #expect(requests[1].method == "HEAD" && !requests[1].keepAlive && requests[1].minorVersion == 0)
    }

    @Test func expectContinueIsAskedForOnce() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("POST /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        #expect(parser.next() == .continueWanted)
        #expect(parser.next() == .needMore)
        parser.append(Array("ok".utf8))
        guard case .request(let request) = parser.next() else { Issue.record("no request"); return }
        #expect(request.body == Array("ok".utf8))
    }

    @Test func leadingEmptyLinesAreIgnoredAndHTTP10KeepAliveIsHonoured() throws {
        guard case .request(let request) = Self.events("\r\n\r\nGET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").first else {
            Issue.record("no request"); return
        }
        #expect(request.keepAlive)
    }

    /// Each malformed input: the status and a word the message must contain.
    @Test(arguments: [
        ("GET /\r\n\r\n", 400, "METHOD SP TARGET"),
        ("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "METHOD SP TARGET"),
        ("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "not a token"),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "not supported"),
        ("GET / HTTQ/1.1\r\nHost: x\r\n\r\n", 400, "HTTP/1.1"),
        ("GET api HTTP/1.1\r\nHost: x\r\n\r\n", 400, "start with '/'"),
        ("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "two hex digits"),
        ("GET /?q=%ff HTTP/1.1\r\nHost: x\r\n\r\n", 400, "not UTF-8"),
        ("GET / HTTP/1.1\r\n\r\n", 400, "Host"),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "more than one Host"),
        ("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, "folding"),
        ("GET / HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n", 400, "no name and colon"),
        ("GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400, "not a token"),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: a\u{1}b\r\n\r\n", 400, "control character"),
        ("GET / HTTP/1.1\rHost: x\r\n\r\n", 400, "bare CR inside the head"),
        ("GET / HTTP/1.1\nHost: x\n\rX: y\n\n", 400, "bare CR inside the head"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400, "decimal number"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400, "different values"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "only chunked"),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", 400, "hex digits"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400, "followed by CRLF"),
        ("POST / HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", 417, "not supported"),
    ])
    func malformed(input: String, status: Int, word: String) throws {
        let error = try #require(Self.failure(input), "accepted: \(input.debugDescription)")
        #expect(error.status == status, "\(input.debugDescription): \(error)")
        #expect(error.message.contains(word), "\(input.debugDescription): \(error)")
    }

    static let small: HTTPLimits = {
        var limits = HTTPLimits()
        limits.requestLineBytes = 64
        limits.headBytes = 256
        limits.headerCount = 4
        limits.bodyBytes = 100
        limits.chunkLineBytes = 16
        return limits
    }()

    /// Each bound: over it is 413 naming it, and the message says which.
    @Test(arguments: [
        ("GET /" + String(repeating: "a", count: 80) + " HTTP/1.1\r\nHost: x\r\n\r\n", "request line"),
        ("GET /" + String(repeating: "a", count: 80), "request line"),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "v", count: 300) + "\r\n\r\n", "head"),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "v", count: 300), "head"),
        ("GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", "header fields"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n", "at most 100"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", "decimal number"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n50\r\n" + String(repeating: "a", count: 80) + "\r\n50\r\n", "chunked body"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 40), "chunk-size line"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: " + String(repeating: "t", count: 300), "trailer"),
    ])
    func oversize(input: String, word: String) throws {
        let error = try #require(Self.failure(input, limits: Self.small), "accepted: \(input.prefix(60).debugDescription)")
        #expect(error.status == (word == "decimal number" ? 400 : 413), "\(error)")
        #expect(error.message.contains(word), "\(error)")
    }

    /// More bytes than a request may take, appended at once, fail without being kept.
    @Test func appendingPastTheBufferBoundFails() throws {
        var parser = HTTPRequestParser(limits: Self.small)
        parser.append([UInt8](repeating: UInt8(ascii: "a"), count: Self.small.bufferedBytes + 1))
        guard case .failed(let error) = parser.next() else { Issue.record("not failed"); return }
        #expect(error.status == 413)
        // Failed stays failed: nothing after a broken request can be framed.
        parser.append(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(parser.next() == .failed(error))
    }

    /// A CR before the request line is judged by what follows it, however the bytes are split
    /// (the fuzzer's second find: fed byte by byte, the CR used to be skipped unseen).
    @Test func aBareCRBeforeTheRequestLineIsRefusedFedWholeOrByteByByte() throws {
        let text = Array("\r\u{0B}GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var whole = HTTPRequestParser(), split = HTTPRequestParser()
        whole.append(text)
        var last = HTTPRequestParser.Event.needMore
        for byte in text where !split.hasFailed {
            split.append([byte])
            last = split.next()
        }
        #expect(whole.next() == .failed(HTTPError(400, "a bare CR before the request line")))
        #expect(last == .failed(HTTPError(400, "a bare CR before the request line")))
    }

    /// A chunk-size line of exactly the bound is taken however it arrives (the fuzzer's third
    /// find: byte by byte, its CR without the LF used to count as one byte too many).
    @Test func aChunkLineAtTheBoundIsTakenByteByByte() throws {
        let head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        let line = "1;" + String(repeating: "e", count: Self.small.chunkLineBytes - 2)
        let text = Array((head + line + "\r\na\r\n0\r\n\r\n").utf8)
        var parser = HTTPRequestParser(limits: Self.small)
        var requests: [HTTPRequest] = []
        for byte in text {
            parser.append([byte])
            if case .request(let request) = parser.next() { requests.append(request) }
        }
        #expect(requests.map(\.body) == [Array("a".utf8)], "\(parser.next())")
    }

    @Test func absoluteFormTargetsUseTheirPath() throws {
        guard case .request(let request) = Self.events("GET http://node:8080/api/status?x=1 HTTP/1.1\r\nHost: node\r\n\r\n").first else {
            Issue.record("no request"); return
        }
        #expect(request.path == "/api/status" && request.parameter("x") == "1")
    }

    /// Lines ending in a bare LF (RFC 9112 §2.2) make the same requests as CRLF, fed whole or
    /// byte by byte, pipelined too.
    @Test(arguments: [
        "GET /a?x=1 HTTP/1.1\nHost: h\nX-One: 1\n\nPOST /b HTTP/1.1\nHost: h\nContent-Length: 2\n\nok",
        "GET /a?x=1 HTTP/1.1\r\nHost: h\nX-One: 1\r\n\nPOST /b HTTP/1.1\nHost: h\r\nContent-Length: 2\n\r\nok",
        "\nGET /a?x=1 HTTP/1.1\nHost: h\nX-One: 1\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok",
    ])
    func bareLFEndsLines(input: String) throws {
        let expected = Self.events(
            "GET /a?x=1 HTTP/1.1\r\nHost: h\r\nX-One: 1\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok")
        #expect(expected.count == 3 && Self.events(input) == expected)
        var parser = HTTPRequestParser()
        var events: [HTTPRequestParser.Event] = []
        for byte in input.utf8 {
            parser.append([byte])
            for _ in 0..<4 {
                let event = parser.next()
                if event == .needMore { break }
                events.append(event)
                if case .failed = event { break }
            }
        }
        #expect(events == Array(expected.dropLast()))
    }
}
