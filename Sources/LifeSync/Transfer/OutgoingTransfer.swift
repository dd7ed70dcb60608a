/// A recording being sent: what the receiver acknowledged, what has been sent, and the running
/// hash of the bytes read so far (chunks carry the digest of the file up to their end).
struct OutgoingTransfer {
    let recording: Recording
    var accepted = false
    /// Where the receiver's first ACCEPT started us (the end of what it held from before).
    var startedAt: UInt64 = 0
    var acknowledged: UInt64 = 0
    var sent: UInt64 = 0
    let hasher = SHA256()
    /// Bytes fed to `hasher`: behind `sent` only right after a resume, until the prefix is hashed.
    var hashed: UInt64 = 0
    /// When the receiver last moved the transfer on (the offer, then every ACCEPT): a transfer
    /// that stalls longer than `TransferConfiguration.stallTimeout` is given up and retried.
    var lastProgress: Int64

    init(recording: Recording, now: Int64) {
        self.recording = recording
        lastProgress = now
    }

    var id: String { recording.id }

    /// Whether this session sent bytes up to the end and the receiver acknowledged them all: the
    /// only proof a CONFIRM can carry (an empty recording needs none).
    var deliveredWhole: Bool {
        recording.size == 0 || (accepted && startedAt < recording.size && acknowledged == recording.size)
    }

    /// An ACCEPT (PROTOCOL.md §5.9): the first one says where to start (0, the size, or a chunk
    /// boundary below it), each later one acknowledges progress — never behind what was
    /// acknowledged, never beyond what was sent (an offset past it made the sender's window
    /// arithmetic trap).
    mutating func accept(offset: UInt64, chunkSize: UInt32, now: Int64) throws(WireError) {
        let size = recording.size
        if !accepted {
            guard offset <= size, offset % UInt64(chunkSize) == 0 || offset == size else {
                throw WireError(.malformed, "ACCEPT offset \(offset) of \(id) is not a chunk boundary within \(size) bytes")
            }
            accepted = true
            startedAt = offset
            sent = offset
            acknowledged = offset
        } else {
            guard offset >= acknowledged, offset <= sent else {
                throw WireError(.malformed, "ACCEPT offset \(offset) of \(id) outside \(acknowledged)…\(sent), what was acknowledged and sent")
            }
            acknowledged = offset
        }
        lastProgress = max(lastProgress, now)
        precondition(acknowledged <= sent && sent <= size, "acknowledged ≤ sent ≤ size")
        precondition(startedAt <= acknowledged, "acknowledged from where the receiver started")
    }

    /// Bytes that may be sent now: up to `window` chunks beyond what was acknowledged.
    func room(chunkSize: UInt32, window: Int) -> UInt64 {
        precondition(hashed <= sent, "hashed ≤ sent")
        let limit = acknowledged + UInt64(chunkSize) * UInt64(window)
        return min(recording.size, limit) - min(sent, min(recording.size, limit))
    }
}
