/// What a node knows about relaying other nodes' writes (PROTOCOL.md §7.4, "Relay hold"),
/// shared by its sessions: when writes taken from peers may be relayed, and which nodes' writes
/// reach this node from those nodes themselves.
///
/// In a household where every device is paired with every other, each write reaches each peer
/// straight from its origin. Relays that forwarded it at once as well made every node receive
/// every write from many of its peers: 20 nodes received up to 7.6 times what they lacked. So:
/// - a node tells each peer which nodes it is connected or connecting to (`direct`, sent in
///   HOLDS), and a relay sends it none of their writes until they settle (`settle`: the node
///   may have lost them, or hold others under the same numbers);
/// - writes taken from a peer are relayed only once held for `hold` ms, and to a peer only
///   `hold` ms after its handshake (`SyncSession.relaysAllowed`), so the peers can say what they
///   got meanwhile (HOLDS again), and a relay sends each only what it still lacks.
/// A node's own writes are never held.
///
/// The node notes its replica vector each time its replica takes writes from a peer; a noted
/// vector is released `hold` ms later (`release`, from the node's tick). The sessions send other
/// origins' writes up to what was released (`cap`). Nothing is held for longer than `hold` after
/// the last vector noted: with none pending, nothing is held at all.
///
/// ```swift
/// let hold = RelayHold(hold: 1_000, holding: replica.replicaVector())
/// hold.noted(try replica.replicaVector(), now: now)   // a batch from a peer was committed
/// if hold.release(now: now) { /* offer every session what it may now send */ }
/// ```
package final class RelayHold {
    /// Milliseconds a write taken from a peer waits before it is relayed; 0 holds nothing.
    package let hold: Int64
    /// What may be relayed to any peer: the vectors noted at least `hold` ago, joined.
    private var released: VersionVector
    /// What may be relayed even to a peer whose own node holds it (`settle` ago): its node
    /// should have sent it by then, and if it has not (it lost those writes, or holds others
    /// under the same numbers) a relay must.
    private var settled: VersionVector
    /// Vectors noted within the last `settle` ms, oldest first; the first `releasedCount` of
    /// them are in `released` already.
    private var pending: [(at: Int64, vector: VersionVector)] = []
    private var releasedCount = 0
    /// How long after it was noted a vector counts as settled: long enough for a busy node's
    /// own peers to have sent it their writes (20 nodes starting at once took 6 s here; with a
    /// hold of 0.5 s settling in 2.5 s, they received 396,003 changes twice).
    package var settle: Int64 { hold * 30 }
    /// The nodes connected to us, or being dialled: their writes reach us from them, and HOLDS
    /// tells every other peer so (`NodeCore.directPeersChanged`).
    package var direct = Set<String>()
    /// Vectors kept pending at most: a node that takes a batch every millisecond keeps the newest
    /// of two neighbours (released a little later, never sooner).
    static let maximumPending = 64

    package init(hold: Int64, holding: VersionVector = VersionVector()) {
        self.hold = hold
        released = holding
        settled = holding
    }

    /// The replica's vector after it took writes from a peer at `now`.
    package func noted(_ vector: VersionVector, now: Int64) {
        guard hold > 0 else { return }
        if let last = pending.last, last.at == now, releasedCount < pending.count {
            pending[pending.count - 1].vector = vector
        } else {
            if pending.count == RelayHold.maximumPending {
                pending.remove(at: 0)
                releasedCount = max(0, releasedCount - 1)
            }
            pending.append((now, vector))
        }
    }

    /// Releases the vectors held long enough; true if any was (every session may now send more).
    package func release(now: Int64) -> Bool {
        var any = false
        while releasedCount < pending.count, pending[releasedCount].at + hold <= now {
            released = released.joined(with: pending[releasedCount].vector)
            releasedCount += 1
            any = true
        }
        while let first = pending.first, first.at + settle <= now, releasedCount > 0 {
            settled = settled.joined(with: first.vector)
            pending.removeFirst()
            releasedCount -= 1
            any = true
        }
        return any
    }

    /// When the next noted vector is due for release or to settle.
    package var nextRelease: Int64? {
        let next = releasedCount < pending.count ? pending[releasedCount].at + hold : nil
        return [next, pending.first.map { $0.at + settle }].compactMap { $0 }.min()
    }

    /// How far other origins' writes may be sent, or nil when nothing is held.
    package var cap: VersionVector? { releasedCount < pending.count ? released : nil }

    /// How far writes of a peer's direct node may be sent to it, or nil when nothing is held.
    package var settledCap: VersionVector? { pending.isEmpty ? nil : settled }
}
