/// The delta-sync half of a session (PROTOCOL.md §7.4) as a value: what the peer is known to
/// hold, what is in flight, and how far the peer's `through` claims are backed by what it
/// actually delivered. The session reads and writes the replica; this decides.
///
/// ```swift
/// var delta = DeltaSync(peerVector: hello.vector, own: OwnHistory(origins: mine, counts: vector))
/// let id = delta.sent(changes: batch.changes, through: batch.through)   // BATCH id
/// delta.acknowledged(id)                                               // peerHas ⊔= through
/// ```
///
/// Two rules keep a peer's word from moving our data (DESIGN.md, "Trust"):
/// - A peer cannot hold more of our own origins than we wrote. A claim above our own count is a
///   lie, a poisoned relay, or a restore on our side; in every case we send it all again rather
///   than skip it (`sanitized`), but for what the peer proved it holds: a HISTORY whose digests
///   of our writes match ours up to a number (a restored phone would otherwise send each peer
///   its whole journal again). Otherwise a forged vector would make a watch keep its offline
///   writes to itself while reporting "synced".
/// - Our replica vector advances only as far as delivered data justifies (`admit`): the
///   sequences of changes delivered, or of rows the replica stores. A bare `through`, or a
///   version vector claiming a third party's writes, would otherwise make a relay skip an
///   origin's writes for ever.
struct DeltaSync {
    struct InFlight {
        let id: UInt64
        let through: VersionVector
        let changes: Int
    }

    /// What the peer is known to hold: its HELLO (or SYNC_REQUEST) vector, joined with what it
    /// acknowledged and what it sent us.
    private(set) var peerHas: VersionVector
    /// `peerHas` joined with the batches in flight: the next batch starts above it.
    private(set) var sentUpTo: VersionVector
    private(set) var inFlight: [InFlight] = []
    private(set) var nextBatchID: UInt64 = 1
    /// The peer's `through` claims, joined over the session.
    private(set) var claimed = VersionVector()
    /// Per origin, the highest sequence the peer's deliveries prove.
    private(set) var justified = VersionVector()
    /// What of `claimed` was passed on to the replica.
    private(set) var admitted = VersionVector()
    /// Origins whose stored rows were consulted once already (see `admit`).
    private var checkedLocally = Set<String>()

    init(peerVector: VersionVector, own: OwnHistory) {
        peerHas = DeltaSync.sanitized(peerVector, own: own)
        sentUpTo = peerHas
    }

    /// `claim` with every origin of ours it overstates set back to 0 (send it all again), or to
    /// as far as the peer's digests showed it holds our history (`agreed`, a HISTORY compared).
    static func sanitized(_ claim: VersionVector, own: OwnHistory, agreed: [String: UInt64] = [:]) -> VersionVector {
        var result = claim
        for origin in own.origins where claim[origin] > own.counts[origin] { result[origin] = min(agreed[origin] ?? 0, own.counts[origin]) }
        return result
    }

    /// The window has room.
    func hasRoom(window: Int) -> Bool { inFlight.count < window }

    /// A batch left: returns its ID.
    mutating func sent(changes: [EncodedChange], through: VersionVector) -> UInt64 {
        // Batches ascend per origin, start above what was sent, and lie within their `through`.
        var last: [String: UInt64] = [:]
        for change in changes {
            let origin = change.stamp.origin
            precondition(change.stamp.sequence > max(sentUpTo[origin], last[origin] ?? 0), "a batch starts above what was sent, ascending")
            precondition(change.stamp.sequence <= through[origin], "a batch lies within its through")
            last[origin] = change.stamp.sequence
        }
        let id = nextBatchID
        nextBatchID += 1
        sentUpTo = sentUpTo.joined(with: through)
        inFlight.append(InFlight(id: id, through: through, changes: changes.count))
        precondition(sentUpTo.dominates(peerHas), "the peer has no more than was sent")
        return id
    }

    /// An ACK: it must name the oldest batch in flight (an older session's ACK is ignored).
    mutating func acknowledged(_ id: UInt64) -> InFlight? {
        guard let first = inFlight.first, first.id == id else { return nil }
        inFlight.removeFirst()
        peerHas = peerHas.joined(with: first.through)
        precondition(sentUpTo.dominates(peerHas), "the peer has no more than was sent")
        return first
    }

    /// SYNC_REQUEST or HISTORY: the peer's word on what it holds; what is in flight is still on
    /// its way. `agreed`: how far a HISTORY's digests showed it holds our own origins.
    mutating func resync(peerVector: VersionVector, own: OwnHistory, agreed: [String: UInt64] = [:]) {
        peerHas = DeltaSync.sanitized(peerVector, own: own, agreed: agreed)
        sentUpTo = inFlight.reduce(peerHas) { $0.joined(with: $1.through) }
    }

    /// Takes in a received batch's deliveries and claim, and returns the part of the claim the
    /// replica may advance its vector to (PROTOCOL.md §5.2.4, "Admission"). `current` is the
    /// replica's vector; `ownOrigins` are ours (only changes delivered in this session justify
    /// them); `stored(o)` is the highest sequence among the replica's rows of `o`, asked at most
    /// once per origin per session and only when deliveries fall short.
    mutating func admit(_ batch: Batch, current: VersionVector, ownOrigins: Set<String>,
                        stored: (String) throws -> UInt64) rethrows -> VersionVector {
        // Only a change's own (origin, seq) proves anything. A version vector naming another
        // origin is its writer's word: a stranger's write "having seen" a watch's origin up to 5
        // would otherwise make a relay skip writes 1–5 it never received.
        for change in batch.changes where change.stamp.sequence > justified[change.stamp.origin] {
            justified[change.stamp.origin] = change.stamp.sequence
        }
        claimed = claimed.joined(with: batch.through)
        var admit = VersionVector()
        for entry in claimed.entries where entry.sequence > admitted[entry.origin] {
            let origin = entry.origin
            if entry.sequence <= current[origin] {
                admitted[origin] = entry.sequence
                continue
            }
            if justified[origin] < entry.sequence, !ownOrigins.contains(origin), checkedLocally.insert(origin).inserted {
                let proven = try stored(origin)
                if proven > justified[origin] { justified[origin] = proven }
            }
            let granted = min(entry.sequence, justified[origin])
            if granted > admitted[origin] {
                admit[origin] = granted
                admitted[origin] = granted
            }
        }
        precondition(claimed.dominates(admit), "admitted no more than claimed")
        return admit
    }

    /// The peer holds `vector`: the `through` of a batch it sent us, once committed (never echoed
    /// back), or its HOLDS. Joined in, never lowering what we know it has: a batch in flight
    /// that its vector predates is still on its way.
    mutating func peerHolds(_ vector: VersionVector, own: OwnHistory) {
        let claim = DeltaSync.sanitized(vector, own: own)
        peerHas = peerHas.joined(with: claim)
        sentUpTo = sentUpTo.joined(with: claim)
    }
}

/// The origins this node wrote under (current and retired incarnations) and how far it wrote in
/// each: the one thing about which no peer knows better.
struct OwnHistory {
    var origins: Set<String>
    var counts: VersionVector
}
