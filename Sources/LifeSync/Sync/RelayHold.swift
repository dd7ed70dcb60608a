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
///   got meanwhile (HOLDS again), and a relay sends each only what it still lacks;
/// - when several of a peer's direct nodes could relay it a write of a node it is not connected
///   to (the mesh still forming, or the peer not paired with that node), the peer asks one of
///   them (`RelayChoice`, HOLDS's `relay`), which sends at once, and the others hold the writes
///   until they settle. Toward a peer of the revision before (no bit 8) they take turns: each
///   ranks itself among them by a hash of (origin, peer, node) and waits `hold` ms more for
///   each rank before it (`holdFor`), counted from when it took the writes and from when it
///   could first relay to that peer (`SyncSession.relayLimit`), so the first sends, the peer
///   says it got the writes, and the others find nothing left to send. 40 nodes starting at
///   once received up to 8.3 times what they lacked without the turns, 2.1 times with them.
/// A node's own writes are never held.
///
/// The node notes its replica vector each time its replica takes writes from a peer; a noted
/// vector may be relayed once it is as old as the hold for an origin and a peer (`cap`). The node
/// ticks the hold (`release`) whenever a noted vector may have come of age: then every session
/// may send more. Nothing is held for longer than `settle` after the last vector noted: with
/// none pending, nothing is held at all.
///
/// ```swift
/// let hold = RelayHold(hold: 1_000, holding: replica.replicaVector())
/// hold.noted(try replica.replicaVector(), now: now)   // a batch from a peer was committed
/// if hold.release(now: now) { /* offer every session what it may now send */ }
/// let bound = hold.cap(heldFor: hold.holdFor(origin, to: peer, relays: peerDirect, me: nodeID), now: now)
/// ```
package final class RelayHold {
    /// Milliseconds a write taken from a peer waits before it is relayed; 0 holds nothing.
    package let hold: Int64
    /// What may be relayed even to a peer whose own node holds it (`settle` ago): its node
    /// should have sent it by then, and if it has not (it lost those writes, or holds others
    /// under the same numbers) a relay must.
    private var settled: VersionVector
    /// Vectors noted within the last `settle` ms, oldest first, each joined with all noted
    /// before it (so a cap is one of them, found without joining), and those noted within a
    /// tenth of a hold after the first of a group joined into one, timed by the last of them.
    private var pending: [(opened: Int64, at: Int64, vector: VersionVector)] = []
    /// When `release` last said the sessions may send more.
    private var lastRelease = Int64.min
    /// When writes a session holds back for its turn come of age (`wake`), if any does.
    private var turnDue: Int64?
    /// How long after it was noted a vector counts as settled: long enough for a busy node's
    /// own peers to have sent it their writes (20 nodes starting at once took 6 s here; with a
    /// hold of 0.5 s settling in 2.5 s, they received 396,003 changes twice).
    package var settle: Int64 { hold * RelayHold.settleHolds }
    /// `settle` in holds: the most turns a relay waits.
    static let settleHolds: Int64 = 30
    /// The nodes connected to us, or being dialled: their writes reach us from them, and HOLDS
    /// tells every other peer so (`NodeCore.directPeersChanged`).
    package var direct = Set<String>()
    /// The peer this node asks to relay it each origin (HOLDS's `relay`, to peers that set bit 8).
    package var choice = RelayChoice()
    /// Vectors kept pending at most: past it the oldest goes, and its writes are released with
    /// the next one's (a little later, never sooner).
    static let maximumPending = 64

    package init(hold: Int64, holding: VersionVector = VersionVector()) {
        self.hold = hold
        settled = holding
    }

    /// The replica's vector after it took writes from a peer at `now`.
    package func noted(_ vector: VersionVector, now: Int64) {
        guard hold > 0 else { return }
        let joined = (pending.last?.vector ?? settled).joined(with: vector)
        if let last = pending.last, now < last.opened + hold / 10 {
            pending[pending.count - 1] = (last.opened, max(last.at, now), joined)
        } else {
            if pending.count == RelayHold.maximumPending { pending.remove(at: 0) }
            pending.append((now, now, joined))
        }
    }

    /// Settles what is due; true if a noted vector settled, came of age for the hold, or for a
    /// turn a session waits for (`wake`), since the last time it said so: every session may
    /// now send more.
    package func release(now: Int64) -> Bool {
        var settledAny = false
        while let first = pending.first, first.at + settle <= now {
            settled = first.vector
            pending.removeFirst()
            settledAny = true
        }
        guard settledAny || (nextRelease.map { $0 <= now } ?? false) else { return false }
        lastRelease = now
        if let due = turnDue, due <= now { turnDue = nil }
        return true
    }

    /// When a noted vector next comes of age for the hold, for a turn a session waits for, or
    /// settles; at least a tenth of the hold after the last release (turns need no sharper timing).
    package var nextRelease: Int64? {
        let held = pending.first { lastRelease == .min || $0.at + hold > lastRelease }.map { $0.at + hold }
        var earliest = held
        if let due = turnDue { earliest = min(earliest ?? due, due) }
        if let settled = pending.first.map({ $0.at + settle }) { earliest = min(earliest ?? settled, settled) }
        guard let next = earliest else { return nil }
        return lastRelease == .min ? next : max(next, lastRelease + hold / 10)
    }

    /// A session holds writes back for its turn, `delay` ms: release when the next noted vector
    /// comes of age for it. Turns wake the node only while some session waits for one.
    package func wake(heldFor delay: Int64, now: Int64) {
        guard let due = pending.first(where: { $0.at + delay > now }).map({ $0.at + delay }) else { return }
        turnDue = min(turnDue ?? due, due)
    }

    /// How far other origins' writes held `delay` ms may be sent at `now` (the vectors noted at
    /// least that long ago), or nil when nothing is held that long.
    package func cap(heldFor delay: Int64, now: Int64) -> VersionVector? {
        guard let last = pending.last, last.at + delay > now else { return nil }
        return pending.last(where: { $0.at + delay <= now })?.vector ?? settled
    }

    /// The newest vector noted, joined with all before it, while any is pending.
    package var latest: VersionVector? { pending.last?.vector }

    /// How long writes of `origin` wait before they go to `peer`, which hears from `relays`
    /// directly (the `direct` of its HOLDS, which leaves out us): `hold` for the first in turn,
    /// `hold` more for each before us, at most `settle`. All of them rank the same way, from a
    /// hash of (origin, peer, node), so each peer of a node has its own first relay per origin.
    package func holdFor(_ origin: String, to peer: String, relays: Set<String>, me: String) -> Int64 {
        let pair = fnv1a(peer, after: fnv1a(origin))
        func rank(_ node: String) -> UInt64 { fnv1a(node, after: pair) }
        let mine = rank(me)
        // Counted only as far as settling: the peer's list is its to make as long as it likes.
        var before: Int64 = 0
        for node in relays where before + 1 < RelayHold.settleHolds && node != me && node != peer && (rank(node), node) < (mine, me) {
            before += 1
        }
        return hold * (1 + before)
    }
}
