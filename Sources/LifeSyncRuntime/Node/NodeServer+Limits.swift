extension NodeServer {
    /// Bounds on what peers can make the node hold. The defaults suit a personal node (a few
    /// devices); tests use small values.
    public struct Limits: Sendable {
        /// Output queued for one connection beyond which the node stops reading from it until the
        /// queue drains below half. A session keeps at most its window in flight: 4 batches of
        /// at most 2 MiB plus 4 recording chunks of 1 MiB (about 12 MiB) plus small replies, so a
        /// peer that reads is never paused at 16 MiB; one that only sends (a PING flood that never
        /// reads the PONGs) can make us queue this much plus the replies to one read (`readSize`).
        public var maximumQueuedOutput = 16 << 20
        /// Output queued for all connections together beyond which the node stops reading from
        /// those holding a megabyte or more of it, until the sum is below half: four peers
        /// flooding PINGs and reading nothing made a node hold 238 MiB.
        public var maximumTotalQueuedOutput = 64 << 20
        /// Bytes of unfinished frames all sessions hold together: beyond it a connection is read
        /// only in small pieces (`budgetReadSize`) and not at all while it holds an unfinished
        /// frame of its own, so forty paired peers each parking most of an 8 MiB frame cannot
        /// make the node hold 320 MiB; a frame that completes frees its share.
        public var maximumBufferedInput = 64 << 20
        /// The read size while over `maximumBufferedInput`: small frames (a PING, an ACK, a
        /// HELLO) still get through.
        public var budgetReadSize = 64 * 1024
        /// A connection whose last read made one action (a reply, an event) per this many bytes
        /// or fewer is read in `budgetReadSize` pieces too: all of one read is decoded and
        /// answered before anything else runs, and tiny frames cost many times their size meanwhile
        /// (a 4 MiB read of PINGs made some 320,000 messages, replies and actions, about 40 MiB,
        /// and held the loop for seconds in a debug build, keyed HTTP clients unanswered).
        public var tinyFrameBytes = 256
        /// Free heap memory beyond which it is given back to the kernel (checked every 2 s): the
        /// warm frames of a transfer stay (`FrameMemory`), what a flood left does not.
        public var keptFreeMemory = 16 << 20
        /// A read or a send of at most this many bytes is a keepalive or an acknowledgement, not
        /// syncing (`giveMemoryBack`): a PING or PONG frame is 13 bytes, an ACK 21.
        public var keepaliveBytes = 64
        /// While over `maximumBufferedInput`, a connection whose unfinished frame has not grown
        /// for this long is closed. Ms.
        public var stalledFrameTimeout: Int64 = 10_000
        /// Bytes read from one connection per readiness, handed to the session in one call. Two
        /// full batches fit, so batches that arrived together are committed together.
        public var readSize = 4 << 20
        /// Open connections (accepted and dialled) beyond which a newly accepted one is closed at
        /// once. Never more than RLIMIT_NOFILE allows minus `reservedFileDescriptors`.
        public var maximumConnections = 128
        /// Accepted connections from one remote address not yet proven a paired peer's, beyond
        /// which the oldest of them gives way to a new one (`admission`).
        public var maximumConnectionsPerAddress = 8
        /// File descriptors kept out of the connection cap: the standard streams, the listener,
        /// the replica (database, WAL, shared memory, journal), recording files being read or
        /// written, a dial in progress, and what the process embedding the node holds.
        public var reservedFileDescriptors = 32
        /// When accept fails for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM),
        /// the listener is left out of the poll for this long, doubling per failure up to
        /// `maximumAcceptBackoff`, instead of spinning on a connection it cannot take. Ms.
        public var acceptBackoff: Int64 = 100
        public var maximumAcceptBackoff: Int64 = 1_000
        /// A connection closed with output still queued (an ERROR frame) is dropped once that has
        /// left, or after this long if the peer does not read it. Ms.
        public var closeLinger: Int64 = 5_000
        /// At most one line per this interval about refused connections (a flood must not flood
        /// the log); the lines count those refused in between. Ms.
        public var refusalLogInterval: Int64 = 1_000
        /// A TLS handshake of our own dial not done within this long fails (a dial counts as
        /// failed). Ms.
        public var handshakeTimeout: Int64 = 10_000
        /// An accepted connection must prove a trusted key (TLS handshake, then its HELLO)
        /// within this long, or it is dropped: a peer that connects and says nothing, or a
        /// stranger that stops after the handshake, holds a slot no longer. A paired device on
        /// a LAN needs milliseconds. Ms.
        public var preAuthenticationTimeout: Int64 = 3_000
        /// Accepted connections not yet proven (see `PeerConnection.proven`) held at once; a
        /// newcomer over this, or over a cap, takes the place of the oldest of them from the
        /// host holding the most, so strangers can never lock a paired device out.
        public var maximumUnproven = 32

        public init() {}

        /// The connection cap under a descriptor limit of `fileLimit` (nil: unlimited).
        public func connectionCap(fileLimit: Int?) -> Int {
            guard let fileLimit else { return max(1, maximumConnections) }
            return max(1, min(maximumConnections, fileLimit - reservedFileDescriptors))
        }
    }

    /// What the node holds, for tests and status: published once per poll round.
    public struct Statistics: Sendable, Equatable {
        /// Open connections, accepted and dialled.
        public var connections = 0
        /// Output bytes queued for all connections now.
        public var queuedOutputBytes = 0
        /// The most output ever queued for one connection (after a send was attempted).
        public var largestQueuedOutput = 0
        /// Connections not polled for input because their output is over the bound.
        public var pausedConnections = 0
        /// Accepted connections closed at once because of a connection cap.
        public var refusedConnections = 0
        /// TLS handshakes that failed or timed out (both directions).
        public var failedHandshakes = 0
        /// Times accept failed for want of resources and the listener was paused.
        public var acceptFailures = 0
        /// Poll rounds in which the listener was polled.
        public var listenerPolls = 0
        /// Whether the listener is left out of the poll (backing off after accept failed).
        public var listenerPaused = false
        /// The connection cap in force (the configured one, lowered to fit RLIMIT_NOFILE).
        public var connectionCap = 0
        /// Bytes of unfinished frames held by all sessions now, and the most ever held.
        public var bufferedInputBytes = 0
        public var largestBufferedInput = 0
    }
}
