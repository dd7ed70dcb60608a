import LifeSync

/// The hostile node's timed attacks, each counted under its fault name.
extension HostileNode {
    // MARK: - Timed attacks

    /// The timed attacks, one row each (`WeightedTable`); a row whose attack is left out
    /// (`--hostile-skip`) or needs the hub mutates a frame instead.
    enum TimedAttack: Sendable {
        case ownWrites, forgedThrough, duplicateSequence, squat, pastCeiling, tooManyOrigins, lyingVector, ackNeverSent, offer,
             pingFlood, outOfState, forgeHonestWrite, wantFlood, mutatedFrame
    }

    static let timedAttacks = WeightedTable<TimedAttack>([
        (.ownWrites, 22), (.forgedThrough, 8), (.duplicateSequence, 10), (.squat, 4), (.pastCeiling, 6), (.tooManyOrigins, 4),
        (.lyingVector, 8), (.ackNeverSent, 4), (.offer, 8), (.pingFlood, 4), (.outOfState, 4), (.forgeHonestWrite, 8),
        (.wantFlood, 4), (.mutatedFrame, 20),
    ])

    func attack(over link: Link) {
        let toHub = link.target == hub
        switch Self.timedAttacks.pick(random) {
        case .ownWrites where toHub && may(.ownWrites): sendOwnWrites(on: link, extra: Int(random.next(below: 4)))
        case .forgedThrough where toHub && may(.forgedThrough): forgedBatch(on: link)
        case .duplicateSequence where toHub && (may(.duplicateSequence) || may(.twinOfTombstone)): duplicateSequence(on: link)
        case .squat where may(.squatOrigin): squat(on: link)
        case .pastCeiling where may(.hlcPastMaximum) || may(.sequencePastCeiling): pastCeilingBatch(on: link)
        case .tooManyOrigins where may(.tooManyOrigins): tooManyOrigins(on: link)
        case .lyingVector where may(.lyingVector) || may(.vectorPastCeiling): lyingVectorMessage(on: link)
        case .ackNeverSent where may(.ackNeverSent):
            count(.ackNeverSent)
            send(ack(id: [0, 1_000 + random.next(below: 1_000), UInt64.max, link.nextBatchID + 7][Int(random.next(below: 4))]), on: link)
        case .offer: offer(on: link)
        case .pingFlood where may(.pingFlood):
            count(.pingFlood)
            var burst: [UInt8] = []
            for i in 0..<(50 + Int(random.next(below: 150))) { burst += ping(UInt64(i)) }
            send(burst, on: link)
        case .forgeHonestWrite where toHub && may(.forgeHonestWrite): forgeHonestWrite(on: link)
        case .wantFlood where may(.wantFlood):
            // WANTs past the session's allowance, naming recordings it learnt of and made-up ones:
            // at most bytes it may receive anyway, then `limit_exceeded`.
            count(.wantFlood)
            let known = recordings.keys.sorted()
            var burst: [UInt8] = []
            for _ in 0..<(1 + Int(random.next(below: 20))) {
                let ids = (0..<(1 + Int(random.next(below: 50)))).map { _ in
                    known.isEmpty || random.next(below: 2) == 0 ? Identifier.make(role: .phone, random: random) : known[Int(random.next(below: UInt64(known.count)))]
                }
                burst += Message.want(recordingIDs: ids).encoded()
            }
            send(burst, on: link)
        case .outOfState where may(.outOfState):
            count(.outOfState)
            send(hello(link, vector: [], clock: currentHLC()), on: link)
        default:
            if may(.mutatedFrame) { mutate(on: link) }
        }
    }

