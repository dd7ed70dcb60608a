import LifeSync
import LifeSyncHTTP
import Testing

@Suite struct HTTPConnectionTests {
    static func sent(_ actions: [HTTPConnection.Action]) -> String {
        actions.compactMap { if case .send(let bytes) = $0 { return String(decoding: bytes, as: UTF8.self) } else { return nil } }.joined()
    }

    @Test func keepAliveAnswersPipelinedRequestsInOrder() throws {
        var connection = HTTPConnection(now: 0)
        var actions = connection.received(Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b HTTP/1.1\r\nHost: x\r\n\r\n".utf8), now: 1)
        #expect(actions.count == 1)
        guard case .handle(let first) = actions.first else { Issue.record("\(actions)"); return }
        #expect(first.path == "/a" && connection.isHandling)
        actions = connection.respond(.json(200, .string("a")), now: 2)
        #expect(Self.sent(actions).hasPrefix("HTTP/1.1 200 OK\r\n") && Self.sent(actions).hasSuffix("\"a\"\n"))
        guard case .handle(let second) = actions.last else { Issue.record("\(actions)"); return }
        #expect(second.method == "HEAD")
        actions = connection.respond(.json(200, .string("b")), now: 3)
        // HEAD: the length of the body that GET would send, and no body.
        #expect(Self.sent(actions).contains("Content-Length: 4\r\n") && Self.sent(actions).hasSuffix("\r\n\r\n"))
        #expect(!connection.isClosed)
    }

    @Test func connectionCloseClosesAfterTheResponse() throws {
        var connection = HTTPConnection(now: 0)
        _ = connection.received(Array("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), now: 0)
        let actions = connection.respond(HTTPResponse(status: 204), now: 0)
        #expect(actions.last == .close && Self.sent(actions).contains("Connection: close") && connection.isClosed)
        #expect(!Self.sent(actions).contains("Content-Length"))
    }

    @Test func malformedRequestIsAnsweredThenClosed() throws {
        var connection = HTTPConnection(now: 0)
        let actions = connection.received(Array("BLAH\r\n\r\n".utf8), now: 0)
        #expect(Self.sent(actions).hasPrefix("HTTP/1.1 400 Bad Request\r\n") && Self.sent(actions).contains("\"error\""))
        #expect(actions.last == .close && connection.isClosed)
        #expect(connection.received(Array("GET / HTTP/1.1\r\n\r\n".utf8), now: 1).isEmpty)
    }

    @Test func expectContinueSendsTheGoAhead() throws {
        var connection = HTTPConnection(now: 0)
        let actions = connection.received(Array("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8), now: 0)
        #expect(actions == [.send(HTTPResponse.continueBytes)])
    }

    @Test func slowRequestGets408AndIdleConnectionCloses() throws {
        var timeouts = HTTPConnection.Timeouts()
        timeouts.idle = 1_000
        timeouts.request = 500
        var slow = HTTPConnection(now: 0, timeouts: timeouts)
        #expect(slow.received(Array("GET / HT".utf8), now: 100).isEmpty)
        #expect(slow.deadline == 600)
        #expect(slow.tick(now: 599).isEmpty)
        let actions = slow.tick(now: 600)
        #expect(Self.sent(actions).hasPrefix("HTTP/1.1 408 Request Timeout") && actions.last == .close)

        var idle = HTTPConnection(now: 0, timeouts: timeouts)
        #expect(idle.deadline == 1_000 && idle.tick(now: 999).isEmpty)
        #expect(idle.tick(now: 1_000) == [.close] && idle.isClosed)
    }

    @Test func responseEncoding() throws {
        var response = HTTPResponse.error(404, "no entry with id x")
        response.headers.add("Access-Control-Allow-Origin", "*")
        let text = String(decoding: response.encoded(keepAlive: true), as: UTF8.self)
        let body = try #require(response.body.wholeBytes)
        #expect(text == "HTTP/1.1 404 Not Found\r\nContent-Type: application/json; charset=utf-8\r\nAccess-Control-Allow-Origin: *\r\n"
                + "Content-Length: \(body.count)\r\n\r\n" + String(decoding: body, as: UTF8.self))
    }
}
