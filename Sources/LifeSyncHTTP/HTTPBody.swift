/// What follows a response's head. Only `bytes` is ever whole in memory: a `source` is pulled
/// piece by piece by the server, and only while the client's output queue is under its bound
/// (so a client that reads slowly slows the producer instead of growing a buffer); a `file` is
/// read by the runtime, since the core opens no files.
package enum HTTPBody: Equatable {
    /// Built whole; sent with Content-Length.
    case bytes([UInt8])
    /// Produced piece by piece; sent chunked (HTTP/1.1) or up to the close (HTTP/1.0).
    case source(any HTTPBodySource)
    /// `length` bytes from `offset` of the recording file `name` in the node's recording storage
    /// (`RecordingStorage`); sent with Content-Length. The caller checked the range fits the file.
    case file(name: String, offset: UInt64, length: UInt64)

    package static func == (a: HTTPBody, b: HTTPBody) -> Bool {
        switch (a, b) {
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.source(let x), .source(let y)): return x === y
        case (.file(let n, let o, let l), .file(let m, let p, let k)): return n == m && o == p && l == k
        default: return false
        }
    }

    /// The bytes when built whole, else nil.
    package var wholeBytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// The length when known before the first byte is sent.
    var knownLength: UInt64? {
        switch self {
        case .bytes(let bytes): return UInt64(bytes.count)
        case .source: return nil
        case .file(_, _, let length): return length
        }
    }

    /// Whether the body never ends by itself (an event stream): the server bounds how many
    /// are open and keeps them alive.
    package var isOpenEnded: Bool { keepalive != nil }

    var keepalive: (interval: Int64, bytes: [UInt8])? {
        if case .source(let source) = self, let keepalive = source.keepalive {
            precondition(keepalive.interval > 0 && !keepalive.bytes.isEmpty, "a keepalive sends something, now and then")
            return keepalive
        }
        return nil
    }
}

/// One pull of an `HTTPBodySource`.
package enum HTTPBodyPiece: Equatable, Sendable {
    case bytes([UInt8])
    /// Nothing now; an open-ended source has more once its data changes (the server pulls again then).
    case later
    case end
}

/// A body produced on demand. `next` is called only when the client can take more; a piece
/// may exceed `maximumBytes` by at most one item of the source's (an event, a row).
package protocol HTTPBodySource: AnyObject {
    /// The next piece. Throwing ends the response cut short: its head has gone, so the client
    /// sees a body without its end (chunked framing makes that visible).
    func next(maximumBytes: Int) throws -> HTTPBodyPiece
    /// For an open-ended source: what to send when nothing was sent for `interval` ms, so the
    /// client (and any proxy between) sees the stream is alive. nil: the source ends by itself.
    var keepalive: (interval: Int64, bytes: [UInt8])? { get }
}

extension HTTPBodySource {
    package var keepalive: (interval: Int64, bytes: [UInt8])? { nil }
}
