/// What one HTTP request may make a node hold. Every bound is checked before the bytes are kept,
/// so a client can cost the node at most about `bufferedBytes` per connection.
package struct HTTPLimits: Equatable, Sendable {
    /// The request line (method, target, version).
    package var requestLineBytes = 8 * 1024
    /// The whole head: request line and every header line.
    package var headBytes = 32 * 1024
    package var headerCount = 100
    /// The body after de-chunking. A batch of a few hundred ordinary entries fits; a bigger
    /// import goes in several requests (or `lifesync import`).
    package var bodyBytes = 4 << 20
    /// One chunk-size line of a chunked body, extensions included.
    package var chunkLineBytes = 1024
    /// Routes whose body has its own bound instead of `bodyBytes`, by `"METHOD /path"`
    /// (`"POST /api/recordings"`: an upload is bigger than any JSON a client sends).
    package var bodyBytesByRoute: [String: Int] = [:]

    package init() {}

    /// The bound on the body of a request with this method and decoded path, and whose it is
    /// (for the refusal's words).
    package func bodyBytes(method: String, path: String) -> (bytes: Int, route: String?) {
        let route = method + " " + path
        guard let bytes = bodyBytesByRoute[route] else { return (bodyBytes, nil) }
        precondition(bytes >= 0, "a body bound is a size")
        return (bytes, route)
    }

    /// The most a parser keeps unconsumed: a full head and the largest body plus the framing of
    /// a chunked body, which can be no more than a chunk line per chunk byte would make it; a
    /// client that needs more is refused with 413 before it gets there.
    package var bufferedBytes: Int { headBytes + max(bodyBytes, bodyBytesByRoute.values.max() ?? 0) + 64 * 1024 }
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
