// libFuzzer targets `session` and `session-nohello`: a `SyncSession` over a fresh in-memory
// replica, fed the fuzz input as the peer's byte stream.
//
// Input: one control byte, then the stream. `session` first delivers a valid HELLO from a fake
// peer (so the fuzzer starts in the open state); `session-nohello` delivers only the input. Control byte bits:
//   0-1  local role: phone, mac, watch, watch configured to receive entries
//   2    the local node stores recordings (in memory; one 100-byte recording of its own attached)
//   3-4  how the stream is cut: 0 one read; 1 frame by frame; 2 reads of 13 bytes;
//        3 frame by frame with 16 s between reads (keepalives)
//   5-6  the fake peer: phone, mac, watch, phone with no capabilities
//   7    the peer's HELLO vector claims writes of our incarnation we do not hold (rotation)
// The session is ticked after every read, and whenever its deadline is due.
//
// Oracles (besides crashes, traps and ASan): every frame the session sends decodes; nothing is
// sent after it asked to close; at the end, every change the replica would send (the BATCH
// payloads it assembles from its columns) equals the canonical JSON of the stored version and
// is accepted by the wire decoder.
//
// With LIFESYNC_FUZZ_SEEDS=DIR in the environment the binary writes seed inputs (HELLO + BATCH
// sequences, a recording transfer in both directions, built with the real encoder) and exits.
//
// Compiled as one module with all of Sources/LifeSync (see Tests/Fuzz/run.sh); `FuzzMain.swift` calls `fuzzSession`.

import CSQLite
import Glibc

let epoch: Int64 = 1_795_305_600_000

/// Recording bytes in memory (the simulator's MemoryRecordingStorage, without its fault hooks).
final class FuzzStorage: RecordingStorage {
    var files: [String: [UInt8]] = [:]
    var temporary: [String: [UInt8]] = [:]

    func exists(_ fileName: String) -> Bool { files[fileName] != nil }
    func storedFileName(forRecordingID id: String) -> String? { files.keys.sorted().first { $0.hasPrefix(id + ".") } }

    func read(_ fileName: String, offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let file = files[fileName] else { throw RecordingStorageError("no file \(fileName)") }
        let start = Int(min(offset, UInt64(file.count)))
        let piece = file[start..<min(start + buffer.count, file.count)]
        piece.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return piece.count
    }

    func remove(_ fileName: String) throws { files[fileName] = nil }

    func temporarySize(_ id: String) -> UInt64 { UInt64(temporary[id]?.count ?? 0) }

    func readTemporary(_ id: String, offset: UInt64, count: Int) throws -> [UInt8] {
        let file = temporary[id] ?? []
        let start = Int(min(offset, UInt64(file.count)))
        return Array(file[start..<min(start + count, file.count)])
    }

    func writeTemporary(_ id: String, offset: UInt64, bytes: UnsafeRawBufferPointer) throws {
        // A fake disk of 16 MiB: a peer's OFFER may claim gigabytes.
        guard offset <= 1 << 24 else { throw RecordingStorageError("no space left on the device") }
        var file = temporary.removeValue(forKey: id) ?? []
        if file.count > Int(offset) { file.removeSubrange(Int(offset)...) }
        if file.count < Int(offset) { file += [UInt8](repeating: 0, count: Int(offset) - file.count) }
        file += bytes
        temporary[id] = file
    }

    func syncTemporary(_ id: String) throws {}

    func promoteTemporary(_ id: String, to fileName: String) throws {
        guard let file = temporary.removeValue(forKey: id) else { throw RecordingStorageError("no temporary file for \(id)") }
        files[fileName] = file
    }

    func discardTemporary(_ id: String) { temporary[id] = nil }
}

