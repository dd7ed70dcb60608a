import LifeSync
import LifeSyncHTTP
import Testing

/// The streamed-body half of `HTTPConnection`: framing, keepalive, HEAD, HTTP/1.0, a body cut short.
@Suite struct HTTPStreamingTests {
    /// A source handing out fixed pieces, then `.later` or `.end`.
    final class Pieces: HTTPBodySource {
        var pieces: [HTTPBodyPiece]
        let openEnded: Bool
        init(_ pieces: [HTTPBodyPiece], openEnded: Bool = false) {
            self.pieces = pieces
            self.openEnded = openEnded
        }
        func next(maximumBytes: Int) throws -> HTTPBodyPiece { pieces.isEmpty ? .end : pieces.removeFirst() }
        var keepalive: (interval: Int64, bytes: [UInt8])? { openEnded ? (1_000, Array(": ka\n\n".utf8)) : nil }
    }

    static func text(_ actions: [HTTPConnection.Action]) -> String { HTTPConnectionTests.sent(actions) }

    /// Drives a connection as the runtime does: respond, then pull every piece.
    static func serve(_ request: String, _ response: HTTPResponse, source: Pieces?) -> (String, [HTTPConnection.Action], HTTPConnection) {
        var connection = HTTPConnection(now: 0)
        _ = connection.received(Array(request.utf8), now: 0)
        var actions = connection.respond(response, now: 1)
        if actions.contains(.pullBody), let source {
            for step in 0..<100 {
                guard let piece = try? source.next(maximumBytes: 1024) else { break }
                switch piece {
                case .bytes(let bytes): actions += connection.bodyPiece(bytes, now: Int64(2 + step))
                case .later: return (text(actions), actions, connection)
                case .end: return (text(actions) + text(connection.bodyEnded(now: 200)), actions, connection)
                }
            }
        }
        return (text(actions), actions, connection)
    }

    @Test func aSourceIsSentChunkedAndTheConnectionStaysOpen() throws {
        let source = Pieces([.bytes(Array("hello ".utf8)), .bytes(Array("world".utf8))])
        let (wire, actions, connection) = Self.serve("GET /x HTTP/1.1\r\nHost: h\r\n\r\n", HTTPResponse(status: 200, streaming: .source(source)), source: source)
        #expect(actions.contains(.pullBody))
        #expect(wire == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n", "\(wire)")
        #expect(!connection.isClosed && !connection.isStreaming)
    }

    @Test func headSendsTheHeadAndNeverPulls() throws {
        let source = Pieces([.bytes(Array("never".utf8))])
        let (wire, actions, connection) = Self.serve("HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n", HTTPResponse(status: 200, streaming: .source(source)), source: source)
        #expect(!actions.contains(.pullBody) && wire == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" && !connection.isStreaming)
        #expect(source.pieces.count == 1)
    }

    @Test func http10GetsTheBodyUntilTheClose() throws {
        let source = Pieces([.bytes(Array("abc".utf8))])
        let (wire, _, connection) = Self.serve("GET /x HTTP/1.0\r\n\r\n", HTTPResponse(status: 200, streaming: .source(source)), source: source)
        #expect(wire == "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc", "\(wire)")
        #expect(connection.isClosed)
    }

    @Test func aFileBodyHasItsLengthAndOneEndingShortIsCut() throws {
        var connection = HTTPConnection(now: 0)
        _ = connection.received(Array("GET /f HTTP/1.1\r\nHost: h\r\n\r\n".utf8), now: 0)
        let actions = connection.respond(HTTPResponse(status: 206, streaming: .file(name: "r.m4a", offset: 10, length: 5)), now: 0)
        #expect(Self.text(actions) == "HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\n\r\n" && actions.last == .pullBody)
        #expect(Self.text(connection.bodyPiece(Array("abc".utf8), now: 1)) == "abc")
        // Two bytes owed: ending now must not pass for a whole body.
        #expect(connection.bodyEnded(now: 2) == [.close] && connection.isClosed)
    }

    @Test func anOpenEndedBodyKeepsAliveReadsInputAndEndsWhenTheClientLeaves() throws {
        let source = Pieces([.bytes(Array("data: 1\n\n".utf8)), .later], openEnded: true)
        var (_, _, connection) = Self.serve("GET /s HTTP/1.1\r\nHost: h\r\n\r\n", HTTPResponse(status: 200, streaming: .source(source)), source: source)
        #expect(connection.isStreaming && connection.readsInput)
        // The last piece went at 2: the keepalive is due 1 s later, as a chunk.
        #expect(connection.deadline == 1_002)
        #expect(connection.tick(now: 1_001).isEmpty)
        #expect(Self.text(connection.tick(now: 1_002)) == "6\r\n: ka\n\n\r\n")
        #expect(connection.deadline == 2_002)
        // Bytes sent behind an endless body are dropped; the client closing ends it.
        #expect(connection.received(Array("GET / HTTP/1.1\r\n\r\n".utf8), now: 1_100).isEmpty)
        #expect(connection.inputEnded() == [.close] && connection.isClosed)
    }

    @Test func aFiniteBodyIsFinishedBeforeAPipelinedRequest() throws {
        var connection = HTTPConnection(now: 0)
        var actions = connection.received(Array("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n".utf8), now: 0)
        #expect(actions.count == 1)
        let source = Pieces([.bytes([0x41])])
        actions = connection.respond(HTTPResponse(status: 200, streaming: .source(source)), now: 0)
        #expect(!connection.readsInput && connection.isHandling)
        actions = connection.bodyPiece([0x41], now: 1) + connection.bodyEnded(now: 1)
        guard case .handle(let second) = actions.last else { Issue.record("\(actions)"); return }
        #expect(second.path == "/b" && Self.text(actions) == "1\r\nA\r\n0\r\n\r\n")
    }

    @Test func noBodyStatusesSendNoFraming() throws {
        let source = Pieces([.bytes([1])])
        let (wire, actions, _) = Self.serve("GET /x HTTP/1.1\r\nHost: h\r\n\r\n", HTTPResponse(status: 304, streaming: .source(source)), source: source)
        #expect(!actions.contains(.pullBody) && wire == "HTTP/1.1 304 Not Modified\r\n\r\n")
    }
}