    /// New writes under its own origin (a new entry, an update or a delete of one of its own),
    /// then every own write the hub lacks, in one BATCH.
    func sendOwnWrites(on link: Link, extra: Int, atMaximum: Bool = false) {
        count(.ownWrites)
        let stampAtMaximum = (atMaximum || random.next(below: 8) == 0) && may(.hlcAtMaximum)
        if stampAtMaximum { count(.hlcAtMaximum) }
        for _ in 0...extra { write(atMaximum: stampAtMaximum) }
        let pending = unsent(above: link.ownSent, limit: 40)
        guard let last = pending.last else { return }
        var table = [TableEntry(origin: incarnation, nodeID: nodeID, role: .phone)]
        var through: [(Int, UInt64)] = [(0, last.sequence)]
        var changes = pending.map { RawChange(own: $0, origin: 0) }
        if random.next(below: 4) == 0 && may(.forgedVV) {
            // Forged version vectors: its writes claim to have seen honest writes they never saw.
            count(.forgedVV)
            let honest = honestOrigins()
            for origin in honest.prefix(3) {
                table.append(TableEntry(origin: origin.origin, nodeID: "", role: nil))
                let claim = [origin.sequence + 1 + random.next(below: 1_000), Message.Limits.maximumSequence, origin.sequence][Int(random.next(below: 3))]
                for i in changes.indices { changes[i].vector.append((table.count - 1, claim)) }
                if random.next(below: 2) == 0 { through.append((table.count - 1, claim)) }
            }
        }
        send(batch(on: link, table: table, changes: changes, through: through), on: link, hubOnly: true, sampleable: table.count == 1)
        link.ownSent = last.sequence
    }

    /// A batch whose `through` claims honest origins far beyond what it delivers.
    func forgedBatch(on link: Link) {
        count(.forgedThrough)
        if random.next(below: 2) == 0 { write(atMaximum: false) }
        var table = [TableEntry(origin: incarnation, nodeID: nodeID, role: .phone)]
        let pending = unsent(above: link.ownSent, limit: 20)
        var through: [(Int, UInt64)] = pending.last.map { [(0, $0.sequence)] } ?? []
        for origin in honestOrigins() {
            table.append(TableEntry(origin: origin.origin, nodeID: "", role: nil))
            let claim = [origin.sequence + 1 + random.next(below: 50), Message.Limits.maximumSequence, 1 + random.next(below: 5)][Int(random.next(below: 3))]
            through.append((table.count - 1, claim))
        }
        // Never damaged later: its table names honest origins, a flipped index would forge.
        send(batch(on: link, table: table, changes: pending.map { RawChange(own: $0, origin: 0) }, through: through), on: link, sampleable: false)
        if let last = pending.last { link.ownSent = last.sequence }
    }

    /// The same (origin, seq) as an earlier own write, with other content (or another entry).
    func duplicateSequence(on link: Link) {
        let originals = log.filter { $0.deleted ? may(.twinOfTombstone) : may(.duplicateSequence) }
        guard !originals.isEmpty else { return may(.ownWrites) ? sendOwnWrites(on: link, extra: 0) : () }
        // Half the time a delete's twin, when it has one to twin: deletes are a few of its writes.
        let deletes = originals.filter(\.deleted)
        let pool = !deletes.isEmpty && random.next(below: 2) == 0 ? deletes : originals
        let original = pool[Int(random.next(below: UInt64(pool.count)))]
        count(original.deleted ? .twinOfTombstone : .duplicateSequence)
        let sameEntry = random.next(below: 2) == 0
        let id = sameEntry ? original.id : "evil_" + Identifier.uuidV4(random: random)
        createdRecords.insert(id)
        let hlc = original.hlc == UInt64(HLCTimestamp.maximum.rawValue) ? original.hlc : original.hlc + UInt64(random.next(below: 3))
        let forged = OwnWrite(id: id, sequence: original.sequence, hlc: hlc, deleted: false,
                              payload: entryJSON(id: id, text: "forged twin of #\(original.sequence)"))
        let table = [TableEntry(origin: incarnation, nodeID: nodeID, role: .phone)]
        let through = max(original.sequence, link.ownSent)
        send(batch(on: link, table: table, changes: [RawChange(own: forged, origin: 0)], through: [(0, through)]), on: link, hubOnly: true, sampleable: true)
    }

