extension Message {
    /// Decodes one frame's type and payload. Every field is checked: a protocol violation comes
    /// back as a `WireError` with the code the spec assigns, never a crash.
    package static func decode(type rawType: UInt8, payload: ArraySlice<UInt8>) throws(WireError) -> Message {
        guard let type = MessageType(rawValue: rawType) else {
            throw WireError(.unknownType, "unknown message type 0x\(Hex.encode([rawType]))")
        }
        var r = ByteReader(payload)
        let message: Message
        switch type {
        case .hello:
            guard try r.raw(4, "magic") == Hello.magic else { throw WireError(.badHandshake, "wrong magic (expected \"LSYN\")") }
            let minimum = try r.u16("min_version"), maximum = try r.u16("max_version")
            guard minimum <= maximum else { throw WireError(.malformed, "min_version \(minimum) > max_version \(maximum)") }
            let nodeID = try r.string("node_id")
            let roleCode = try r.u8("role")
            guard let role = Role(wireCode: roleCode) else { throw WireError(.malformed, "unknown role code \(roleCode)") }
            guard Identifier.role(of: nodeID) == role else {
                throw WireError(.malformed, "node_id \"\(nodeID.prefix(80))\" is not a \(role.rawValue)_{uuid-v4}")
            }
            let incarnation = try r.string("incarnation")
            try checkOrigin(incarnation, "incarnation")
            let capabilities = Capabilities(rawValue: try r.u32("capabilities"))
            let clock = try hlc(try r.u64("clock"), "clock")
            let vector = try readVector(&r, "vector")
            // The device name (PROTOCOL.md §5.1), present when bytes follow the vector.
            let name = r.remaining > 0 ? try boundedString(&r, "name") : nil
            message = .hello(Hello(minimumVersion: minimum, maximumVersion: maximum, nodeID: nodeID, role: role,
                                   incarnation: incarnation, capabilities: capabilities, clock: clock, vector: vector, name: name))
        case .batch:
            message = .batch(try readBatch(&r))
        case .ack:
            message = .ack(Ack(batchID: try r.u64("batch_id"), applied: try r.u32("applied"), conflicts: try r.u32("conflicts")))
        case .caughtUp:
            message = .caughtUp(vector: try readVector(&r, "vector"))
        case .syncRequest:
            message = .syncRequest(vector: try readVector(&r, "vector"))
        case .holds:
            let vector = try readVector(&r, "vector")
            let direct = try readNodeIDs(&r, "direct")
            // The origins the sender asks us to relay it, present when bytes follow `direct`.
            message = .holds(vector: vector, direct: direct, relay: r.remaining > 0 ? try readOrigins(&r, "relay") : nil)
        case .ping:
            message = .ping(nonce: try r.u64("nonce"))
        case .pong:
            message = .pong(nonce: try r.u64("nonce"))
        case .error:
            message = .error(code: try r.u16("code"), message: try boundedString(&r, "message"))
        case .offer:
            let id = try recordingID(&r)
            let fileName = try boundedString(&r, "file_name")
            let mediaType = try boundedString(&r, "media_type")
            let size = try r.u64("size")
            let chunkSize = try r.u32("chunk_size")
            guard chunkSize > 0, Int(chunkSize) <= Limits.maximumChunkBytes else {
                throw WireError(.malformed, "chunk_size \(chunkSize) outside 1…\(Limits.maximumChunkBytes)")
            }
            message = .offer(Offer(recordingID: id, fileName: fileName, mediaType: mediaType, size: size,
                                   chunkSize: chunkSize, sha256: try r.digest("sha256")))
        case .accept:
            message = .accept(recordingID: try recordingID(&r), offset: try r.u64("offset"))
        case .chunk:
            let id = try recordingID(&r)
            let offset = try r.u64("offset")
            let digest = try r.digest("sha256")
            message = .chunk(Chunk(recordingID: id, offset: offset, sha256: digest,
                                   data: try r.blobSlice("data", maximum: Limits.maximumChunkBytes)))
        case .confirm:
            message = .confirm(recordingID: try recordingID(&r), sha256: try r.digest("sha256"))
        case .failure:
            message = .failure(recordingID: try recordingID(&r), code: try r.u16("code"), message: try boundedString(&r, "message"))
        case .history:
            message = .history(try readHistory(&r))
        case .want:
            // Each ID takes its str16 length and at least 40 bytes ("mac_" and a UUID).
            let count = try r.count16("recording count", minimumItemSize: 42)
            guard (1...Limits.maximumWantedRecordings).contains(count) else {
                throw WireError(.malformed, "a WANT names \(count) recordings (1 to \(Limits.maximumWantedRecordings))")
            }
            var ids: [String] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(try recordingID(&r)) }
            message = .want(recordingIDs: ids)
        }
        try r.expectEnd("the \(type) payload")
        return message
    }

    static func boundedString(_ r: inout ByteReader, _ what: String) throws(WireError) -> String {
        let s = try r.string(what)
        guard s.utf8.count <= Limits.maximumStringBytes else { throw WireError(.malformed, "\(what) longer than \(Limits.maximumStringBytes) bytes") }
        return s
    }

    static func recordingID(_ r: inout ByteReader) throws(WireError) -> String {
        let id = try r.string("recording_id")
        guard Identifier.isValid(id) else { throw WireError(.malformed, "recording_id \"\(id.prefix(80))\" is not {role}_{uuid-v4}") }
        return id
    }

    static func checkOrigin(_ origin: String, _ what: @autoclosure () -> String) throws(WireError) {
        guard Identifier.isUUIDv4(Substring(origin)) else { throw WireError(.malformed, "\(what()) \"\(origin.prefix(80))\" is not a lowercase UUID v4") }
    }

    /// `what` is only made into text for the error: this runs for every change of a batch.
    static func hlc(_ raw: UInt64, _ what: @autoclosure () -> String) throws(WireError) -> HLCTimestamp {
        guard raw <= UInt64(HLCTimestamp.maximum.rawValue) else {
            throw WireError(.malformed, "\(what()) \(raw) is above the HLC ceiling \(HLCTimestamp.maximum.rawValue)")
        }
        return HLCTimestamp(rawValue: Int64(raw))
    }

    /// A sequence number: 1 … `Limits.maximumSequence`.
    static func readSequence(_ r: inout ByteReader, _ what: @autoclosure () -> String) throws(WireError) -> UInt64 {
        let value = try r.u64("seq")
        guard value >= 1, value <= Limits.maximumSequence else {
            throw WireError(.malformed, "\(what()) \(value) outside 1…\(Limits.maximumSequence)")
        }
        return value
    }

    /// A count of origins (a vector, an origin table), at most `Limits.maximumOrigins`.
    static func readOriginCount(_ r: inout ByteReader, _ what: @autoclosure () -> String, minimumItemSize: Int) throws(WireError) -> Int {
        let count = try r.count16(what(), minimumItemSize: minimumItemSize)
        guard count <= Limits.maximumOrigins else {
            throw WireError(.malformed, "\(what()) \(count) exceeds the maximum \(Limits.maximumOrigins) origins")
        }
        return count
    }

    /// A vector: origins strictly ascending, each a UUID, sequences 1 … `Limits.maximumSequence`.
    static func readVector(_ r: inout ByteReader, _ what: String) throws(WireError) -> VersionVector {
        let count = try readOriginCount(&r, "\(what) count", minimumItemSize: 10)
        var pairs: [(String, UInt64)] = []
        pairs.reserveCapacity(count)
        for _ in 0..<count {
            let origin = try r.string("\(what) origin")
            try checkOrigin(origin, "\(what) origin")
            let sequence = try readSequence(&r, "\(what) seq")
            if let last = pairs.last, !(last.0 < origin) { throw WireError(.malformed, "\(what) origins not strictly ascending") }
            pairs.append((origin, sequence))
        }
        return VersionVector(pairs)
    }

    /// A u16 count (at most 4 096), then that many node IDs, strictly ascending.
    static func readNodeIDs(_ r: inout ByteReader, _ what: String) throws(WireError) -> [String] {
        try readAscending(&r, what, item: "node_id", minimumItemSize: 42) { id throws(WireError) in
            guard Identifier.isValid(id) else { throw WireError(.malformed, "\(what) node_id \"\(id.prefix(80))\" is not {role}_{uuid-v4}") }
        }
    }

    /// A u16 count (at most 4 096), then that many origins (UUIDs), strictly ascending.
    static func readOrigins(_ r: inout ByteReader, _ what: String) throws(WireError) -> [String] {
        try readAscending(&r, what, item: "origin", minimumItemSize: 38) { origin throws(WireError) in
            try checkOrigin(origin, "\(what) origin")
        }
    }

    /// A u16 count (at most 4 096), then that many strings, each passing `check`, strictly ascending.
    private static func readAscending(_ r: inout ByteReader, _ what: String, item: String, minimumItemSize: Int,
                                      check: (String) throws(WireError) -> Void) throws(WireError) -> [String] {
        let count = try readOriginCount(&r, "\(what) count", minimumItemSize: minimumItemSize)
        var items: [String] = []
        items.reserveCapacity(count)
        for _ in 0..<count {
            let text = try r.string("\(what) \(item)")
            try check(text)
            if let last = items.last, !(last < text) { throw WireError(.malformed, "\(what) \(item)s not strictly ascending") }
            items.append(text)
        }
        return items
    }

    static func readBatch(_ r: inout ByteReader) throws(WireError) -> Batch {
        let id = try r.u64("batch_id")
        let originCount = try readOriginCount(&r, "origin count", minimumItemSize: 5)
        var table: [String] = []
        var origins: [OriginInfo] = []
        var seen = Set<String>()
        for _ in 0..<originCount {
            let origin = try r.string("origin")
            try checkOrigin(origin, "origin")
            guard seen.insert(origin).inserted else { throw WireError(.malformed, "origin \(origin) listed twice") }
            let nodeID = try r.string("origin node_id")
            let roleCode = try r.u8("origin role")
            let role = Role(wireCode: roleCode)
            guard roleCode == 0 || role != nil else { throw WireError(.malformed, "unknown role code \(roleCode)") }
            if !nodeID.isEmpty {
                guard let role, Identifier.role(of: nodeID) == role else {
                    throw WireError(.malformed, "origin node_id \"\(nodeID.prefix(80))\" does not match its role")
                }
                origins.append(OriginInfo(origin: origin, nodeID: nodeID, role: role))
            }
            table.append(origin)
        }
        func origin(_ index: UInt16, _ what: @autoclosure () -> String) throws(WireError) -> String {
            guard Int(index) < table.count else { throw WireError(.malformed, "\(what()) origin index \(index) outside the table of \(table.count)") }
            return table[Int(index)]
        }
        let changeCount = try r.count32("change count", minimumItemSize: 30)
        guard changeCount <= Limits.maximumChangesPerBatch else {
            throw WireError(.malformed, "\(changeCount) changes exceed the batch maximum \(Limits.maximumChangesPerBatch)")
        }
        var changes: [Change] = []
        changes.reserveCapacity(changeCount)
        // An entry's writes travel each on its own (PROTOCOL.md §8): an id may come more than
        // once, a write (origin, seq) only once.
        var writes = Set<WriteKey>(minimumCapacity: changeCount)
        var digests: [SHA256.Digest] = []
        digests.reserveCapacity(changeCount)
        let hasher = SHA256()
        for n in 0..<changeCount {
            let kindCode = try r.u8("change kind")
            guard let kind = ChangeKind(rawValue: kindCode) else { throw WireError(.malformed, "change \(n): unknown kind \(kindCode)") }
            let (deleted, fields) = try FieldMask.readFlags(from: &r, isEntry: kind == .entry, change: n)
            let entryID = try r.string("change id")
            do { try LogEntry.validateEntryID(entryID, field: "id") } catch {
                throw WireError(.invalidChange, "change \(n): \(error)")
            }
            let originIndex = try r.u16("change origin")
            let changeOrigin = try origin(originIndex, "change \(n)")
            let sequence = try readSequence(&r, "change \(n): seq")
            guard writes.insert(WriteKey(origin: originIndex, sequence: sequence)).inserted else {
                throw WireError(.invalidChange, "change \(n): the write \(changeOrigin)#\(sequence) appears twice in the batch")
            }
            let stampTime = try hlc(try r.u64("change hlc"), "change \(n) hlc")
            let vvCount = try readOriginCount(&r, "change vv count", minimumItemSize: 10)
            var vector = VersionVector()
            for _ in 0..<vvCount {
                let vvOrigin = try origin(try r.u16("vv origin"), "change \(n) vv")
                let vvSequence = try readSequence(&r, "change \(n): vv seq")
                guard vector[vvOrigin] == 0 else { throw WireError(.malformed, "change \(n): an origin twice in its version vector") }
                vector[vvOrigin] = vvSequence
            }
            guard vector[changeOrigin] >= sequence else {
                throw WireError(.invalidChange, "change \(n): its version vector does not include its own write")
            }
            let payload = try r.blob("change entry", maximum: Limits.maximumEntryBytes)
            let stamp = VersionStamp(hlc: stampTime, origin: changeOrigin, sequence: sequence, vector: vector, deleted: deleted)
            digests.append(WriteDigest.of(kind: kind, stamp: stamp, id: entryID, fields: deleted ? .all : fields, canonicalContent: payload[...], hasher: hasher))
            if deleted {
                guard payload.isEmpty else { throw WireError(.malformed, "change \(n): a delete carries content") }
                changes.append(kind == .entry ? Change(id: entryID, stamp: stamp, entry: nil) : Change(id: entryID, stamp: stamp, recording: nil))
                continue
            }
            do {
                switch kind {
                case .entry:
                    // The scanner vouches for most entries; the reference path decides the rest.
                    if let scanned = payload.withUnsafeBufferPointer({ LogEntry.scanComplete($0, id: entryID) }) {
                        changes.append(Change(id: entryID, stamp: stamp, entry: scanned, fields: fields))
                        continue
                    }
                    let parsed = try LogEntry.validatedComplete(from: try JSONValue.parse(bytes: payload))
                    guard parsed.id == entryID else { throw ValidationError(field: "id", reason: "differs from the change's id") }
                    changes.append(Change(id: entryID, stamp: stamp, entry: parsed, fields: fields))
                case .recording:
                    let parsed = try Recording.validated(from: try JSONValue.parse(bytes: payload))
                    guard parsed.id == entryID else { throw ValidationError(field: "id", reason: "differs from the change's id") }
                    changes.append(Change(id: entryID, stamp: stamp, recording: parsed))
                }
            } catch {
                throw WireError(.invalidChange, "change \(n) (\(entryID)): \(error)")
            }
        }
        let throughCount = try readOriginCount(&r, "through count", minimumItemSize: 10)
        var through = VersionVector()
        for _ in 0..<throughCount {
            let throughOrigin = try origin(try r.u16("through origin"), "through")
            let throughSequence = try readSequence(&r, "through seq")
            guard through[throughOrigin] == 0 else { throw WireError(.malformed, "an origin twice in the through vector") }
            through[throughOrigin] = throughSequence
        }
        let seals = r.remaining > 0 ? try readSeals(&r, table: table) : []
        var batch = Batch(id: id, origins: origins, changes: changes, through: through, seals: seals)
        batch.receivedDigests = digests
        return batch
    }
}

/// One write in a BATCH: its origin's index in the batch's table (unique per origin) and its sequence.
private struct WriteKey: Hashable {
    var origin: UInt16
    var sequence: UInt64
}
