/// What a node can do and wants (the HELLO's capability bits, PROTOCOL.md §5.1).
package struct Capabilities: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The node wants entries from the peer (full replicas; a watch only when configured).
    package static let receivesEntries = Capabilities(rawValue: 1 << 0)
    /// The node speaks the recording-transfer messages (0x10–0x14).
    package static let recordings = Capabilities(rawValue: 1 << 1)
    /// The node wants recordings from the peer.
    package static let receivesRecordings = Capabilities(rawValue: 1 << 2)
    /// The node seals the writes it sends and requires seals on the writes it receives
    /// (PROTOCOL.md §5.2.5). Every node of this revision sets it and talks only to nodes that do.
    package static let seals = Capabilities(rawValue: 1 << 3)
    /// The node compares its peer's origins' histories at the handshake (PROTOCOL.md §7.2.3): it
    /// sends and expects a HISTORY after the HELLOs, when both set this bit.
    package static let histories = Capabilities(rawValue: 1 << 4)
    /// The node understands WANT (PROTOCOL.md §5.9.9), and, when it receives recordings, names
    /// in one the recordings whose bytes it lacks.
    package static let wants = Capabilities(rawValue: 1 << 5)
    /// The node compares what both hold of third nodes' origins at the handshake and carries the
    /// forks it learns of to their owners (PROTOCOL.md §7.2.4): a HISTORY to a peer that sets it
    /// names every origin both hold, and may end with a list of known forks.
    package static let forks = Capabilities(rawValue: 1 << 6)
    /// The node tells this peer what it holds (HOLDS, PROTOCOL.md §5.11) when it takes writes
    /// from another peer, so that a relay holding the same writes does not send them again.
    package static let holds = Capabilities(rawValue: 1 << 7)
    /// The node chooses its relays (PROTOCOL.md §5.11 `relay`, §7.4): each HOLDS it sends a peer
    /// that sets this bit names the origins it asks that peer, and no other, to relay it; and to
    /// a peer that sets it, it relays only what that peer asks of it sooner than the settle.
    package static let relays = Capabilities(rawValue: 1 << 8)
    /// Every bit this revision defines (PROTOCOL.md §5.1); the others are reserved.
    package static let defined: Capabilities = [.receivesEntries, .recordings, .receivesRecordings, .seals, .histories, .wants, .forks, .holds, .relays]
}

/// An origin named in a batch, with the node it belongs to when the sender knows it.
package struct OriginInfo: Equatable, Sendable {
    package var origin: String
    package var nodeID: String?
    package var role: Role?

    package init(origin: String, nodeID: String?, role: Role?) {
        self.origin = origin
        self.nodeID = nodeID
        self.role = role
    }
}

public struct Hello: Equatable, Sendable {
    public static let magic: [UInt8] = Array("LSYN".utf8)
    public var minimumVersion: UInt16
    public var maximumVersion: UInt16
    public var nodeID: String
    public var role: Role
    public var incarnation: String
    package var capabilities: Capabilities
    /// The sender's HLC when it sent the HELLO: lets the peer log clock skew.
    package var clock: HLCTimestamp
    /// The sender's replica vector: the peer sends what is above it.
    package var vector: VersionVector
    /// The name its user gave the sending device ("Kitchen iPad"), if any: shown by its peers.
    public var name: String?

    package init(minimumVersion: UInt16 = ProtocolVersion.minimum, maximumVersion: UInt16 = ProtocolVersion.maximum, nodeID: String, role: Role, incarnation: String,
                capabilities: Capabilities, clock: HLCTimestamp, vector: VersionVector, name: String? = nil) {
        self.name = name
        self.minimumVersion = minimumVersion
        self.maximumVersion = maximumVersion
        self.nodeID = nodeID
        self.role = role
        self.incarnation = incarnation
        self.capabilities = capabilities
        self.clock = clock
        self.vector = vector
    }
}

