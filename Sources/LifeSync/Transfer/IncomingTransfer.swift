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

    /// Whether `chunk` starts where the verified bytes end, holds something, and stays within
    /// the offered size (checked without overflow: `received` ≤ size ≤ 4 GiB by the offer rules).
    func continues(with chunk: Chunk) -> Bool {
        precondition(received <= offer.size, "received ≤ size")
        return chunk.offset == received && !chunk.data.isEmpty && UInt64(chunk.data.count) <= offer.size - received
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
