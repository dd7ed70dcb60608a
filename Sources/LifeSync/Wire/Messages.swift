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
    case offer(Offer)
    /// The receiver takes the offered recording from `offset` (0, or the end of its verified chunks).
    case accept(recordingID: String, offset: UInt64)
    case chunk(Chunk)
    /// The receiver verified the whole file: `sha256` is what it computed.
    case confirm(recordingID: String, sha256: SHA256.Digest)
    case failure(recordingID: String, code: UInt16, message: String)

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
        case .offer: return .offer
        case .accept: return .accept
        case .chunk: return .chunk
        case .confirm: return .confirm
        case .failure: return .failure
        }
    }
}
