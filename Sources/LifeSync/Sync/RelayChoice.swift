/// Which peer this node asks to relay it each origin's writes (PROTOCOL.md §5.11 `relay`, §7.4
/// "Relay choice"): one peer per origin, so that a write reaches the node from one relay at most.
///
/// Turns taken by the relays themselves (`RelayHold.holdFor`) are timed guesses: a relay whose
/// loop runs seconds behind, or that hears the node's HOLDS late, sends from a view that old, and
/// 40 nodes starting at once still received up to 1.36 times what they lacked. Here the receiver
/// decides, from what each peer says it holds (HOLDS, HELLO), and tells each peer, in HOLDS,
/// the origins it is asked for; every other relay holds them until they settle.
///
/// A choice sticks while its peer stays connected and still holds writes of the origin we lack,
/// or no other peer does: moving it while the chosen peer may still have writes of it on the way
/// would have two relays send them. When the chosen peer has nothing more and another has, the
/// choice moves: nothing of the first can still be in flight beyond what we hold (what a peer
/// sends is what it holds). A choice ends when its peer's session closes. A chosen peer that
/// holds writes we lack and sends us none for `stall` ms (a buggy peer, or one that claims what it
/// lacks) is passed over for that origin while its session lasts: waiting out the settle instead
/// would have every other relay send those writes at once.
///
/// ```swift
/// var choice = RelayChoice()
/// let changed = choice.update(holding: replica.replicaVector(), candidates: peers, scanning: [peer], me: me, now: now,
///                             fromItsNode: { origin in direct.contains(owner[origin]) })
/// for peer in changed { /* send that peer HOLDS with choice.origins(askedOf: peer) */ }
/// ```
package struct RelayChoice {
    /// A connected peer that may be asked: one that chooses its own relays too (bit 8), takes
    /// entries and relays them (not a watch).
    package struct Candidate {
        package var nodeID: String
        package var holds: VersionVector

        package init(nodeID: String, holds: VersionVector) {
            self.nodeID = nodeID
            self.holds = holds
        }
    }

    /// A choice: the peer asked, and since when it owes us writes of the origin without our
    /// having taken any (nil: it holds nothing we lack).
    struct Choice: Equatable {
        var peer: String
        var owingSince: Int64?
        /// Our vector entry for the origin when last looked at: taking writes is progress.
        var held: UInt64
    }

    /// Origin → the peer asked to relay it.
    private(set) var chosen: [String: Choice] = [:]
    /// Origin → the peers passed over for it (`stall`), while their sessions last.
    private(set) var passedOver: [String: Set<String>] = [:]
    /// How long a chosen peer may owe us writes of an origin without our taking one, in ms.
    package let stall: Int64
    /// Origin → the node it belongs to, as far as the replica knows (`learnOwners`).
    private(set) var owners: [String: String] = [:]
    /// The candidates at the last full choice: a node that ticks often chooses again in full only
    /// when they changed.
    package var lastPeers: [String] = []

    package init(stall: Int64 = 5_000) {
        self.stall = stall
    }

    /// When a chosen peer that owes us writes has owed them for `stall`, if one does: then
    /// `update` must run (`NodeCore.nextDeadline`), even if nothing else happens.
    package var nextStall: Int64? {
        chosen.values.compactMap(\.owingSince).min().map { $0 + stall }
    }

    /// Chooses again after what we hold, or what the peers hold, changed. `scanning`: the peers
    /// whose every origin is looked at for one we lack and have asked nobody for (nil: all of
    /// them, after peers came or went; a peer's HOLDS names only itself; a batch we took, none:
    /// we only hold more). `also`: origins to look at besides (those of a node we no longer hear
    /// from directly). Origins whose chosen peer has nothing more are looked at in every peer.
    /// Returns the peers whose list of origins changed, which must be told (HOLDS).
    /// `fromItsNode`: whether an origin's writes reach us from its own node (we are connected to
    /// it): no relay is asked for those (every relay holds them until they settle anyway).
    package mutating func update(holding mine: VersionVector, candidates: [Candidate], scanning: Set<String>?, also: [String] = [],
                                 me: String, now: Int64, fromItsNode: (String) -> Bool) -> Set<String> {
        var index: [String: Int] = [:]
        for (i, candidate) in candidates.enumerated() { index[candidate.nodeID] = i }
        if !passedOver.isEmpty {
            passedOver = passedOver.compactMapValues { peers in
                let left = peers.filter { index[$0] != nil }
                return left.isEmpty ? nil : left
            }
        }
        var next: [String: Choice] = [:]
        var open = also.filter { chosen[$0] == nil && !fromItsNode($0) }  // origins to choose for
        for (origin, choice) in chosen where !fromItsNode(origin) {  // in any order: `open` is sorted below
            guard let i = index[choice.peer] else { open.append(origin); continue }  // its session closed
            var kept = choice
            if candidates[i].holds[origin] <= mine[origin] {
                kept.owingSince = nil
                open.append(origin)  // nothing more there: another may have
            } else if kept.owingSince == nil || mine[origin] > kept.held {
                kept.owingSince = now  // it owes us writes from now, or it sent some
            } else if let since = kept.owingSince, now - since >= stall {
                passedOver[origin, default: []].insert(choice.peer)
                open.append(origin)
            }
            kept.held = mine[origin]
            next[origin] = kept
        }
        for candidate in candidates where scanning?.contains(candidate.nodeID) ?? true {
            for entry in candidate.holds.entries where entry.sequence > mine[entry.origin] && next[entry.origin] == nil
                && !fromItsNode(entry.origin) {
                open.append(entry.origin)
            }
        }
        for origin in Set(open).sorted() {
            let passed = passedOver[origin] ?? []
            var best: (rank: UInt64, nodeID: String)?
            for candidate in candidates where candidate.holds[origin] > mine[origin] && !passed.contains(candidate.nodeID) {
                let rank = RelayChoice.rank(origin, candidate.nodeID, me)
                if best.map({ (rank, candidate.nodeID) < ($0.rank, $0.nodeID) }) ?? true { best = (rank, candidate.nodeID) }
            }
            // None but one passed over: it stays asked (the others send once the writes settle).
            if let best, best.nodeID != next[origin]?.peer { next[origin] = Choice(peer: best.nodeID, owingSince: now, held: mine[origin]) }
            else if next[origin]?.owingSince.map({ now - $0 >= stall }) == true { next[origin]?.owingSince = now }
        }
        var changed = Set<String>()
        for (origin, before) in chosen where next[origin]?.peer != before.peer && index[before.peer] != nil { changed.insert(before.peer) }
        for (origin, after) in next where chosen[origin]?.peer != after.peer { changed.insert(after.peer) }
        chosen = next
        return changed
    }

    /// Whether an origin some candidate holds past `mine` has an owner we have not read yet.
    package func lacksOwner(holding mine: VersionVector, candidates: [Candidate], scanning: Set<String>?) -> Bool {
        candidates.contains { candidate in
            (scanning?.contains(candidate.nodeID) ?? true)
                && candidate.holds.entries.contains { $0.sequence > mine[$0.origin] && owners[$0.origin] == nil }
        }
    }

    /// The origins known to belong to one of `nodes`.
    package func origins(ownedBy nodes: Set<String>) -> [String] {
        owners.filter { nodes.contains($0.value) }.keys.sorted()
    }

    /// The owners the replica knows (an origin's node never changes).
    package mutating func learnOwners(_ known: [(origin: String, nodeID: String?)]) {
        for (origin, nodeID) in known { if let nodeID { owners[origin] = nodeID } }
    }

    /// The origins `peer` is asked to relay us, ascending (HOLDS's `relay`), 4 096 at most.
    package func origins(askedOf peer: String) -> [String] {
        Array(chosen.filter { $0.value.peer == peer }.keys.sorted().prefix(Message.Limits.maximumOrigins))
    }

    /// A peer's rank for an origin, lower first: each receiver spreads its origins over its peers
    /// its own way.
    package static func rank(_ origin: String, _ peer: String, _ me: String) -> UInt64 {
        fnv1a(me, after: fnv1a(peer, after: fnv1a(origin)))
    }
}

/// FNV-1a (64 bits) of `text` and a zero byte, going on from `hash`: a rank that every node
/// computes alike (relay turns, relay choice).
func fnv1a(_ text: String, after hash: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
    var hash = hash
    for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
    return hash &* 0x0000_0100_0000_01b3
}
