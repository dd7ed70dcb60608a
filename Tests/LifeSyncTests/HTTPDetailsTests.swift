import LifeSync
import LifeSyncHTTP
import Testing

/// What real clients meet beyond the routes: `Date`, HTTP/1.0 keep-alive, and an event stream
/// that ends whole when the server stops.
@Suite struct HTTPDetailsTests {
    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"

    @Test(arguments: [
        (Int64(784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT"),  // RFC 9110 §5.6.7's example
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (951_868_799_999, "Tue, 29 Feb 2000 23:59:59 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (1_795_906_800_000, "Sat, 28 Nov 2026 23:00:00 GMT"),
    ])
    func httpDateIsIMFFixdate(milliseconds: Int64, expected: String) {
        #expect(Timestamp(millisecondsSince1970: milliseconds).httpDate == expected)
    }

    /// Every head the connection writes carries the date the runtime gave it — a response, a
    /// parse failure, a 408 — and none without one (the connection reads no clock).
    @Test func everyResponseCarriesTheDateGiven() throws {
        var connection = HTTPConnection(now: 0)
        connection.date = Self.date
        _ = connection.received(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), now: 0)
        let answered = HTTPConnectionTests.sent(connection.respond(.json(200, .null), now: 0))
        #expect(answered.hasPrefix("HTTP/1.1 200 OK\r\nDate: \(Self.date)\r\n"), "\(answered)")
        let failed = HTTPConnectionTests.sent(connection.received(Array("BLAH\r\n\r\n".utf8), now: 1))
        #expect(failed.hasPrefix("HTTP/1.1 400 Bad Request\r\nDate: \(Self.date)\r\n"), "\(failed)")

        var slow = HTTPConnection(now: 0)
        slow.date = Self.date
        _ = slow.received(Array("GET / HT".utf8), now: 0)
        #expect(HTTPConnectionTests.sent(slow.tick(now: 60_000)).hasPrefix("HTTP/1.1 408 Request Timeout\r\nDate: \(Self.date)\r\n"))

        var clockless = HTTPConnection(now: 0)
        _ = clockless.received(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), now: 0)
        #expect(!HTTPConnectionTests.sent(clockless.respond(.json(200, .null), now: 0)).contains("Date:"))
    }

    /// HTTP/1.0 keeps a connection only when asked, and then must say so: a 1.0 client that is
    /// not told `Connection: keep-alive` waits for the close that ends its response.
    @Test func http10KeepAliveIsAnsweredAndKept() throws {
        var kept = HTTPConnection(now: 0)
        _ = kept.received(Array("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n".utf8), now: 0)
        let first = kept.respond(.json(200, .null), now: 0)
        #expect(HTTPConnectionTests.sent(first).contains("\r\nConnection: keep-alive\r\n") && !kept.isClosed)
        guard case .handle(let second) = kept.received(Array("GET /b HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n".utf8), now: 1).last else {
            Issue.record("the kept connection takes a second request"); return
        }
        #expect(second.path == "/b")

        var plain = HTTPConnection(now: 0)
        _ = plain.received(Array("GET /a HTTP/1.0\r\n\r\n".utf8), now: 0)
        let closed = plain.respond(.json(200, .null), now: 0)
        #expect(HTTPConnectionTests.sent(closed).contains("\r\nConnection: close\r\n") && closed.last == .close && plain.isClosed)

        // HTTP/1.1 keeps the connection by default and says nothing of it.
        var http11 = HTTPConnection(now: 0)
        _ = http11.received(Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".utf8), now: 0)
        #expect(!HTTPConnectionTests.sent(http11.respond(.json(200, .null), now: 0)).contains("Connection:"))
    }

    /// A stopping server ends an event stream with its last chunk; a finite body still going
    /// out is cut (closed without it), never passed off as whole.
    @Test func shutdownEndsAnEventStreamWhole() throws {
        let source = HTTPStreamingTests.Pieces([.bytes(Array("data: 1\n\n".utf8)), .later], openEnded: true)
        var (_, _, stream) = HTTPStreamingTests.serve("GET /s HTTP/1.1\r\nHost: h\r\n\r\n",
                                                      HTTPResponse(status: 200, streaming: .source(source)), source: source)
        #expect(stream.isStreaming)
        let actions = stream.shutdown()
        #expect(HTTPConnectionTests.sent(actions) == "0\r\n\r\n" && actions.last == .close && stream.isClosed)

        var file = HTTPConnection(now: 0)
        _ = file.received(Array("GET /f HTTP/1.1\r\nHost: h\r\n\r\n".utf8), now: 0)
        _ = file.respond(HTTPResponse(status: 200, streaming: .source(HTTPStreamingTests.Pieces([]))), now: 0)
        #expect(file.shutdown() == [.close])
        var idle = HTTPConnection(now: 0)
        #expect(idle.shutdown() == [.close] && idle.isClosed && idle.shutdown().isEmpty)
    }
}