struct Setup {
    var control: UInt8
    var localRole: Role { [Role.phone, .mac, .watch, .watch][Int(control & 3)] }
    var watchReceivesEntries: Bool { control & 3 == 3 }
    var storage: Bool { control & 4 != 0 }
    var cut: Int { Int(control >> 3) & 3 }
    var peerRole: Role { [Role.phone, .mac, .watch, .phone][Int(control >> 5) & 3] }
    var peerCapabilities: Capabilities {
        switch Int(control >> 5) & 3 {
        case 0, 1: return [.receivesEntries, .recordings, .receivesRecordings]
        case 2: return [.recordings]
        default: return []
        }
    }
    var claimsOurHistory: Bool { control & 0x80 != 0 }

    var configuration: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.watchReceivesEntries = watchReceivesEntries
        configuration.transfer.chunkSize = 40
        configuration.transfer.maximumSize = 1 << 24
        return configuration
    }
}

/// Recording signatures the fuzzer can reach (a hash of key and metadata: seeds' metadata is taken,
/// a mutated byte of it refused); the ECDSA verifier is tested apart (two fixed-size inputs).
struct FuzzSignatures: SignatureVerifier, RecordingSigner {
    let publicKey: [UInt8]

    init(publicKey: [UInt8] = []) { self.publicKey = publicKey }

    static func signer(for replica: Replica) -> FuzzSignatures {
        let seed = SHA256.hash(Array(replica.identity.nodeID.utf8)).bytes
        return FuzzSignatures(publicKey: Array((seed + seed + seed).prefix(RecordingSignature.publicKeyLength)))
    }

    func sign(_ message: [UInt8]) -> [UInt8] { SHA256.hash(publicKey + message).bytes + SHA256.hash(message).bytes }

    func isValid(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        signature == FuzzSignatures(publicKey: publicKey).sign(message)
    }
}

/// The local node: two entries of its own and, with storage, one recording.
struct Local {
    let replica: Replica
    let clock: ManualClock
    let storage: FuzzStorage?
    let recording: Recording?
    let recordingBytes: [UInt8]
}

func entryJSON(_ text: String) -> JSONValue {
    .object([("category", .string("note")), ("timestamp", .string("2026-11-22T08:00:00Z")), ("data", .object([("text", .string(text))]))])
}

/// Builds the local node's replica from scratch (what every input starts from).
private func buildLocal(_ setup: Setup, path: String) -> (Replica, Recording?) {
    do {
        let clock = ManualClock(milliseconds: epoch)
        let replica = try Replica.create(path: path, role: setup.localRole, clock: clock, random: SeededRandom(seed: 1))
        _ = try replica.add(json: entryJSON("local one"))
        _ = try replica.add(json: entryJSON("local two"))
        guard setup.storage else { return (replica, nil) }
        let id = Identifier.make(role: setup.localRole, random: SeededRandom(seed: 7))
        let recording = Recording(id: id, fileName: id + ".m4a", size: UInt64(localRecordingBytes.count),
                                  sha256: SHA256.hash(localRecordingBytes), mediaType: "audio/mp4", entryID: nil,
                                  originNode: replica.identity.nodeID, createdAt: replica.now)
        try replica.addRecording(recording, signedBy: FuzzSignatures.signer(for: replica))
        return (replica, recording)
    } catch {
        fatalError("FUZZ harness: cannot set up the local replica: \(error)")
    }
}

private let localRecordingBytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 7) }

/// Creating a replica (schema, two writes) cost ~4 ms of the ~6 ms an input took: each setup's
/// replica is built once in shared memory and copied into a fresh database per input with
/// SQLite's backup API, so every input still starts from the same state and nothing carries over.
private var templates: [Int: (replica: Replica, recording: Recording?)] = [:]
private let workPath = "file:lifesync-fuzz-work?mode=memory&cache=shared"

