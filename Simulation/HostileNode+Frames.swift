import LifeSync

/// Frames the hostile node builds by hand, well-formed or not.
extension HostileNode {
    // MARK: - Frames

    struct TableEntry {
        var origin: String
        var nodeID: String
        var role: Role?
    }

    struct RawChange {
        var kind: UInt8 = ChangeKind.entry.rawValue
        var deleted: Bool
        var id: String
        var origin: Int
        var sequence: UInt64
        var hlc: UInt64
        var vector: [(Int, UInt64)]
        var payload: [UInt8]

        init(own write: OwnWrite, origin: Int) {
            deleted = write.deleted
            id = write.id
            self.origin = origin
            sequence = write.sequence
            hlc = write.hlc
            vector = [(origin, write.sequence)]
            payload = write.payload
        }
    }

    /// `sealAs`: the node its seals claim to be made by (itself unless a forgery says otherwise).
    func batch(on link: Link, table: [TableEntry], changes: [RawChange], through: [(Int, UInt64)], sealAs: String? = nil) -> [UInt8] {
        var w = HostileWriter()
        w.u64(link.nextBatchID)
        link.nextBatchID += 1
        w.u16(UInt16(truncatingIfNeeded: table.count))
        for entry in table {
            w.string(entry.origin)
            w.string(entry.nodeID)
            w.u8(entry.nodeID.isEmpty ? 0 : entry.role?.wireCode ?? 0)
        }
        w.u32(UInt32(changes.count))
        for change in changes {
            w.u8(change.kind)
            w.u8(change.deleted ? 1 : 0)
            w.string(change.id)
            w.u16(UInt16(change.origin))
            w.u64(change.sequence)
            w.u64(change.hlc)
            // Index order is the table's; the decoder takes any order of distinct origins.
            var seen = Set<Int>()
            let vector = change.vector.filter { seen.insert($0.0).inserted }
            w.u16(UInt16(vector.count))
            for (index, sequence) in vector {
                w.u16(UInt16(index))
                w.u64(sequence)
            }
            w.blob(change.payload)
        }
        var seen = Set<Int>()
        let through = through.filter { seen.insert($0.0).inserted }
        w.u16(UInt16(truncatingIfNeeded: through.count))
        for (index, sequence) in through {
            w.u16(UInt16(index))
            w.u64(sequence)
        }
        writeSeals(over: changes, table: table, as: sealAs ?? nodeID, to: &w)
        return Self.frame(.batch, w.bytes)
    }

    /// Its own seals over every change (PROTOCOL.md §5.2.5), one per origin, made with its own
    /// key as itself, whatever origin the change claims: it has no other node's key. The hub
    /// keeps what is truly its own and refuses, as forged, writes it claims for other origins.
    func writeSeals(over changes: [RawChange], table: [TableEntry], as sealer: String, to w: inout HostileWriter) {
        var members: [Int: [Seal.Member]] = [:]
        for change in changes where table.indices.contains(change.origin) {
            var pairs: [String: UInt64] = [:]
            for (index, sequence) in change.vector where table.indices.contains(index) && pairs[table[index].origin] == nil {
                pairs[table[index].origin] = sequence
            }
            let stamp = VersionStamp(hlc: HLCTimestamp(rawValue: Int64(bitPattern: change.hlc)), origin: table[change.origin].origin,
                                     sequence: change.sequence, vector: VersionVector(pairs.map { ($0.key, $0.value) }), deleted: change.deleted)
            let digest = WriteDigest.of(kind: ChangeKind(rawValue: change.kind) ?? .entry, stamp: stamp, id: change.id, fields: .all,
                                        canonicalContent: change.payload[...])
            members[change.origin, default: []].append(Seal.Member(sequence: change.sequence, digest: digest))
        }
        guard !members.isEmpty else { return }
        w.u16(UInt16(members.count))
        for (index, list) in members.sorted(by: { $0.key < $1.key }) {
            var seen = Set<UInt64>()
            let ascending = list.sorted { $0.sequence < $1.sequence }.filter { seen.insert($0.sequence).inserted }
            let seal = try! Seal(origin: table[index].origin, nodeID: sealer, members: ascending, signer: signer)
            w.u16(UInt16(index))
            w.string(seal.nodeID)
            w.u16(UInt16(seal.publicKey.count))
            w.raw(seal.publicKey)
            w.u32(UInt32(seal.members.count))
            for member in seal.members {
                w.u64(member.sequence)
                w.raw(member.digest.bytes)
            }
            w.raw(seal.signature)
        }
    }

    func ack(id: UInt64, applied: UInt32 = 0) -> [UInt8] {
        var w = HostileWriter()
        w.u64(id)
        w.u32(applied)
        w.u32(0)
        return Self.frame(.ack, w.bytes)
    }

    func ping(_ nonce: UInt64) -> [UInt8] { Self.frame(.ping, HostileWriter.u64(nonce)) }

    func vectorFrame(_ type: MessageType, _ vector: [(String, UInt64)]) -> [UInt8] {
        var w = HostileWriter()
        w.vector(vector)
        return Self.frame(type, w.bytes)
    }

    func digest() -> SHA256.Digest { SHA256.Digest(bytes: (0..<32).map { _ in UInt8(truncatingIfNeeded: random.nextUInt64()) }) }

    static func frame(_ type: MessageType, _ payload: [UInt8]) -> [UInt8] { frame(rawType: type.rawValue, payload) }

    static func frame(rawType: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var w = HostileWriter()
        w.u32(UInt32(payload.count + 1))
        w.u8(rawType)
        w.raw(payload)
        return w.bytes
    }

    static func entries(_ vector: VersionVector) -> [(String, UInt64)] { vector.entries.map { ($0.origin, $0.sequence) } }

    func send(_ bytes: [UInt8], on link: Link, hubOnly: Bool = false, sampleable: Bool = true) {
        guard links[link.end] != nil, !bytes.isEmpty else { return }
        if sampleable && !(hubOnly && link.target != hub) { sample(bytes, hubOnly: hubOnly) }
        simulator.network.send(bytes, from: link.end)
    }

    func sample(_ bytes: [UInt8], hubOnly: Bool) {
        guard bytes.count <= 64 * 1024 else { return }
        if samples.count >= 24 { samples.remove(at: Int(random.next(below: UInt64(samples.count)))) }
        samples.append((bytes, hubOnly))
    }

    /// Counts the attack and notes it in the trace (a failure's excerpt shows what it did).
    func count(_ attack: Attack) {
        simulator.count(attack.rawValue)
        simulator.trace.record(simulator.now, attack.rawValue)
    }

    func may(_ attack: Attack) -> Bool { !excluded.contains(attack) }
}

/// Big-endian primitives, with no checks: the hostile node writes what it likes.
struct HostileWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes += [UInt8(v >> 8), UInt8(v & 0xFF)] }
    mutating func u32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }
    mutating func u64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(s))) } }
    mutating func raw(_ b: [UInt8]) { bytes += b }
    mutating func string(_ s: String) {
        u16(UInt16(truncatingIfNeeded: s.utf8.count))
        bytes += s.utf8
    }
    mutating func blob(_ b: [UInt8]) {
        u32(UInt32(b.count))
        bytes += b
    }
    mutating func vector(_ entries: [(String, UInt64)]) {
        u16(UInt16(truncatingIfNeeded: entries.count))
        for (origin, sequence) in entries {
            string(origin)
            u64(sequence)
        }
    }

    static func u64(_ v: UInt64) -> [UInt8] {
        var w = HostileWriter()
        w.u64(v)
        return w.bytes
    }
}
