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
    var handshake: (dialled: Int?, deadline: Int64)?
    /// An accepted connection's first bytes were looked at: a TLS ClientHello, or not.
    var sniffed = false
    /// The SHA-256 of the key the peer proved it holds, once the handshake is done.
    var peerKey: SHA256.Digest?
    /// Our own dial, or an accepted connection whose peer proved a trusted key: never made to
    /// give way to a newcomer (see `NodeServer.admission`).
    var proven = false
    /// When it was accepted (or dialled): an accepted connection not proven within
    /// `Limits.preAuthenticationTimeout` of this is dropped.
    var openedAt: Int64 = 0
    /// Frames waiting for the stream, oldest first; `headSent` bytes of the first already went.
    /// Large frames stay separate arrays so a 1 MiB chunk is never copied into a growing buffer;
    /// small ones are packed together so they leave in one write.
    private var pending: [[UInt8]] = []
    private var headSent = 0
    /// Bytes in `pending` not yet written.
    private(set) var queued = 0
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
    var hasOutput: Bool { !pending.isEmpty }

    func enqueue(_ frame: [UInt8]) {
        queued += frame.count
        if let last = pending.indices.last, pending[last].count + frame.count <= 64 * 1024 {
            pending[last] += frame
        } else {
            pending.append(frame)
        }
    }

    enum Flush { case drained, blocked, failed }

    /// Writes queued output until it is all gone or the stream would block.
    func flush() -> Flush {
        while let head = pending.first {
            let offset = headSent
            let outcome = head.withUnsafeBytes { stream.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            switch outcome {
            case .wrote(let count):
                headSent += count
                queued -= count
                if headSent == head.count {
                    pending.removeFirst()
                    headSent = 0
                }
            case .wouldBlock:
                writable = false
                return .blocked
            case .failed:
                return .failed
            }
        }
        precondition(queued == 0 && headSent == 0, "drained means nothing queued")
        return .drained
    }
}
