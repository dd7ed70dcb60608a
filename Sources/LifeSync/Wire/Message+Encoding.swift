extension Role {
    /// The role's code on the wire (PROTOCOL.md §2): 1 watch, 2 phone, 3 mac; 0 means unknown.
    public var wireCode: UInt8 {
        switch self {
        case .watch: return 1
        case .phone: return 2
        case .mac: return 3
        }
    }

    public init?(wireCode: UInt8) {
        switch wireCode {
        case 1: self = .watch
        case 2: self = .phone
        case 3: self = .mac
        default: return nil
        }
    }
}

extension Message {
    /// The whole frame for this message: length, type, payload.
    package func encoded() -> [UInt8] {
        // The header is written in place and its length patched afterwards: a 1 MiB CHUNK is
        // copied into its frame once, not twice.
        var w = ByteWriter(capacity: 64 + (chunkDataCount ?? 0))
        w.u32(0)
        w.u8(type.rawValue)
        writePayload(to: &w)
        return w.finishFrame()
    }

    private var chunkDataCount: Int? {
        if case .chunk(let chunk) = self { return chunk.data.count }
        return nil
    }

    /// The payload, without the length and type.
    package func payload() -> [UInt8] {
        var w = ByteWriter()
        writePayload(to: &w)
        return w.bytes
    }

    private func writePayload(to w: inout ByteWriter) {
        switch self {
        case .hello(let hello):
            w.raw(Hello.magic)
            w.u16(hello.minimumVersion)
            w.u16(hello.maximumVersion)
            w.string(hello.nodeID)
            w.u8(hello.role.wireCode)
            w.string(hello.incarnation)
            w.u32(hello.capabilities.rawValue)
            w.u64(UInt64(bitPattern: hello.clock.rawValue))
            Message.writeVector(hello.vector, to: &w)
            if let name = hello.name { w.string(name) }
        case .batch(let batch):
            Message.writeBatch(id: batch.id, origins: batch.origins, changes: batch.changes.map(\.encoded), through: batch.through,
                               seals: batch.seals, to: &w)
        case .ack(let ack):
            w.u64(ack.batchID)
            w.u32(ack.applied)
            w.u32(ack.conflicts)
        case .holds(let vector, let direct, let relay):
            Message.writeVector(vector, to: &w)
            w.u16(UInt16(direct.count))
            for origin in direct { w.string(origin) }
            if let relay {
                w.u16(UInt16(relay.count))
                for origin in relay { w.string(origin) }
            }
        case .caughtUp(let vector), .syncRequest(let vector):
            Message.writeVector(vector, to: &w)
        case .ping(let nonce), .pong(let nonce):
            w.u64(nonce)
        case .error(let code, let message):
            w.u16(code)
            w.string(Message.truncated(message))
        case .offer(let offer):
            w.string(offer.recordingID)
            w.string(offer.fileName)
            w.string(offer.mediaType)
            w.u64(offer.size)
            w.u32(offer.chunkSize)
            w.digest(offer.sha256)
        case .accept(let id, let offset):
            w.string(id)
            w.u64(offset)
        case .chunk(let chunk):
            w.string(chunk.recordingID)
            w.u64(chunk.offset)
            w.digest(chunk.sha256)
            w.blob(chunk.data)
        case .confirm(let id, let sha256):
            w.string(id)
            w.digest(sha256)
        case .failure(let id, let code, let message):
            w.string(id)
            w.u16(code)
            w.string(Message.truncated(message))
        case .history(let history):
            Message.writeHistory(history, to: &w)
        case .want(let ids):
            w.u16(UInt16(clamping: ids.count))
            for id in ids { w.string(id) }
        }
    }

    /// Error texts are capped at 1,024 bytes, cut at a character boundary.
    static func truncated(_ text: String) -> String {
        var result = Substring(text)
        while result.utf8.count > 1024 { result = result.dropLast() }
        return String(result)
    }

    static func writeVector(_ vector: VersionVector, to w: inout ByteWriter) {
        w.u16(UInt16(vector.entries.count))
        for entry in vector.entries {
            w.string(entry.origin)
            w.u64(entry.sequence)
        }
    }

    /// A whole BATCH frame from changes already encoded (the session's sending path).
    package static func encodedBatch(id: UInt64, origins: [OriginInfo], changes: [EncodedChange], through: VersionVector,
                                    seals: [Seal] = []) -> [UInt8] {
        var w = ByteWriter(capacity: changes.reduce(64) { $0 + $1.payload.count + 96 } + seals.reduce(0) { $0 + 200 + $1.members.count * 40 })
        w.u32(0)
        w.u8(MessageType.batch.rawValue)
        writeBatch(id: id, origins: origins, changes: changes, through: through, seals: seals, to: &w)
        return w.finishFrame()
    }

    static func writeBatch(id: UInt64, origins: [OriginInfo], changes: [EncodedChange], through: VersionVector, seals: [Seal],
                           to w: inout ByteWriter) {
        // The origin table: every origin the batch names, ascending, each once.
        // Nearly every change names the same origin as the one before: comparing with it is
        // cheaper than hashing a 36-byte name twice per change.
        var names = Set<String>()
        var lastNamed: String?
        func name(_ origin: String) {
            guard origin != lastNamed else { return }
            names.insert(origin)
            lastNamed = origin
        }
        for change in changes {
            name(change.stamp.origin)
            for entry in change.stamp.vector.entries { name(entry.origin) }
        }
        for entry in through.entries { name(entry.origin) }
        for seal in seals { name(seal.origin) }
        let table = names.sorted()
        var positions: [String: UInt16] = [:]
        for (i, name) in table.enumerated() { positions[name] = UInt16(i) }
        var lastLookedUp: (name: String, index: UInt16)?
        func index(_ origin: String) -> UInt16 {
            if let lastLookedUp, lastLookedUp.name == origin { return lastLookedUp.index }
            let found = positions[origin]!
            lastLookedUp = (origin, found)
            return found
        }
        let known = Dictionary(origins.map { ($0.origin, $0) }, uniquingKeysWith: { a, _ in a })

        w.u64(id)
        w.u16(UInt16(table.count))
        for name in table {
            w.string(name)
            w.string(known[name]?.nodeID ?? "")
            w.u8(known[name]?.role?.wireCode ?? 0)
        }
        w.u32(UInt32(changes.count))
        for change in changes {
            w.u8(change.kind.rawValue)
            change.fields.writeFlags(deleted: change.stamp.deleted, to: &w)
            w.string(change.id)
            w.u16(index(change.stamp.origin))
            w.u64(change.stamp.sequence)
            w.u64(UInt64(bitPattern: change.stamp.hlc.rawValue))
            w.u16(UInt16(change.stamp.vector.entries.count))
            for entry in change.stamp.vector.entries {
                w.u16(index(entry.origin))
                w.u64(entry.sequence)
            }
            w.blob(change.payload)
        }
        w.u16(UInt16(through.entries.count))
        for entry in through.entries {
            w.u16(index(entry.origin))
            w.u64(entry.sequence)
        }
        // The seal section (PROTOCOL.md §5.2.5), left out when there is none: a batch without
        // seals has the bytes it had before seals existed.
        guard !seals.isEmpty else { return }
        w.u16(UInt16(seals.count))
        for seal in seals {
            w.u16(index(seal.origin))
            w.string(seal.nodeID)
            w.u16(UInt16(seal.publicKey.count))
            w.raw(seal.publicKey)
            w.u32(UInt32(seal.members.count))
            Seal.write(seal.members, to: &w)
            w.raw(seal.signature)
        }
    }
}
