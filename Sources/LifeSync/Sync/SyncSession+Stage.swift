extension SyncSession {
    /// Where the session is, holding what it knows there: before the handshake it knows
    /// nothing of its peer; once open, everything about the peer lives in the `.open` case and
    /// goes with it when the session closes. (No "open without a peer", no delta sync left over
    /// from a closed session.)
    enum Stage {
        case awaitingHello
        case open(OpenSession)
        /// Ended; `last` keeps what the open session knew (who the peer was, what it held) for
        /// whoever asks afterwards — a node's dialler remembers the peer's vector.
        case closed(last: OpenSession?)

        var state: State {
            switch self {
            case .awaitingHello: return .awaitingHello
            case .open: return .open
            case .closed: return .closed
            }
        }

        var open: OpenSession? {
            if case .open(let session) = self { return session }
            return nil
        }

        /// The open session, or the one this closed session was.
        var last: OpenSession? {
            switch self {
            case .awaitingHello: return nil
            case .open(let session): return session
            case .closed(let last): return last
            }
        }
    }

    /// Ends the session; any transfer under way is let go.
    func enterClosed() {
        guard case .closed = stage else {
            if let id = stage.open?.incoming?.id { incomingTransfers.release(id) }
            stage = .closed(last: stage.open)
            return
        }
    }

    /// The open session's state, read and changed in place: nil unless the session is open, so
    /// a change made through it while closed does nothing (a session that closed stays closed).
    ///
    ///     open?.reportedSentAll = false        // only while open
    ///     let id = open!.delta.sent(…)          // where the caller knows it is open
    var open: OpenSession? { stage.open }
}

/// What a session knows from its handshake to its end: the peer, the delta sync with it, and
/// the recording transfers under way.
///
/// A class, changed where it lives: as a struct in the enum's payload, every `open?.x = y`
/// copied all of it out and back (each collection in it retained, and copied again when changed
/// while shared): a quarter of the 20-node simulation's time, 5% of a 40-node mesh's busiest
/// node's. A local `let session = open` therefore sees later changes; read what must stay as it
/// was into its own constant.
final class OpenSession {
    /// The peer's HELLO (its incarnation as its HISTORY last named it, PROTOCOL.md §7.2.3).
    var peer: Hello
    /// What the peer has, what is in flight, what its `through` may advance.
    var delta: DeltaSync
    /// Our incarnations, read again before each send (`pump`): what a watch may send, and the
    /// origins whose writes we seal ourselves.
    var ownOrigins: Set<String>
    /// The peer's incarnation is remembered only once the peer delivered something: a stranger
    /// that merely said hello leaves nothing behind.
    var peerOriginRecorded = false
    /// This peer's HELLO claim rotated our incarnation and its writes have not all arrived yet.
    var unbackedClaim = false
    /// Our incarnation when the peer's HELLO arrived, before any rotation (§7.2.3 step 2).
    var incarnationAtHello: String?
    /// Where the HISTORY exchange is (PROTOCOL.md §7.2.3): nothing is sent before it is done.
    var historyStep = HistoryStep.done
    /// The window still has room after the handshake's first batch: the next tick sends another.
    var windowUnfilled = true
    /// Whether "sent everything" was reported since the last change to send.
    var reportedSentAll = false
    /// A batch arrived since our last CAUGHT_UP: the next offer that finds nothing to send
    /// ends in one. Without a batch either way since the last, another would tell the peer
    /// nothing (PROTOCOL.md §7.5), and in a mesh each batch a node applies is offered to all
    /// its peers, most of which have it.
    var receivedSinceCaughtUp = false
    /// Damaged rows already reported in this session.
    var reportedDamaged = Set<String>()
    /// The recording being received, and the one being sent (one of each at a time). A transfer
    /// that ends, or that another takes the place of, lets go of its recording; so does the
    /// session's end (`enterClosed`).
    var incoming: IncomingTransfer? {
        didSet { if let old = oldValue?.id, old != incoming?.id { incomingTransfers.release(old) } }
    }
    private let incomingTransfers: IncomingTransfers
    var outgoing: OutgoingTransfer?
    /// Recordings whose transfer failed in this session, with when they may be offered again
    /// (`retryLater`), and how often each failed in a row.
    var failedRecordings: [String: Int64] = [:]
    var failureCounts: [String: Int] = [:]
    /// Recordings the peer said it holds already (a CONFIRM with no bytes of ours behind it): not
    /// offered again in this session, but not recorded as confirmed either — that takes bytes
    /// delivered (a claim costs nothing, even under another node's name).
    var claimedByPeer: Set<String> = []
    /// Recordings the peer said it lacks (WANT) that we hold: offered first, each once.
    var wanted: [Recording] = []
    /// Until when other origins' writes wait (the relay hold, `RelayHold`): a peer that just
    /// connected gets each origin's writes from that origin, if it is connected too, and tells
    /// us so (HOLDS) before we would send them. Nil once over.
    var relaysFrom: Int64?
    /// When we last told the peer what we hold (HOLDS), and when we owe it the next one.
    var holdsSentAt: Int64?
    var holdsDue: Int64?
    /// The nodes whose writes reach the peer from those nodes, as its last HOLDS said: their
    /// origins' writes are relayed to it only once settled (`relayLimit`).
    var peerDirect = Set<String>()
    /// Whether the peer's first HOLDS arrived: a peer that sets bit 7 is relayed nothing before
    /// (it says whose writes reach it directly as soon as its side of the handshake is done,
    /// which a busy peer may take longer to reach than the relay hold).
    var heardHolds = false
    /// A peer that set bit 7 and said nothing by the end of the hold is waited for until the
    /// hold settles (`RelayHold.settle`), then relayed to all the same: a buggy peer is not cut
    /// off for good.
    var holdsWaited = false
    /// When other nodes' writes could first go to the peer (`relaysAllowed`): relay turns count
    /// from then as well as from when we took the writes (`relayLimit`).
    var relaysStarted: Int64?
    /// When a turn we wait for in this session comes (`relayLimit`), if we wait for one.
    var turnDue: Int64?
    /// The origins the peer asks us to relay it (its last HOLDS's `relay`, when both set bit 8):
    /// those go at once, the rest only once settled (`relayLimit`). Nil while the peer does not
    /// choose its relays: then relays take turns.
    var peerAsks: Set<String>?
    /// What the peer said it holds (HELLO, then HOLDS, joined), our own origins included as it
    /// claims them: whom we ask to relay what (`RelayChoice`). A restored device asks the peer
    /// that claims more of its own history than it holds for it back.
    var peerClaims: VersionVector
    /// How far the peer's HISTORY digests showed it holds our own origins (`HistoryOutcome.agreed`).
    var agreed: [String: UInt64] = [:]
    /// Whether we named what we lack to the peer, and how many WANTs it sent us.
    var wantsSent = false
    var wantsReceived = 0

    init(peer: Hello, own: OwnHistory, incomingTransfers: IncomingTransfers) {
        self.peer = peer
        self.incomingTransfers = incomingTransfers
        delta = DeltaSync(peerVector: peer.vector, own: own)
        peerClaims = peer.vector
        ownOrigins = own.origins
    }
}