    /// An origin table naming honest origins (or its own) as some other node's.
    func squat(on link: Link) {
        count(.squatOrigin)
        var table: [TableEntry] = []
        for (owner, info) in learned.sorted(by: { $0.key < $1.key }) {
            let claimant = random.next(below: 2) == 0 ? nodeID : learned.keys.sorted().first { $0 != owner } ?? nodeID
            table.append(TableEntry(origin: info.incarnation, nodeID: claimant, role: Identifier.role(of: claimant)))
        }
        table.append(TableEntry(origin: incarnation, nodeID: learned.keys.sorted().first ?? nodeID,
                                role: Identifier.role(of: learned.keys.sorted().first ?? nodeID)))
        table.sort { $0.origin < $1.origin }
        send(batch(on: link, table: table, changes: [], through: []), on: link)
    }

    /// Numbers past the wire's ceilings: an HLC above `HLCTimestamp.maximum`, a sequence above
    /// `Message.Limits.maximumSequence`, a sequence 0.
    func pastCeilingBatch(on link: Link) {
        let id = "evil_" + Identifier.uuidV4(random: random)
        createdRecords.insert(id)
        var sequence = UInt64(log.count + 1)
        var hlc = currentHLC()
        if random.next(below: 2) == 0 && may(.hlcPastMaximum) || !may(.sequencePastCeiling) {
            count(.hlcPastMaximum)
            hlc = UInt64(HLCTimestamp.maximum.rawValue) + 1 + random.next(below: 1 << 20) * (random.next(below: 2) == 0 ? 1 : 1 << 40)
        } else {
            count(.sequencePastCeiling)
            sequence = [Message.Limits.maximumSequence + 1, UInt64.max, 0, Message.Limits.maximumSequence + 1 + random.next(below: 1 << 30)][Int(random.next(below: 4))]
        }
        let write = OwnWrite(id: id, sequence: sequence, hlc: hlc, deleted: false,
                             payload: entryJSON(id: id, text: "beyond"))
        let table = [TableEntry(origin: incarnation, nodeID: nodeID, role: .phone)]
        // A damaged copy may turn valid: an own write, so for the hub only.
        send(batch(on: link, table: table, changes: [RawChange(own: write, origin: 0)], through: [(0, sequence)]), on: link, hubOnly: true)
    }

    /// More origins than a vector or table may hold, or a table that fills the receiver's
    /// origins up to its bound.
    func tooManyOrigins(on link: Link) {
        count(.tooManyOrigins)
        let n = [Message.Limits.maximumOrigins + 1, Message.Limits.maximumOrigins, 600 + Int(random.next(below: 600))][Int(random.next(below: 3))]
        var origins = (0..<n).map { _ in Identifier.uuidV4(random: random) }
        origins.sort()
        if random.next(below: 3) == 0 {
            send(vectorFrame(random.next(below: 2) == 0 ? .syncRequest : .caughtUp, origins.map { ($0, 1 + random.next(below: 100)) }), on: link)
            return
        }
        let owner = Identifier.make(role: .mac, random: random)
        let table = origins.map { TableEntry(origin: $0, nodeID: random.next(below: 2) == 0 ? owner : "", role: .mac) }
        let through = random.next(below: 2) == 0 ? (0..<min(n, 64)).map { ($0, UInt64(1 + random.next(below: 9))) } : []
        send(batch(on: link, table: table, changes: [], through: through), on: link)
    }

    /// SYNC_REQUEST or CAUGHT_UP claiming more than the honest node ever wrote.
    func lyingVectorMessage(on link: Link) {
        let base = link.peer.map { Self.entries($0.vector) } ?? []
        let pastCeiling = random.next(below: 4) == 0 && may(.vectorPastCeiling) || !may(.lyingVector)
        count(pastCeiling ? .vectorPastCeiling : .lyingVector)
        // Claims above the target's own writes here only make it send them all again.
        let vector = pastCeiling ? self.pastCeiling(base) : lie(about: link.target, base: base, own: true, others: true)
        send(vectorFrame(random.next(below: 3) == 0 ? .caughtUp : .syncRequest, vector), on: link)
    }

