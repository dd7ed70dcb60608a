// Seed inputs for the `session` targets (see SessionFuzz.swift): HELLO + BATCH sequences and
// recording transfers in both directions, built with the real encoder, written when the binary
// runs with LIFESYNC_FUZZ_SEEDS=DIR.

import CSQLite
import Glibc

// MARK: - Seeds

private func write(_ directory: String, _ name: String, _ bytes: [UInt8]) {
    guard let file = fopen(directory + "/" + name, "wb") else { fatalError("cannot write \(directory)/\(name)") }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

private func frames(of batches: [(changes: [EncodedChange], through: VersionVector)], from peer: Replica, firstID: UInt64 = 1) -> [UInt8] {
    let origins = ((try? peer.knownOrigins()) ?? []).compactMap { known -> OriginInfo? in
        guard let nodeID = known.nodeID, let role = known.role else { return nil }
        return OriginInfo(origin: known.origin, nodeID: nodeID, role: role)
    }
    var out: [UInt8] = []
    for (i, batch) in batches.enumerated() {
        // Sealed by the peer (PROTOCOL.md §5.2.5), so inputs reach the merge, not only the refusal.
        let seals = (try? Seal.sealing(batch.changes, as: peer.identity.nodeID, signer: FuzzSignatures.signer(for: peer))) ?? []
        out += Message.encodedBatch(id: firstID + UInt64(i), origins: origins, changes: batch.changes, through: batch.through, seals: seals)
    }
    return out
}

/// Writes seed inputs for the session targets (and, control byte and all, for `frame`).
func writeSeeds(to directory: String) throws {
    var count = 0
    func seed(_ name: String, _ setup: Setup, _ local: Local, _ stream: [UInt8], hello: Bool) {
        let prefix = hello ? Message.hello(peerHello(setup, localIncarnation: local.replica.identity.incarnation)).encoded() : []
        write(directory, "gen-\(name)-\(String(setup.control, radix: 16))\(hello ? "-hello" : "")", [setup.control] + prefix + stream)
        count += 1
    }
    for control: UInt8 in [0x0C, 0x0D, 0x0A, 0x2C, 0x4C, 0x0F, 0x1C, 0x6C, 0x18, 0x8C] {
        let setup = Setup(control: control)
        let local = makeLocal(setup)
        let clock = ManualClock(milliseconds: epoch + 5_000)
        let peer = peerReplica(setup.peerRole, clock: clock)
        // Entries: new, updated, deleted; a recording with its bytes.
        let a = try peer.add(json: entryJSON("peer one"))
        let b = try peer.add(json: .object([("category", .string("mood")), ("timestamp", .string("2026-11-22T07:00:00.125+02:00")),
                                            ("data", .object([("text", .string("Caf\u{e9} \"quoted\"\n\u{1}")),
                                                              ("metric", .object([("name", .string("mood")), ("value", .number(7)),
                                                                                  ("scale_min", .number(1)), ("scale_max", .number(10))])),
                                                              ("location", .object([("latitude", .number(52.52)), ("longitude", .number(13.405)),
                                                                                    ("accuracy", .number(12.5))])),
                                                              ("tags", .array([.string("morning"), .string("home")]))]))]))
        clock.advance(by: 10)
        _ = try peer.update(id: a.id, patch: .object([("data", .object([("text", .string("peer one, edited"))]))]))
        try peer.delete(id: b.id)
        let bytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        let recordingID = Identifier.make(role: setup.peerRole, random: SeededRandom(seed: 8))
        let recording = Recording(id: recordingID, fileName: recordingID + ".m4a", size: 100, sha256: SHA256.hash(bytes),
                                  mediaType: "audio/mp4", entryID: a.id, originNode: peer.identity.nodeID, createdAt: peer.now)
        try peer.addRecording(recording, signedBy: FuzzSignatures.signer(for: peer))
        let vector = try peer.replicaVector()
        let changes = try peer.encodedChanges(origin: peer.identity.incarnation, after: 0, limit: .max)
        let batch = frames(of: [(changes, vector)], from: peer)
        let split = frames(of: [(Array(changes.prefix(2)), VersionVector([(peer.identity.incarnation, changes[1].stamp.sequence)])),
                                (Array(changes.dropFirst(2)), vector)], from: peer)
        let tail = Message.caughtUp(vector: vector).encoded() + Message.ack(Ack(batchID: 1, applied: 2, conflicts: 0)).encoded()
            + Message.ping(nonce: 15_000).encoded() + Message.pong(nonce: 0).encoded()
        // The peer's recording, offered and sent in chunks of 40 with running digests.
        let hasher = SHA256()
        var transfer = Message.offer(Offer(recordingID: recordingID, fileName: recording.fileName, mediaType: "audio/mp4", size: 100,
                                           chunkSize: 40, sha256: SHA256.hash(bytes))).encoded()
        for start in stride(from: 0, to: 100, by: 40) {
            let piece = Array(bytes[start..<min(start + 40, 100)])
            hasher.update(piece)
            transfer += Message.chunk(Chunk(recordingID: recordingID, offset: UInt64(start), sha256: hasher.digestSoFar(), data: piece)).encoded()
        }
        // Our own recording (offered once our batch is acknowledged), accepted, acknowledged and
        // confirmed by the peer.
        var answers: [UInt8] = []
        if let mine = local.recording {
            for offset: UInt64 in [0, 40, 80, 100] { answers += Message.accept(recordingID: mine.id, offset: offset).encoded() }
            answers += Message.confirm(recordingID: mine.id, sha256: SHA256.hash(local.recordingBytes)).encoded()
        }
        let refusal = local.recording.map {
            Message.accept(recordingID: $0.id, offset: 0).encoded()
                + Message.failure(recordingID: $0.id, code: TransferFailure.deleted.rawValue, message: "deleted").encoded()
        } ?? []
        // A peer that writes under our own incarnation (a copied replica file, or a forger): the
        // same numbers as our two writes with other content, and numbers beyond ours.
        let forger = try Replica.create(path: ":memory:", role: setup.localRole, clock: ManualClock(milliseconds: epoch + 7_000),
                                        random: SeededRandom(seed: 1))
        for text in ["forged one", "forged two", "forged three"] { _ = try forger.add(json: entryJSON(text)) }
        let forged = frames(of: [(try forger.encodedChanges(origin: forger.identity.incarnation, after: 0, limit: .max),
                                  try forger.replicaVector())], from: forger)
        // A peer whose clock is at the HLC ceiling: its versions leave no room above them.
        let ceiling = ManualClock(milliseconds: (1 << 46) - 1)
        let future = peerReplica(setup.peerRole, clock: ceiling)
        let late = try future.add(json: entryJSON("from the end of time"))
        for n in 0..<3 { _ = try future.update(id: late.id, patch: .object([("category", .string("c\(n)"))])) }
        let futureBatch = frames(of: [(try future.encodedChanges(origin: future.identity.incarnation, after: 0, limit: .max),
                                       try future.replicaVector())], from: future)
        let resync = Message.syncRequest(vector: VersionVector()).encoded() + Message.ack(Ack(batchID: 2, applied: 0, conflicts: 0)).encoded()
        let bye = Message.error(code: ErrorCode.shuttingDown.rawValue, message: "bye").encoded()
        for hello in [false, true] {
            seed("batch", setup, local, batch + tail, hello: hello)
            seed("batches", setup, local, split + tail + resync, hello: hello)
            seed("transfer-in", setup, local, batch + transfer + tail, hello: hello)
            seed("transfer-out", setup, local, tail + answers, hello: hello)
            seed("refusal", setup, local, tail + refusal + bye, hello: hello)
            seed("forged", setup, local, forged + tail, hello: hello)
            seed("ceiling", setup, local, futureBatch + tail, hello: hello)
        }
    }
    print("wrote \(count) generated seeds to \(directory)")
}