package struct Batch: Equatable, Sendable {
    /// Numbered by the sender from 1 within a connection; the ACK names it.
    package var id: UInt64
    /// Node IDs for the origins the batch names (may be a subset; unknown ones are omitted).
    package var origins: [OriginInfo]
    package var changes: [Change]
    /// Per origin, how far this batch covers the sender's log (see `Replica.apply`).
    package var through: VersionVector
    /// The origins' signatures over the changes (PROTOCOL.md §5.2.5): each change is a member of
    /// a seal of its origin.
    package var seals: [Seal]
    /// Each change's digest over its content as received (a decoded batch; empty otherwise).
    /// A sender that spelled its JSON canonically, as every reference node does, is checked with
    /// these alone; not part of equality.
    package var receivedDigests: [SHA256.Digest] = []

    package init(id: UInt64, origins: [OriginInfo], changes: [Change], through: VersionVector, seals: [Seal] = []) {
        self.id = id
        self.origins = origins
        self.changes = changes
        self.through = through
        self.seals = seals
    }

    package static func == (a: Batch, b: Batch) -> Bool {
        a.id == b.id && a.origins == b.origins && a.changes == b.changes && a.through == b.through && a.seals == b.seals
    }
}

package struct Ack: Equatable, Sendable {
    package var batchID: UInt64
    package var applied: UInt32
    package var conflicts: UInt32

    package init(batchID: UInt64, applied: UInt32, conflicts: UInt32) {
        self.batchID = batchID
        self.applied = applied
        self.conflicts = conflicts
    }
}

/// Recording messages (PROTOCOL.md §5.9–5.13).
package struct Offer: Equatable, Sendable {
    package var recordingID: String
    package var fileName: String
    package var mediaType: String
    package var size: UInt64
    package var chunkSize: UInt32
    package var sha256: SHA256.Digest

    package init(recordingID: String, fileName: String, mediaType: String, size: UInt64, chunkSize: UInt32, sha256: SHA256.Digest) {
        self.recordingID = recordingID
        self.fileName = fileName
        self.mediaType = mediaType
        self.size = size
        self.chunkSize = chunkSize
        self.sha256 = sha256
    }
}

package struct Chunk: Equatable, Sendable {
    package var recordingID: String
    package var offset: UInt64
    package var sha256: SHA256.Digest
    /// A decoded chunk's data is a slice of the frame it arrived in, not a copy.
    package var data: ArraySlice<UInt8>

    package init(recordingID: String, offset: UInt64, sha256: SHA256.Digest, data: ArraySlice<UInt8>) {
        self.recordingID = recordingID
        self.offset = offset
        self.sha256 = sha256
        self.data = data
    }

    package init(recordingID: String, offset: UInt64, sha256: SHA256.Digest, data: [UInt8]) {
        self.init(recordingID: recordingID, offset: offset, sha256: sha256, data: data[...])
    }
}

/// What the sender knows of its peer's history (PROTOCOL.md §5.10): for each origin bound to the
/// peer's node, how far the sender holds it and the write digests it knows there, so the peer can
/// tell whether its replica forked from that history (a device restored whole).
public struct History: Equatable, Sendable {
    public struct Origin: Equatable, Sendable {
        public var origin: String
        /// The sender's replica vector entry for the origin.
        public var top: UInt64
        /// Write digests the sender knows of the origin, ascending by sequence, each ≤ `top`.
        package var probes: [Seal.Member]

        package init(origin: String, top: UInt64, probes: [Seal.Member]) {
            self.origin = origin
            self.top = top
            self.probes = probes
        }
    }

    /// A repair a node made of one of its own origins, signed by it, for replicas that may hold
    /// the writes it gave up: write (`origin`, s) for s above `fork` became (`movedTo`, `base` +
    /// s − `fork`). Relays forward it as they received it (PROTOCOL.md §5.10, §7.2.3).
    public struct Repair: Equatable, Sendable {
        /// The node that owns `origin` and `movedTo` (both bound to it) and signed the repair.
        public var nodeID: String
        public var origin: String
        public var fork: UInt64
        public var movedTo: String
        public var base: UInt64
        /// The digests of the writes given up, ascending, each above `fork`.
        package var members: [Seal.Member]
        /// The node's key (91-byte P-256 SPKI) and its signature over `message`.
        public var publicKey: [UInt8]
        public var signature: [UInt8]

        package init(nodeID: String, origin: String, fork: UInt64, movedTo: String, base: UInt64, members: [Seal.Member],
                    publicKey: [UInt8], signature: [UInt8]) {
            self.nodeID = nodeID
            self.origin = origin
            self.fork = fork
            self.movedTo = movedTo
            self.base = base
            self.members = members
            self.publicKey = publicKey
            self.signature = signature
        }