func makeLocal(_ setup: Setup) -> Local {
    let key = Int(setup.control & 7)
    let template = templates[key] ?? buildLocal(setup, path: "file:lifesync-fuzz-template-\(key)?mode=memory&cache=shared")
    templates[key] = template
    var copy: OpaquePointer?
    guard sqlite3_open_v2(workPath, &copy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nil) == SQLITE_OK, let copy else {
        fatalError("FUZZ harness: cannot open \(workPath)")
    }
    defer { sqlite3_close_v2(copy) }  // the replica's own connection keeps the copy alive
    // The previous input's replica must be gone (else its memory database is still there).
    var statement: OpaquePointer?
    sqlite3_prepare_v2(copy, "SELECT count(*) FROM sqlite_master", -1, &statement, nil)
    guard sqlite3_step(statement) == SQLITE_ROW, sqlite3_column_int(statement, 0) == 0 else {
        fatalError("FUZZ harness: the previous input's replica is still alive")
    }
    sqlite3_finalize(statement)
    guard let backup = sqlite3_backup_init(copy, "main", template.replica.database.handle, "main") else {
        fatalError("FUZZ harness: backup: \(String(cString: sqlite3_errmsg(copy)))")
    }
    let stepped = sqlite3_backup_step(backup, -1)
    guard sqlite3_backup_finish(backup) == SQLITE_OK, stepped == SQLITE_DONE else { fatalError("FUZZ harness: backup step \(stepped)") }
    let clock = ManualClock(milliseconds: epoch)
    do {
        // A seed other than the template's: IDs drawn now (a rotated incarnation) stay new.
        let replica = try Replica(path: workPath, clock: clock, random: SeededRandom(seed: 2))
        replica.signatureVerifier = FuzzSignatures()
        // Its own writes go sealed, as a serving node's do.
        try replica.adoptSigningKey(FuzzSignatures.signer(for: replica))
        guard let recording = template.recording else {
            return Local(replica: replica, clock: clock, storage: nil, recording: nil, recordingBytes: [])
        }
        let storage = FuzzStorage()
        storage.files[recording.fileName] = localRecordingBytes
        return Local(replica: replica, clock: clock, storage: storage, recording: recording, recordingBytes: localRecordingBytes)
    } catch {
        fatalError("FUZZ harness: cannot open the copied replica: \(error)")
    }
}

/// The fake peer's identity, per role: that of a replica created with a fixed seed, so the seed
/// writer can build real batches from that replica.
func peerReplica(_ role: Role, clock: ManualClock = ManualClock(milliseconds: epoch)) -> Replica {
    do {
        return try Replica.create(path: ":memory:", role: role, clock: clock, random: SeededRandom(seed: 99))
    } catch {
        fatalError("FUZZ harness: cannot create the peer replica: \(error)")
    }
}

private let peerIdentities: [ReplicaIdentity] = [Role.phone, .mac, .watch].map { peerReplica($0).identity }

func peerHello(_ setup: Setup, localIncarnation: String) -> Hello {
    let identity = peerIdentities[[Role.phone, .mac, .watch].firstIndex(of: setup.peerRole)!]
    var vector = VersionVector()
    if setup.claimsOurHistory { vector[localIncarnation] = 1000 }
    return Hello(nodeID: identity.nodeID, role: identity.role, incarnation: identity.incarnation,
                 capabilities: setup.peerCapabilities, clock: HLCTimestamp(milliseconds: epoch, counter: 0), vector: vector)
}

