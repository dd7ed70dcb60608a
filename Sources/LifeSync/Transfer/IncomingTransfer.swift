/// A recording arriving: the offer, how much of it is verified, and the running hash — each
/// chunk is checked against the digest so far and the whole-file SHA-256 falls out of the same
/// pass, so every byte is hashed once and the file never read twice (only a resumed transfer
/// re-reads the prefix it already holds, once).
struct IncomingTransfer {
    let offer: Offer
    var received: UInt64
    /// Where this session started: bytes kept from an earlier attempt, not yet proven by a chunk.
    let resumedFrom: UInt64
    let hasher = SHA256()
    var chunksSinceProgress = 0

    var id: String { offer.recordingID }
    var isComplete: Bool { received == offer.size }
}

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

    var id: String { recording.id }

    /// Whether this session sent bytes up to the end and the receiver acknowledged them all: the
    /// only proof a CONFIRM can carry (an empty recording needs none).
    var deliveredWhole: Bool {
        recording.size == 0 || (accepted && startedAt < recording.size && acknowledged == recording.size)
    }
}

/// The recordings a node is receiving right now, shared by its sessions: two peers offering the
/// same recording at once must not write the same temporary file (one would truncate under the
/// other, and the other's running hash would still match the chunks it saw).
public final class IncomingTransfers {
    private(set) var active = Set<String>()

    public init() {}

    /// Claims `id` for one session; false when another session is receiving it.
    func claim(_ id: String) -> Bool { active.insert(id).inserted }

    func release(_ id: String) { active.remove(id) }
}
