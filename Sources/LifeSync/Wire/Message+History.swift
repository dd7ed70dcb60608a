extension Message {
    /// HISTORY (PROTOCOL.md §5.10): the sender's vector and incarnation, then a u16 count of origins, each with
    /// its name, the sender's `top` for it, a u16 count of probes and the probes (seq u64 and
    /// write digest), ascending by sequence; then a u16 count of repairs, each with its node,
    /// origin, fork, the incarnation it moved to, the base there, the node's key, a u32 count,
    /// the members and the node's signature.
    static func writeHistory(_ history: History, to w: inout ByteWriter) {
        writeVector(history.vector, to: &w)
        w.string(history.incarnation)
        w.u16(UInt16(clamping: history.origins.count))
        for origin in history.origins {
            w.string(origin.origin)
            w.u64(origin.top)
            w.u16(UInt16(clamping: origin.probes.count))
            Seal.write(origin.probes, to: &w)
        }
        w.u16(UInt16(clamping: history.repairs.count))
        for repair in history.repairs {
            w.string(repair.nodeID)
            w.string(repair.origin)
            w.u64(repair.fork)
            w.string(repair.movedTo)
            w.u64(repair.base)
            w.u16(UInt16(clamping: repair.publicKey.count))
            w.raw(repair.publicKey)
            w.u32(UInt32(clamping: repair.members.count))
            Seal.write(repair.members, to: &w)
            w.raw(repair.signature)
        }
        guard !history.forks.isEmpty else { return }
        w.u16(UInt16(clamping: history.forks.count))
        for fork in history.forks {
            w.string(fork.origin)
            w.u64(fork.agreed)
            w.u64(fork.sequence)
            w.digest(fork.digests.0)
            w.digest(fork.digests.1)
        }
    }

    /// Reads a HISTORY payload, checking every rule of §5.10: origins UUIDs strictly ascending,
    /// `top` a sequence, 1 … 256 probes per origin and 65 536 in all, each probe's seq within
    /// 1 … `top` and strictly ascending; then the repairs, each member above its fork,
    /// ascending, and every moved number within the sequence ceiling; then, if bytes are left,
    /// the known forks (1 … 4 096, origins strictly ascending, each `agreed` below its
    /// `sequence`, two different digests in byte order).
    static func readHistory(_ r: inout ByteReader) throws(WireError) -> History {
        let vector = try readVector(&r, "vector")
        let incarnation = try r.string("incarnation")
        try checkOrigin(incarnation, "incarnation")
        let count = try readOriginCount(&r, "history origin count", minimumItemSize: minimumHistoryOriginSize)
        var origins: [History.Origin] = []
        origins.reserveCapacity(count)
        var total = 0
        for n in 0..<count {
            let origin = try r.string("history origin")
            try checkOrigin(origin, "history origin")
            if let last = origins.last, !(last.origin < origin) { throw WireError(.malformed, "history origins not strictly ascending") }
            let top = try readSequence(&r, "history \(n): top")
            let probeCount = try r.count16("history \(n): probe count", minimumItemSize: 40)
            guard probeCount >= 1, probeCount <= Limits.maximumHistoryProbesPerOrigin else {
                throw WireError(.malformed, "history \(n): \(probeCount) probes outside 1…\(Limits.maximumHistoryProbesPerOrigin)")
            }
            total += probeCount
            guard total <= Limits.maximumHistoryProbes else {
                throw WireError(.malformed, "the history names more than \(Limits.maximumHistoryProbes) probes")
            }
            let probes = try readMembers(&r, count: probeCount, "history \(n): probe", within: 1...top)
            origins.append(History.Origin(origin: origin, top: top, probes: probes))
        }
        let repairCount = try readOriginCount(&r, "repair count", minimumItemSize: minimumRepairSize)
        var repairs: [History.Repair] = []
        repairs.reserveCapacity(repairCount)
        var members = 0
        for n in 0..<repairCount {
            let nodeID = try r.string("repair node_id")
            guard Identifier.role(of: nodeID) != nil else { throw WireError(.malformed, "repair \(n): node_id \"\(nodeID.prefix(80))\" is not {role}_{uuid-v4}") }
            let origin = try r.string("repair origin")
            try checkOrigin(origin, "repair origin")
            let fork = try r.u64("repair fork")
            guard fork < Limits.maximumSequence else { throw WireError(.malformed, "repair \(n): fork \(fork) at or above the sequence ceiling") }
            let movedTo = try r.string("repair moved_to")
            try checkOrigin(movedTo, "repair moved_to")
            guard movedTo != origin else { throw WireError(.malformed, "repair \(n): moved to the origin that forked") }
            let base = try r.u64("repair base")
            guard base < Limits.maximumSequence else { throw WireError(.malformed, "repair \(n): base \(base) at or above the sequence ceiling") }
            let keyLength = Int(try r.u16("repair key length"))
            guard keyLength == Recording.originKeyLength else {
                throw WireError(.malformed, "repair \(n): a key of \(keyLength) bytes (a P-256 key is \(Recording.originKeyLength))")
            }
            let key = try r.raw(keyLength, "repair key")
            let count = try r.count32("repair \(n): member count", minimumItemSize: 40)
            members += count
            guard count >= 1, members <= Limits.maximumHistoryProbes else {
                throw WireError(.malformed, "repair \(n): \(count) members (1 or more, at most \(Limits.maximumHistoryProbes) in all)")
            }
            let list = try readMembers(&r, count: count, "repair \(n): member", within: (fork + 1)...(Limits.maximumSequence - base + fork))
            let signature = try r.raw(Recording.signatureLength, "repair signature")
            repairs.append(History.Repair(nodeID: nodeID, origin: origin, fork: fork, movedTo: movedTo, base: base, members: list,
                                          publicKey: key, signature: signature))
        }
        let forks = r.remaining > 0 ? try readForks(&r) : []
        return History(vector: vector, incarnation: incarnation, origins: origins, repairs: repairs, forks: forks)
    }

    private static func readForks(_ r: inout ByteReader) throws(WireError) -> [History.Fork] {
        let count = try readOriginCount(&r, "fork count", minimumItemSize: minimumForkSize)
        guard count >= 1 else { throw WireError(.malformed, "a fork list of none (left out when there is no fork)") }
        var forks: [History.Fork] = []
        forks.reserveCapacity(count)
        for n in 0..<count {
            let origin = try r.string("fork origin")
            try checkOrigin(origin, "fork origin")
            if let last = forks.last, !(last.origin < origin) { throw WireError(.malformed, "fork origins not strictly ascending") }
            let agreed = try r.u64("fork \(n): agreed")
            let sequence = try readSequence(&r, "fork \(n): seq")
            guard agreed < sequence else { throw WireError(.malformed, "fork \(n): agreed \(agreed) not below its seq \(sequence)") }
            let first = try r.raw(32, "fork \(n): first digest"), second = try r.raw(32, "fork \(n): second digest")
            guard first.lexicographicallyPrecedes(second) else {
                throw WireError(.malformed, "fork \(n): digests equal or out of byte order")
            }
            forks.append(History.Fork(origin: origin, agreed: agreed, sequence: sequence,
                                      digests: (SHA256.Digest(bytes: first), SHA256.Digest(bytes: second))))
        }
        return forks
    }

    /// A known fork at its smallest: an empty name, `agreed`, `seq` and two digests.
    static let minimumForkSize = 2 + 8 + 8 + 32 + 32

    /// `count` members (seq u64 and digest), strictly ascending, each seq within `range`.
    private static func readMembers(_ r: inout ByteReader, count: Int, _ what: String, within range: ClosedRange<UInt64>) throws(WireError) -> [Seal.Member] {
        var members: [Seal.Member] = []
        members.reserveCapacity(count)
        for _ in 0..<count {
            let sequence = try readSequence(&r, "\(what) seq")
            guard range.contains(sequence) else { throw WireError(.malformed, "\(what) seq \(sequence) outside \(range.lowerBound)…\(range.upperBound)") }
            if let last = members.last, last.sequence >= sequence {
                throw WireError(.malformed, "\(what)s not strictly ascending (\(sequence) after \(last.sequence))")
            }
            members.append(Seal.Member(sequence: sequence, digest: try r.digest("\(what) digest")))
        }
        return members
    }

    /// A repair at its smallest: three empty names, `fork`, `base`, the key, the count, one
    /// member and the signature.
    static let minimumRepairSize = 2 + 2 + 8 + 2 + 8 + 2 + Recording.originKeyLength + 4 + 40 + Recording.signatureLength

    /// An origin of a HISTORY at its smallest: an empty name, `top`, the count and one probe.
    static let minimumHistoryOriginSize = 2 + 8 + 2 + 40
}