    /// An OFFER of a recording nobody attached, or of a known one with the wrong hash or size,
    /// or with its true metadata (then chunks out of order or garbage, in `handle`).
    func offer(on link: Link) {
        let known = recordings.keys.sorted()
        let roll = random.next(below: 3)
        if roll == 0 || known.isEmpty {
            guard may(.offerUnknown) else { return }
            count(.offerUnknown)
            let id = Identifier.make(role: .watch, random: random)
            send(Message.offer(Offer(recordingID: id, fileName: id + ".m4a", mediaType: "audio/mp4", size: 1 + random.next(below: 100_000),
                                     chunkSize: 16_384, sha256: digest())).encoded(), on: link)
            return
        }
        let recording = recordings[known[Int(random.next(below: UInt64(known.count)))]]!
        if roll == 1 {
            guard may(.offerWrongHash) else { return }
            count(.offerWrongHash)
            let size = random.next(below: 2) == 0 ? recording.size : recording.size + 1
            send(Message.offer(Offer(recordingID: recording.id, fileName: recording.fileName, mediaType: recording.mediaType, size: size,
                                     chunkSize: 16_384, sha256: digest())).encoded(), on: link)
            return
        }
        let sha = recording.sha256
        guard may(.chunkOutOfOrder), link.claimsOwnIdentity || may(.vouchAsOther) else { return }
        if !link.claimsOwnIdentity { count(.vouchAsOther) }
        link.offering = recording
        send(Message.offer(Offer(recordingID: recording.id, fileName: recording.fileName, mediaType: recording.mediaType, size: recording.size,
                                 chunkSize: 16_384, sha256: sha)).encoded(), on: link)
        if random.next(below: 2) == 0 {
            // Chunks right behind the OFFER, not waiting for the ACCEPT: past the start, or none
            // of the file's bytes (ignored if the receiver already holds it and confirms).
            count(.chunkOutOfOrder)
            let offset = random.next(below: 2) == 0 ? 16_384 * (1 + random.next(below: 4)) : 0
            let data = (0..<(1 + Int(random.next(below: 2_000)))).map { _ in UInt8(truncatingIfNeeded: random.nextUInt64()) }
            send(Message.chunk(Chunk(recordingID: recording.id, offset: offset, sha256: digest(), data: data)).encoded(), on: link)
        }
    }

    /// A frame it made or received, damaged: bits flipped, cut short, spliced with another,
    /// a new length prefix or type byte.
    func mutate(on link: Link) {
        // An OFFER or CONFIRM replayed under another node's identity would be that node's word.
        let vouches: Set<UInt8> = [MessageType.offer.rawValue, MessageType.confirm.rawValue]
        let usable = samples.filter { sample in
            (!sample.hubOnly || link.target == hub)
                && (link.claimsOwnIdentity || may(.vouchAsOther) || sample.bytes.count < 5 || !vouches.contains(sample.bytes[4]))
        }
        guard !usable.isEmpty else { return }
        count(.mutatedFrame)
        var bytes = usable[Int(random.next(below: UInt64(usable.count)))].bytes
        switch random.next(below: 6) {
        case 0:
            for _ in 0..<(1 + Int(random.next(below: 4))) {
                bytes[Int(random.next(below: UInt64(bytes.count)))] ^= UInt8(1) << UInt8(random.next(below: 8))
            }
        case 1:
            bytes = Array(bytes.prefix(Int(random.next(below: UInt64(bytes.count)))))
        case 2:
            let other = usable[Int(random.next(below: UInt64(usable.count)))].bytes
            bytes = Array(bytes.prefix(Int(random.next(below: UInt64(bytes.count))))) + other.suffix(Int(random.next(below: UInt64(other.count) + 1)))
        case 3:
            let length = [0, 1, UInt32(bytes.count), UInt32(bytes.count + 1 + Int(random.next(below: 64))), UInt32(Framing.maximumFrameLength + 1),
                          UInt32.max, UInt32(random.next(below: 1 << 24))][Int(random.next(below: 7))]
            for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: length >> (24 - 8 * UInt32(i))) }
        case 4:
            if bytes.count > 4 { bytes[4] = UInt8(truncatingIfNeeded: random.nextUInt64()) }
        default:
            let other = usable[Int(random.next(below: UInt64(usable.count)))].bytes
            bytes += other
            bytes.remove(at: Int(random.next(below: UInt64(bytes.count))))
        }
        send(bytes, on: link, sampleable: false)
    }
}