        /// The signed bytes: `lifesync-repair-v1` and a zero byte, then `node_id`, `origin`,
        /// `fork`, `moved_to`, `base`, the member count (u32) and the members.
        public var message: [UInt8] {
            var w = ByteWriter(capacity: 128 + members.count * 40)
            w.raw(Array("lifesync-repair-v1".utf8) + [0])
            w.string(nodeID)
            w.string(origin)
            w.u64(fork)
            w.string(movedTo)
            w.u64(base)
            w.u32(UInt32(clamping: members.count))
            Seal.write(members, to: &w)
            return w.bytes
        }
    }

    /// Two writes a node's origin holds at one number, as two replicas told each other (PROTOCOL.md
    /// §7.2.4): their histories agree up to `agreed` and differ at `sequence`. Carried to the
    /// origin's owner, who alone can repair it.
    public struct Fork: Equatable, Sendable {
        public var origin: String
        public var agreed: UInt64
        public var sequence: UInt64
        /// The two digests at `sequence`, the smaller (by bytes) first.
        package var digests: (SHA256.Digest, SHA256.Digest)

        package init(origin: String, agreed: UInt64, sequence: UInt64, digests: (SHA256.Digest, SHA256.Digest)) {
            self.origin = origin
            self.agreed = agreed
            self.sequence = sequence
            self.digests = digests.0.bytes.lexicographicallyPrecedes(digests.1.bytes) ? digests : (digests.1, digests.0)
        }

        public static func == (a: Fork, b: Fork) -> Bool {
            a.origin == b.origin && a.agreed == b.agreed && a.sequence == b.sequence && a.digests.0 == b.digests.0 && a.digests.1 == b.digests.1
        }

        /// Whether `digest` is one of the two.
        package func names(_ digest: SHA256.Digest) -> Bool { digest == digests.0 || digest == digests.1 }
    }

    /// The sender's replica vector as it stands when it sends the HISTORY (after its own repair).
    package var vector: VersionVector
    /// The sender's current incarnation then (a repair or a rollback may have started one since
    /// its HELLO).
    public var incarnation: String
    public var origins: [Origin]
    public var repairs: [Repair]
    /// Forks of third nodes' origins the sender knows of (only to a peer that sets bit 6).
    public var forks: [Fork]

    package init(vector: VersionVector, incarnation: String, origins: [Origin] = [], repairs: [Repair] = [], forks: [Fork] = []) {
        self.vector = vector
        self.incarnation = incarnation
        self.origins = origins
        self.repairs = repairs
        self.forks = forks
    }
}

/// One protocol message.
package enum Message: Equatable, Sendable {
    case hello(Hello)
    case batch(Batch)
    case ack(Ack)
    /// The sender has sent everything the peer lacked, up to `vector`.
    case caughtUp(vector: VersionVector)
    case ping(nonce: UInt64)
    case pong(nonce: UInt64)
    case error(code: UInt16, message: String)
    /// "Here is my vector; send me what I lack": resynchronises a session (fallback timer).
    case syncRequest(vector: VersionVector)
    /// "This is what I hold now, these nodes' writes reach me from those nodes, and these origins
    /// I ask you to relay me" (§5.11): the peer joins `vector` into what it knows we have, relays
    /// us no write of an origin of the `direct` nodes while we name them, and, when `relay` is
    /// there (both set bit 8), relays us sooner than the settle only the origins in it; no answer.
    case holds(vector: VersionVector, direct: [String], relay: [String]? = nil)
    case offer(Offer)
    /// The receiver takes the offered recording from `offset` (0, or the end of its verified chunks).
    case accept(recordingID: String, offset: UInt64)
    case chunk(Chunk)
    /// The receiver verified the whole file: `sha256` is what it computed.
    case confirm(recordingID: String, sha256: SHA256.Digest)
    case failure(recordingID: String, code: UInt16, message: String)
    /// The receiver lacks these recordings' bytes (PROTOCOL.md §5.9.9): a sender that holds one
    /// offers it, whatever it recorded of an earlier delivery.
    case want(recordingIDs: [String])
    /// The sender's vector and what it knows of the peer's origins' histories (§5.10).
    case history(History)

    package var type: MessageType {
        switch self {
        case .hello: return .hello
        case .batch: return .batch
        case .ack: return .ack
        case .caughtUp: return .caughtUp
        case .ping: return .ping
        case .pong: return .pong
        case .error: return .error
        case .syncRequest: return .syncRequest
        case .holds: return .holds
        case .offer: return .offer
        case .accept: return .accept
        case .chunk: return .chunk
        case .confirm: return .confirm
        case .failure: return .failure
        case .want: return .want
        case .history: return .history
        }
    }
}
