import LifeSync

/// The hostile node's own writes, and the lies it tells about vectors.
extension HostileNode {
    // MARK: - Its own writes

    /// Its writes above `sequence` as an honest sender would send them: only the last version
    /// of each entry (the earlier ones are superseded, and `through` covers them), ascending.
    func unsent(above sequence: UInt64, limit: Int) -> ArraySlice<OwnWrite> {
        let window = log.filter { $0.sequence > sequence }.prefix(limit)
        var latest: [String: UInt64] = [:]
        for write in window { latest[write.id] = write.sequence }
        return window.filter { latest[$0.id] == $0.sequence }[...]
    }

    /// What its own next write is, one row each (`WeightedTable`); with no live entry, a create.
    enum WriteKind: Sendable { case create, update, delete }

    static let writeKinds = WeightedTable<WriteKind>([(.create, 60), (.update, 25), (.delete, 15)])

    func write(atMaximum: Bool) {
        let sequence = UInt64(log.count + 1)
        let kind = Self.writeKinds.pick(random)
        let hlc = atMaximum ? UInt64(HLCTimestamp.maximum.rawValue) : nextHLC()
        if kind == .create || liveEntries.isEmpty {
            let id = "evil_" + Identifier.uuidV4(random: random)
            liveEntries.append(id)
            createdRecords.insert(id)
            log.append(OwnWrite(id: id, sequence: sequence, hlc: hlc, deleted: false,
                                payload: entryJSON(id: id, text: "h\(sequence)")))
            return
        }
        let index = Int(random.next(below: UInt64(liveEntries.count)))
        let id = liveEntries[index]
        let deleted = kind == .delete
        if deleted { liveEntries.remove(at: index) }
        log.append(OwnWrite(id: id, sequence: sequence, hlc: hlc, deleted: deleted,
                            payload: deleted ? [] : entryJSON(id: id, text: "h\(sequence) update")))
    }

    func entryJSON(id: String, text: String) -> [UInt8] {
        let time = Timestamp(millisecondsSince1970: Simulator.epoch + simulator.now)
        let entry = LogEntry(id: id, timestamp: time, recordedAt: time, source: "evil", deviceId: nodeID, category: "note",
                             data: LogData(text: text))
        return Array(entry.json.canonicalText.utf8)
    }

    func currentHLC() -> UInt64 { UInt64(Simulator.epoch + simulator.now) << 16 }

    func nextHLC() -> UInt64 {
        lastHLC = max(currentHLC(), lastHLC + 1)
        return lastHLC
    }

    // MARK: - Lies about vectors

    /// The honest origins it knows, with the highest sequence it heard of for each.
    func honestOrigins() -> [(origin: String, sequence: UInt64)] {
        var best = VersionVector()
        for info in learned.values {
            best = best.joined(with: info.vector)
            if best[info.incarnation] == 0 { best[info.incarnation] = 1 }
        }
        best[incarnation] = 0
        return Self.entries(best).map { (origin: $0.0, sequence: $0.1) }
    }

    /// A vector claiming more than was ever written — a little above, or the ceiling itself —
    /// of `target`'s own current incarnation (`own`), and of other honest origins (`others`).
    func lie(about target: String, base: [(String, UInt64)], own: Bool, others: Bool) -> [(String, UInt64)] {
        var vector = VersionVector(base)
        let claim = { (current: UInt64) -> UInt64 in
            [current + 1 + self.random.next(below: 20), Message.Limits.maximumSequence, current + 1_000_000][Int(self.random.next(below: 3))]
        }
        let incarnation = nodeIDs[target].flatMap { learned[$0] }?.incarnation
        if own, let incarnation { vector[incarnation] = claim(vector[incarnation]) }
        if others {
            for origin in honestOrigins() where origin.origin != incarnation && random.next(below: 2) == 0 {
                vector[origin.origin] = claim(vector[origin.origin])
            }
        }
        return Self.entries(vector)
    }

    /// A vector the decoder must refuse: a sequence past the ceiling or 0, origins out of order
    /// or twice, an origin that is not a UUID.
    func pastCeiling(_ base: [(String, UInt64)]) -> [(String, UInt64)] {
        var vector = base.isEmpty ? [(Identifier.uuidV4(random: random), UInt64(1))] : base
        let i = Int(random.next(below: UInt64(vector.count)))
        switch random.next(below: 5) {
        case 0: vector[i].1 = Message.Limits.maximumSequence + 1 + random.next(below: 1_000)
        case 1: vector[i].1 = UInt64.max
        case 2: vector[i].1 = 0
        case 3: vector.append(vector[i])
        default: vector.append(("NOT-A-UUID-\(random.next(below: 1000))", 1))
        }
        return vector
    }
}
