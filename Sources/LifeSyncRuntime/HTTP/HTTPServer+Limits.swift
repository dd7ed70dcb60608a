import LifeSync

extension HTTPServer {
    /// What HTTP clients can make the node hold, beside what one request may (`HTTPLimits`).
    public struct Limits: Sendable {
        /// Open HTTP connections; one more is answered 503 and closed at once.
        public var maximumConnections = 64
        /// Bytes read from one connection per poll round.
        public var readSize = 64 * 1024
        /// Responses queued for a client beyond which its next pipelined request waits (and
        /// nothing more is read from it) until they drain.
        public var maximumQueuedOutput = 4 << 20
        /// A client that reads none of its queued response for this long is dropped. Ms.
        public var writeStall: Int64 = 30_000
        public var request = HTTPLimits()
        public var timeouts = HTTPConnection.Timeouts()

        public init() {}
    }
}