/// The stream cut the way the control byte says; frames are found by their length prefix.
private func pieces(_ stream: ArraySlice<UInt8>, cut: Int) -> [ArraySlice<UInt8>] {
    switch cut {
    case 0:
        return [stream]
    case 2:
        return stride(from: stream.startIndex, to: stream.endIndex, by: 13).map { stream[$0..<min($0 + 13, stream.endIndex)] }
    default:
        var result: [ArraySlice<UInt8>] = []
        var i = stream.startIndex
        while stream.endIndex - i >= 4 {
            let length = stream[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard length >= 1, length <= Framing.maximumFrameLength, stream.endIndex - i - 4 >= length else { break }
            result.append(stream[i..<(i + 4 + length)])
            i += 4 + length
        }
        if i < stream.endIndex { result.append(stream[i...]) }
        return result
    }
}

/// Checks what the session asked for: whole frames that decode, nothing after a close.
private final class Driver {
    var closed = false
    var sent = 0

    func check(_ actions: [SessionAction], _ what: @autoclosure () -> String) {
        for action in actions {
            switch action {
            case .send(let bytes):
                if closed { fatalError("FUZZ: the session sends \(bytes.count) bytes after it closed (\(what()))") }
                sent += 1
                var decoder = FrameDecoder()
                do {
                    let frames = try decoder.feed(bytes)
                    guard decoder.bufferedCount == 0 else {
                        fatalError("FUZZ: the session sent \(decoder.bufferedCount) bytes of an unfinished frame (\(what())): \(Hex.encode(bytes.prefix(64)))")
                    }
                    for frame in frames { _ = try Message.decode(type: frame.type, payload: frame.payload) }
                } catch {
                    fatalError("FUZZ: the session sent a frame the decoder refuses: \(error) (\(what())): \(Hex.encode(bytes.prefix(200)))")
                }
            case .close:
                closed = true
            case .event:
                break
            }
        }
    }
}

/// Whatever the replica stored must go out again as its canonical JSON and be accepted by a peer.
private func checkStored(_ replica: Replica) {
    let vector: VersionVector
    do { vector = try replica.replicaVector() } catch { fatalError("FUZZ: replicaVector fails after the session: \(error)") }
    for entry in vector.entries {
        let assembled: [EncodedChange], parsed: [Change]
        do {
            assembled = try replica.encodedChanges(origin: entry.origin, after: 0, limit: .max)
            parsed = try replica.changes(origin: entry.origin, after: 0, limit: .max)
        } catch {
            fatalError("FUZZ: reading the log of \(entry.origin) fails after the session: \(error)")
        }
        guard assembled.count == parsed.count else {
            fatalError("FUZZ: encodedChanges gives \(assembled.count) changes of \(entry.origin), changes \(parsed.count)")
        }
        for (a, p) in zip(assembled, parsed) {
            guard a.id == p.id, a.kind == p.kind, a.stamp == p.stamp else {
                fatalError("FUZZ: encodedChanges and changes disagree on a change of \(entry.origin): \(a.id) \(a.stamp) vs \(p.id) \(p.stamp)")
            }
            guard a.payload == p.encoded.payload else {
                fatalError("FUZZ: the BATCH payload assembled from the columns differs from the canonical JSON of \(a.id)\n  assembled: \(String(decoding: a.payload.prefix(600), as: UTF8.self))\n  canonical: \(String(decoding: p.encoded.payload.prefix(600), as: UTF8.self))")
            }
        }
        guard !assembled.isEmpty else { continue }
        let frame = Message.encodedBatch(id: 1, origins: [], changes: assembled, through: VersionVector([(entry.origin, entry.sequence)]))
        var decoder = FrameDecoder()
        do {
            for f in try decoder.feed(frame) { _ = try Message.decode(type: f.type, payload: f.payload) }
        } catch {
            fatalError("FUZZ: a BATCH of the stored changes of \(entry.origin) is refused by the decoder: \(error)")
        }
    }
}

/// `LIFESYNC_FUZZ_SKIP=dup-seq`: reads go frame by frame, and an input is abandoned as soon as
/// the replica holds two records with one (origin, seq) in different tables (a known crash:
/// `DeltaSync.sent` traps when it sends them), so that the fuzzer can look for other ones.
private let skipDuplicateSequences = getenv("LIFESYNC_FUZZ_SKIP").map { String(cString: $0).contains("dup-seq") } ?? false

private func hasDuplicateSequence(_ replica: Replica) -> Bool {
    let sql = """
        SELECT 1 FROM (SELECT origin_no, origin_seq FROM entries UNION ALL SELECT origin_no, origin_seq FROM tombstones
                       UNION ALL SELECT origin_no, origin_seq FROM recordings)
        GROUP BY origin_no, origin_seq HAVING count(*) > 1 LIMIT 1
        """
    return ((try? replica.database.firstRow(sql, [], { _ in true })) ?? nil) ?? false
}

func runSession(control: UInt8, stream: ArraySlice<UInt8>) {
    var setup = Setup(control: control)
    if skipDuplicateSequences && setup.cut != 3 { setup.control = setup.control & ~0x18 | 0x08 }
    let local = makeLocal(setup)
    // The fake peer is paired: its key is trusted as the node its HELLO names, so every input
    // also meets the trust check (a mutated HELLO naming another node is refused).
    let identity = peerIdentities[[Role.phone, .mac, .watch].firstIndex(of: setup.peerRole)!]
    let credential = PeerCredential.trusted(TrustedPeer(nodeID: identity.nodeID, role: identity.role,
                                                        fingerprint: SHA256.hash(Array(identity.nodeID.utf8)),
                                                        trustedAt: Timestamp(millisecondsSince1970: epoch)))
    let session = SyncSession(replica: local.replica, configuration: setup.configuration, now: 0, storage: local.storage,
                              credential: credential)
    let driver = Driver()
    var now: Int64 = 0
    func advance(_ ms: Int64) {
        now += ms
        local.clock.advance(by: ms)
    }
    func tickWhileDue() {
        for _ in 0..<8 {
            guard let due = session.nextDeadline, due <= now else { return }
            driver.check(session.tick(now: now), "tick at \(now)")
        }
    }
    driver.check(session.start(now: now), "start")
    if FuzzTarget.chosen != .sessionWithoutHello {
        advance(1)
        driver.check(session.receive(Message.hello(peerHello(setup, localIncarnation: local.replica.identity.incarnation)).encoded(), now: now), "the peer's HELLO")
        tickWhileDue()
    }
    let step: Int64 = setup.cut == 3 ? 16_000 : 1
    for (n, piece) in pieces(stream, cut: setup.cut).enumerated() {
        advance(step)
        driver.check(session.receive(piece, now: now), "read \(n)")
        if skipDuplicateSequences && hasDuplicateSequence(local.replica) { return }
        advance(1)
        driver.check(session.tick(now: now), "tick after read \(n)")
        tickWhileDue()
    }
    driver.check(session.replicaChanged(now: now), "replicaChanged")
    driver.check(session.requestResync(now: now), "requestResync")
    _ = session.pendingChangeCount()
    _ = session.pendingRecordingCount()
    session.forgetFailedRecordings()
    advance(11_000)
    driver.check(session.tick(now: now), "tick after 11 s")  // retried recordings
    advance(50_000)
    driver.check(session.tick(now: now), "tick after 50 s")  // idle or handshake timeout
    session.transportClosed()
    userActions(local)
    checkStored(local.replica)
}

/// What the user does next with whatever the peer delivered: reads, stats, search, and local
/// writes over the peer's versions (their stamps, vectors and clocks). Errors are fine; a trap
/// means a peer can make the node crash later.
private func userActions(_ local: Local) {
    let replica = local.replica
    local.clock.advance(by: 1)
    _ = try? replica.stats()
    _ = try? replica.entries(matching: EntryQuery(search: "morning"))
    _ = try? replica.entries(matching: EntryQuery(since: Timestamp(millisecondsSince1970: 0), tag: "home"))
    _ = try? replica.conflicts()
    _ = try? replica.recordingStatuses()
    _ = try? replica.peers()
    _ = try? replica.canonicalDump()
    _ = try? replica.add(json: entryJSON("after the session"))
    let entries = (try? replica.allEntries()) ?? []
    for (n, entry) in entries.prefix(6).enumerated() {
        if n % 3 == 2 {
            try? replica.delete(id: entry.id)
        } else {
            _ = try? replica.update(id: entry.id, patch: .object([("category", .string("edited"))]))
        }
    }
    if let storage = local.storage, let status = ((try? replica.recordingStatuses()) ?? []).first(where: { !$0.deleted }) {
        try? replica.deleteRecording(id: status.recording.id, from: storage)
    }
}

func fuzzSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    runSession(control: input[0], stream: Array(input[1...])[...])
    return 0
}
