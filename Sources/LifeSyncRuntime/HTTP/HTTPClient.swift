import LifeSync
import LifeSyncHTTP

/// One HTTP client of the node: its socket, its protocol state, and the output queued for it.
final class HTTPClient {
    let stream: any ByteStream
    /// The TLS stream under HTTPS (`serve --http-tls`), and its opening until the handshake is
    /// done: nothing is read as HTTP before.
    let tls: TLSStream?
    var opening: TLSOpening?
    let remote: String
    var connection: HTTPConnection
    /// Output not yet written (`OutputQueue`).
    private var output = OutputQueue()
    /// A pipelined request held back while the output is over its bound.
    var waiting: HTTPRequest?
    /// Close once the output has left.
    var closing = false
    /// The streamed body being produced, once the connection asked for it (`.pullBody`), and
    /// how far a file body has been read.
    var body: HTTPBody?
    var fileRead: UInt64 = 0
    /// The open-ended body has nothing more until the replica changes.
    var awaitingChanges = false
    /// When output last moved (or was queued onto an empty queue).
    var lastProgress: Int64
    /// When it was accepted; and whether it has made a request that bore a valid key (or media
    /// token): a proven client never gives way to a newcomer (`HTTPServer.makeRoom`).
    let openedAt: Int64
    var proven = false

    init(stream: any ByteStream, tls: TLSStream?, opening: TLSOpening?, remote: String, connection: HTTPConnection, now: Int64) {
        self.stream = stream
        self.tls = tls
        self.opening = opening
        self.remote = remote
        self.connection = connection
        lastProgress = now
        openedAt = now
    }

    var queued: Int { output.count }

    func enqueue(_ bytes: [UInt8], now: Int64) {
        if queued == 0 { lastProgress = now }
        output.enqueue(bytes)
    }

    typealias Flush = OutputQueue.Flush

    func flush(now: Int64) -> Flush {
        let (outcome, wrote) = output.flush(to: stream)
        if wrote { lastProgress = now }
        return outcome
    }
}
