/// What one HTTP request may make a node hold. Every bound is checked before the bytes are kept,
/// so a client can cost the node at most about `bufferedBytes` per connection.
public struct HTTPLimits: Equatable, Sendable {
    /// The request line (method, target, version).
    public var requestLineBytes = 8 * 1024
    /// The whole head: request line and every header line.
    public var headBytes = 32 * 1024
    public var headerCount = 100
    /// The body after de-chunking. A batch of a few hundred ordinary entries fits; a bigger
    /// import goes in several requests (or `lifesync import`).
    public var bodyBytes = 4 << 20
    /// One chunk-size line of a chunked body, extensions included.
    public var chunkLineBytes = 1024

    public init() {}

    /// The most a parser keeps unconsumed: a full head and body plus the framing of a chunked
    /// body, which can be no more than a chunk line per chunk byte would make it; a client that
    /// needs more is refused with 413 before it gets there.
    public var bufferedBytes: Int { headBytes + bodyBytes + 64 * 1024 }
}

/// Why a request cannot be served as sent: the status to answer with and a sentence naming the
/// problem. Oversized requests are 413 whatever part was too big (the message says which).
public struct HTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var message: String

    public init(_ status: Int, _ message: String) {
        precondition((400...599).contains(status), "an HTTP error is a 4xx or 5xx status")
        self.status = status
        self.message = message
    }

    public var description: String { "\(status) \(message)" }
}
