import LifeSync

/// One connection of a node server: its TLS stream, the frames queued for it, and the flags
/// the poll loop steers by. Output is bounded by the server (`NodeServer.Limits`).
final class PeerConnection {
    let stream: TLSStream
    let id: Int
    let remote: String
    /// The remote host of an accepted connection (for the per-address cap); nil for our dials.
    let acceptedFrom: String?
    /// Set while a dial is in progress.
    var dialing: (peer: Int, deadline: Int64)?
    /// Set from the TCP connection until the TLS handshake is done: the core hears of the
    /// connection only then. `dialled` is the core's peer index for our own dials.
    var handshake: (dialled: Int?, opening: TLSOpening)?
    /// The SHA-256 of the key the peer proved it holds, once the handshake is done.
    var peerKey: SHA256.Digest?
    /// Our own dial, or an accepted connection whose peer proved a trusted key: never made to
    /// give way to a newcomer (see `NodeServer.admission`).
    var proven = false
    /// When it was accepted (or dialled): an accepted connection not proven within
    /// `Limits.preAuthenticationTimeout` of this is dropped.
    var openedAt: Int64 = 0
    /// Frames waiting for the stream (`OutputQueue`).
    private var output = OutputQueue()
    /// Bytes queued, not yet written.
    var queued: Int { output.count }
    /// False once a write met a full buffer, until poll reports POLLOUT: writes queue without a
    /// system call each meanwhile.
    var writable = true
    /// Not polled for input while its output is over the bound (see `Limits.maximumQueuedOutput`).
    var readPaused = false
    var pausedBefore = false
    /// Its last read was mostly tiny frames (`Limits.tinyFrameBytes`), or it has not been read
    /// yet: it is read in small pieces (a PING flood's first read too).
    var sendsTinyFrames = true
    /// Set by a close with output still queued: dropped once flushed, or at this time anyway.
    var closeWhenFlushed: Int64?

    init(stream: TLSStream, id: Int, remote: String, acceptedFrom: String? = nil) {
        self.stream = stream
        self.id = id
        self.remote = remote
        self.acceptedFrom = acceptedFrom
    }

    var fd: Int32 { stream.fd }
    var hasOutput: Bool { !output.isEmpty }

    func enqueue(_ frame: [UInt8]) { output.enqueue(frame) }

    typealias Flush = OutputQueue.Flush

    /// Writes queued output until it is all gone or the stream would block.
    func flush() -> Flush {
        let outcome = output.flush(to: stream).outcome
        if outcome == .blocked { writable = false }
        return outcome
    }
}
