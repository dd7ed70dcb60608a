import LifeSync

/// The JSON form of protocol messages used by the test vectors in `Protocol/vectors/`
/// (described in `Protocol/vectors/README.md`): what a frame means, written so that a person or
/// another implementation can compare it with what they decoded.
///
/// ```swift
/// let json = MessageJSON.json(.ping(nonce: 15_000))   // {"type": "ping", "nonce": 15000}
/// let back = try MessageJSON.message(from: json)      // .ping(nonce: 15000)
/// ```
///
/// Conventions: u64 values are JSON numbers up to 2^53 − 1 and decimal strings above; an HLC is
/// `{"ms": …, "counter": …}`; a vector is an object from origin to sequence; digests and raw
/// bytes are lowercase hex strings.
package enum MessageJSON {
    /// A JSON value that does not describe a message.
    package struct FormatError: Error, CustomStringConvertible, Sendable {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// The name of each message type in the vectors (`"type"` member, and the vector file name).
    package static func name(of type: MessageType) -> String {
        switch type {
        case .hello: return "hello"
        case .batch: return "batch"
        case .ack: return "ack"
        case .caughtUp: return "caught_up"
        case .ping: return "ping"
        case .pong: return "pong"
        case .error: return "error"
        case .syncRequest: return "sync_request"
        case .holds: return "holds"
        case .offer: return "offer"
        case .accept: return "accept"
        case .chunk: return "chunk"
        case .confirm: return "confirm"
        case .failure: return "failure"
        case .history: return "history"
        case .want: return "want"
        }
    }

    package static func type(named name: String) -> MessageType? {
        MessageType.allCases.first { self.name(of: $0) == name }
    }

    /// The name of an error code (`malformed`, `frame_too_large`, …), nil for codes the table lacks.
    package static func errorName(_ code: UInt16) -> String? {
        ErrorCode(rawValue: code)?.description
    }

    // MARK: - Message → JSON

    package static func json(_ message: Message) -> JSONValue {
        var members: [(String, JSONValue)] = [("type", .string(name(of: message.type)))]
        switch message {
        case .hello(let hello):
            members += [
                ("min_version", .number(Double(hello.minimumVersion))),
                ("max_version", .number(Double(hello.maximumVersion))),
                ("node_id", .string(hello.nodeID)),
                ("role", .string(hello.role.rawValue)),
                ("incarnation", .string(hello.incarnation)),
                ("capabilities", .number(Double(hello.capabilities.rawValue))),
                ("clock", hlcJSON(hello.clock)),
                ("vector", vectorJSON(hello.vector)),
            ]
            if let name = hello.name { members.append(("name", .string(name))) }
        case .batch(let batch):
            members += [
                ("batch_id", u64JSON(batch.id)),
                ("origins", .array(originTable(of: batch).map { origin in
                    let info = batch.origins.first { $0.origin == origin }
                    return .object([
                        ("origin", .string(origin)),
                        ("node_id", info?.nodeID.map(JSONValue.string) ?? .null),
                        ("role", info?.role.map { .string($0.rawValue) } ?? .null),
                    ])
                })),
                ("changes", .array(batch.changes.map(changeJSON))),
                ("through", vectorJSON(batch.through)),
            ]
            if !batch.seals.isEmpty { members.append(("seals", .array(batch.seals.map(sealJSON)))) }
        case .ack(let ack):
            members += [
                ("batch_id", u64JSON(ack.batchID)),
                ("applied", .number(Double(ack.applied))),
                ("conflicts", .number(Double(ack.conflicts))),
            ]
        case .caughtUp(let vector), .syncRequest(let vector):
            members.append(("vector", vectorJSON(vector)))
        case .holds(let vector, let direct, let relay):
            members += [("vector", vectorJSON(vector)), ("direct", .array(direct.map { .string($0) }))]
            if let relay { members.append(("relay", .array(relay.map { .string($0) }))) }
        case .ping(let nonce), .pong(let nonce):
            members.append(("nonce", u64JSON(nonce)))
        case .error(let code, let text):
            members += [
                ("code", .number(Double(code))),
                ("code_name", errorName(code).map(JSONValue.string) ?? .null),
                ("message", .string(text)),
            ]
        case .want(let ids):
            members.append(("recording_ids", .array(ids.map { .string($0) })))
        case .offer(let offer):
            members += [
                ("recording_id", .string(offer.recordingID)),
                ("file_name", .string(offer.fileName)),
                ("media_type", .string(offer.mediaType)),
                ("size", u64JSON(offer.size)),
                ("chunk_size", .number(Double(offer.chunkSize))),
                ("sha256", .string(offer.sha256.hex)),
            ]
        case .accept(let id, let offset):
            members += [("recording_id", .string(id)), ("offset", u64JSON(offset))]
        case .chunk(let chunk):
            members += [
                ("recording_id", .string(chunk.recordingID)),
                ("offset", u64JSON(chunk.offset)),
                ("sha256", .string(chunk.sha256.hex)),
                ("data", .string(Hex.encode(chunk.data))),
            ]
        case .confirm(let id, let digest):
            members += [("recording_id", .string(id)), ("sha256", .string(digest.hex))]
        case .failure(let id, let code, let text):
            members += [
                ("recording_id", .string(id)),
                ("code", .number(Double(code))),
                ("code_name", TransferFailure(rawValue: code).map { .string($0.wireName) } ?? .null),
                ("message", .string(text)),
            ]
        case .history(let history):
            members += [
                ("vector", vectorJSON(history.vector)),
                ("incarnation", .string(history.incarnation)),
                ("origins", .array(history.origins.map { origin in
                    .object([("origin", .string(origin.origin)), ("top", u64JSON(origin.top)),
                             ("probes", .array(origin.probes.map(memberJSON)))])
                })),
                ("repairs", .array(history.repairs.map { repair in
                    .object([("node_id", .string(repair.nodeID)), ("origin", .string(repair.origin)), ("fork", u64JSON(repair.fork)),
                             ("moved_to", .string(repair.movedTo)), ("base", u64JSON(repair.base)), ("public_key", .string(Hex.encode(repair.publicKey))),
                             ("members", .array(repair.members.map(memberJSON))), ("signature", .string(Hex.encode(repair.signature)))])
                })),
            ]
            // Left out when there is none, as on the wire.
            if !history.forks.isEmpty {
                members.append(("forks", .array(history.forks.map { fork in
                    .object([("origin", .string(fork.origin)), ("agreed", u64JSON(fork.agreed)), ("seq", u64JSON(fork.sequence)),
                             ("digests", .array([.string(fork.digests.0.description), .string(fork.digests.1.description)]))])
                })))
            }
        }
        return .object(members)
    }

    /// The origin table a BATCH carries on the wire: every origin its changes, their vectors and
    /// its `through` vector name, each once, ascending.
    package static func originTable(of batch: Batch) -> [String] {
        var names = Set<String>()
        for change in batch.changes {
            names.insert(change.stamp.origin)
            for entry in change.stamp.vector.entries { names.insert(entry.origin) }
        }
        for entry in batch.through.entries { names.insert(entry.origin) }
        for seal in batch.seals { names.insert(seal.origin) }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// A seal (PROTOCOL.md §5.2.5): its origin, node, key and signature as hex, and its members
    /// as `{"seq": …, "digest": hex}`.
    static func sealJSON(_ seal: Seal) -> JSONValue {
        .object([
            ("origin", .string(seal.origin)),
            ("node_id", .string(seal.nodeID)),
            ("public_key", .string(Hex.encode(seal.publicKey))),
            ("members", .array(seal.members.map { .object([("seq", u64JSON($0.sequence)), ("digest", .string($0.digest.hex))]) })),
            ("signature", .string(Hex.encode(seal.signature))),
        ])
    }

    /// An entry change carries `entry`, a recording-metadata change (kind 0x02) `recording`:
    /// the content as a JSON object, or null for a delete. An edit that left some fields alone
    /// (flags bit 1, PROTOCOL.md §5.2.1) also has `fields`, its mask as a number; a change
    /// without it changed every field.
    static func changeJSON(_ change: Change) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("kind", .string(change.kind == .entry ? "entry" : "recording")),
            ("id", .string(change.id)),
            ("deleted", .bool(change.stamp.deleted)),
            ("origin", .string(change.stamp.origin)),
            ("seq", u64JSON(change.stamp.sequence)),
            ("hlc", hlcJSON(change.stamp.hlc)),
            ("vv", vectorJSON(change.stamp.vector)),
        ]
        if change.fields != .all {
            members.append(("fields", .number(Double(change.fields.bits))))
            if let extra = change.fields.extra, !extra.isEmpty || change.fields.bits == 0xFF {
                members.append(("extra_fields", .array(extra.map(JSONValue.string))))
            }
        }
        members.append(change.kind == .entry ? ("entry", change.entry?.json ?? .null) : ("recording", change.recording?.json ?? .null))
        return .object(members)
    }

    static func hlcJSON(_ stamp: HLCTimestamp) -> JSONValue {
        .object([("ms", .number(Double(stamp.milliseconds))), ("counter", .number(Double(stamp.counter)))])
    }

    static func memberJSON(_ member: Seal.Member) -> JSONValue {
        .object([("seq", u64JSON(member.sequence)), ("digest", .string(member.digest.hex))])
    }

    static func vectorJSON(_ vector: VersionVector) -> JSONValue {
        .object(vector.entries.map { ($0.origin, u64JSON($0.sequence)) })
    }

    /// JSON numbers are doubles: integers above 2^53 − 1 travel as decimal strings.
    static func u64JSON(_ value: UInt64) -> JSONValue {
        value <= 9_007_199_254_740_991 ? .number(Double(value)) : .string(String(value))
    }

    // MARK: - JSON → Message

    package static func message(from json: JSONValue) throws -> Message {
        let object = try Object(json, "message")
        guard let type = type(named: try object.string("type")) else {
            throw FormatError("unknown message type \(json["type"].map { "\($0)" } ?? "nil")")
        }
        switch type {
        case .hello:
            guard let role = Role(rawValue: try object.string("role")) else { throw FormatError("hello: unknown role") }
            return .hello(Hello(minimumVersion: try object.integer("min_version"), maximumVersion: try object.integer("max_version"),
                                nodeID: try object.string("node_id"), role: role, incarnation: try object.string("incarnation"),
                                capabilities: Capabilities(rawValue: try object.integer("capabilities")),
                                clock: try hlc(object.value("clock")), vector: try vector(object.value("vector")),
                                name: object.json["name"] == nil ? nil : try object.string("name")))
        case .batch:
            var origins: [OriginInfo] = []
            for item in try object.array("origins") {
                let origin = try Object(item, "origins[]")
                guard case .string(let nodeID) = try origin.value("node_id") else { continue }
                guard let role = Role(rawValue: try origin.string("role")) else { throw FormatError("batch: origin role") }
                origins.append(OriginInfo(origin: try origin.string("origin"), nodeID: nodeID, role: role))
            }
            var changes: [Change] = []
            for item in try object.array("changes") {
                let change = try Object(item, "changes[]")
                let deleted = try change.bool("deleted")
                let stamp = VersionStamp(hlc: try hlc(change.value("hlc")), origin: try change.string("origin"),
                                         sequence: try u64(change.value("seq")), vector: try vector(change.value("vv")), deleted: deleted)
                switch try change.string("kind") {
                case "entry":
                    let entryJSON = try change.value("entry")
                    let entry: LogEntry? = entryJSON == .null ? nil : try LogEntry.validatedComplete(from: entryJSON)
                    guard deleted == (entry == nil) else { throw FormatError("batch: a change has an entry exactly when it is not deleted") }
                    var fields = FieldMask.all
                    if change.json["fields"] != nil {
                        let bits: UInt8 = try change.integer("fields")
                        let extra = try change.json["extra_fields"].map { names in
                            guard case .array(let items) = names else { throw FormatError("batch: extra_fields is an array") }
                            return items.compactMap(\.stringValue)
                        }
                        fields = extra.map { FieldMask(bits: bits, extra: $0) } ?? (bits == 0xFF ? .all : FieldMask(bits: bits))
                    }
                    changes.append(Change(id: try change.string("id"), stamp: stamp, entry: entry, fields: fields))
                case "recording":
                    let metadata = try change.value("recording")
                    let recording: Recording? = metadata == .null ? nil : try Recording.validated(from: metadata)
                    guard deleted == (recording == nil) else { throw FormatError("batch: a change has metadata exactly when it is not deleted") }
                    changes.append(Change(id: try change.string("id"), stamp: stamp, recording: recording))
                case let other:
                    throw FormatError("batch: unknown change kind \"\(other)\"")
                }
            }
            var seals: [Seal] = []
            if object.json["seals"] != nil {
                for item in try object.array("seals") {
                    let seal = try Object(item, "seals[]")
                    var members: [Seal.Member] = []
                    for member in try seal.array("members") {
                        let m = try Object(member, "seals[].members[]")
                        members.append(Seal.Member(sequence: try u64(m.value("seq")), digest: try m.digest("digest")))
                    }
                    seals.append(Seal(origin: try seal.string("origin"), nodeID: try seal.string("node_id"), publicKey: try seal.hex("public_key"),
                                      members: members, signature: try seal.hex("signature")))
                }
            }
            return .batch(Batch(id: try u64(object.value("batch_id")), origins: origins, changes: changes,
                                through: try vector(object.value("through")), seals: seals))
        case .ack:
            return .ack(Ack(batchID: try u64(object.value("batch_id")), applied: try object.integer("applied"),
                            conflicts: try object.integer("conflicts")))
        case .caughtUp:
            return .caughtUp(vector: try vector(object.value("vector")))
        case .syncRequest:
            return .syncRequest(vector: try vector(object.value("vector")))
        case .holds:
            func strings(_ key: String) throws -> [String] {
                try object.array(key).map { json in
                    guard case .string(let text) = json else { throw FormatError("holds: a \(key) item that is not a string") }
                    return text
                }
            }
            return .holds(vector: try vector(object.value("vector")), direct: try strings("direct"),
                          relay: object.json["relay"] == nil ? nil : try strings("relay"))
        case .ping:
            return .ping(nonce: try u64(object.value("nonce")))
        case .pong:
            return .pong(nonce: try u64(object.value("nonce")))
        case .error:
            return .error(code: try object.integer("code"), message: try object.string("message"))
        case .offer:
            return .offer(Offer(recordingID: try object.string("recording_id"), fileName: try object.string("file_name"),
                                mediaType: try object.string("media_type"), size: try u64(object.value("size")),
                                chunkSize: try object.integer("chunk_size"), sha256: try object.digest("sha256")))
        case .accept:
            return .accept(recordingID: try object.string("recording_id"), offset: try u64(object.value("offset")))
        case .chunk:
            return .chunk(Chunk(recordingID: try object.string("recording_id"), offset: try u64(object.value("offset")),
                                sha256: try object.digest("sha256"), data: try object.hex("data")))
        case .confirm:
            return .confirm(recordingID: try object.string("recording_id"), sha256: try object.digest("sha256"))
        case .failure:
            return .failure(recordingID: try object.string("recording_id"), code: try object.integer("code"),
                            message: try object.string("message"))
        case .want:
            return .want(recordingIDs: try object.array("recording_ids").map { json in
                guard case .string(let id) = json else { throw FormatError("want: a recording ID that is not a string") }
                return id
            })
        case .history:
            func members(_ list: [JSONValue]) throws -> [Seal.Member] {
                try list.map { json in
                    let member = try Object(json, "member")
                    return Seal.Member(sequence: try u64(member.value("seq")), digest: try member.digest("digest"))
                }
            }
            let origins = try object.array("origins").map { json -> History.Origin in
                let origin = try Object(json, "history origin")
                return History.Origin(origin: try origin.string("origin"), top: try u64(origin.value("top")), probes: try members(origin.array("probes")))
            }
            let repairs = try object.array("repairs").map { json -> History.Repair in
                let repair = try Object(json, "repair")
                return History.Repair(nodeID: try repair.string("node_id"), origin: try repair.string("origin"), fork: try u64(repair.value("fork")),
                                      movedTo: try repair.string("moved_to"), base: try u64(repair.value("base")), members: try members(repair.array("members")),
                                      publicKey: try repair.hex("public_key"), signature: try repair.hex("signature"))
            }
            let forks = try (object.json["forks"] == nil ? [] : object.array("forks")).map { json -> History.Fork in
                let fork = try Object(json, "fork")
                let digests = try fork.array("digests").map { item -> SHA256.Digest in
                    guard case .string(let hex) = item, let digest = SHA256.Digest(hex: hex) else { throw FormatError("fork.digests must be 64 hex digits each") }
                    return digest
                }
                guard digests.count == 2 else { throw FormatError("fork.digests must name two") }
                return History.Fork(origin: try fork.string("origin"), agreed: try u64(fork.value("agreed")), sequence: try u64(fork.value("seq")),
                                    digests: (digests[0], digests[1]))
            }
            return .history(History(vector: try vector(object.value("vector")), incarnation: try object.string("incarnation"), origins: origins,
                                    repairs: repairs, forks: forks))
        }
    }

    static func hlc(_ json: JSONValue) throws -> HLCTimestamp {
        let object = try Object(json, "hlc")
        let ms: Int64 = try object.integer("ms")
        let counter: Int = try object.integer("counter")
        guard counter <= 0xFFFF else { throw FormatError("hlc counter above 65535") }
        return HLCTimestamp(milliseconds: ms, counter: counter)
    }

    static func vector(_ json: JSONValue) throws -> VersionVector {
        guard case .object(let members) = json else { throw FormatError("a vector must be an object") }
        var pairs: [(String, UInt64)] = []
        for (origin, value) in members { pairs.append((origin, try u64(value))) }
        return VersionVector(pairs)
    }

    static func u64(_ json: JSONValue) throws -> UInt64 {
        switch json {
        case .number(let n):
            guard n >= 0, n == n.rounded(), n <= 9_007_199_254_740_991 else { throw FormatError("\(n) is not a u64 below 2^53") }
            return UInt64(n)
        case .string(let s):
            guard let v = UInt64(s) else { throw FormatError("\"\(s)\" is not a decimal u64") }
            return v
        default:
            throw FormatError("expected a u64, got \(json)")
        }
    }

    /// Typed access to the members of one JSON object.
    struct Object {
        let json: JSONValue
        let path: String

        init(_ json: JSONValue, _ path: String) throws {
            guard case .object = json else { throw FormatError("\(path) must be an object") }
            self.json = json
            self.path = path
        }

        func value(_ key: String) throws -> JSONValue {
            guard let v = json[key] else { throw FormatError("\(path).\(key) is missing") }
            return v
        }

        func string(_ key: String) throws -> String {
            guard case .string(let s) = try value(key) else { throw FormatError("\(path).\(key) must be a string") }
            return s
        }

        func bool(_ key: String) throws -> Bool {
            guard case .bool(let b) = try value(key) else { throw FormatError("\(path).\(key) must be a boolean") }
            return b
        }

        func array(_ key: String) throws -> [JSONValue] {
            guard case .array(let items) = try value(key) else { throw FormatError("\(path).\(key) must be an array") }
            return items
        }

        func integer<T: FixedWidthInteger>(_ key: String) throws -> T {
            guard case .number(let n) = try value(key), n == n.rounded(), let v = T(exactly: n) else {
                throw FormatError("\(path).\(key) must be an integer that fits \(T.self)")
            }
            return v
        }

        func digest(_ key: String) throws -> SHA256.Digest {
            guard let digest = SHA256.Digest(hex: try string(key)) else { throw FormatError("\(path).\(key) must be 64 hex digits") }
            return digest
        }

        func hex(_ key: String) throws -> [UInt8] {
            guard let bytes = Hex.decode(try string(key)) else { throw FormatError("\(path).\(key) must be hex") }
            return bytes
        }
    }
}
