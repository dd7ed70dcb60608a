import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

// Recording transfer as a state machine (PROTOCOL.md §5.9–5.13, LifeAdmin §1.1, §2.1, §3.1–3.3):
// two sessions with in-memory recording storage, joined frame by frame in memory, so a test can
// look between any two frames, alter a frame in transit, or cut the connection.

// MARK: - Fixtures

/// One node for these tests: an in-memory replica and its in-memory recording storage.
struct TestNode {
    let replica: Replica
    let storage = MemoryRecordingStorage()
    /// Shared by all of this node's sessions, as `NodeCore` shares it.
    let incomingTransfers = IncomingTransfers()
    var configuration: SessionConfiguration

    init(_ role: Role, seed: UInt64, _ configure: (inout SessionConfiguration) -> Void = { _ in }) throws {
        replica = try ReplicaFixtures.replica(role: role, seed: seed)
        var configuration = SessionConfiguration()
        configuration.transfer.chunkSize = RecordingTransferTests.chunk
        configure(&configuration)
        self.configuration = configuration
    }

    func session(now: Int64 = 0) -> SyncSession {
        SyncSession(replica: replica, configuration: configuration, now: now, storage: storage, incomingTransfers: incomingTransfers)
    }

    /// Registers a recording as `attach` does: bytes into storage, metadata (with their real
    /// SHA-256 unless `sha256` says otherwise) into the replica.
    @discardableResult
    func attach(_ bytes: [UInt8], seed: UInt64, sha256: SHA256.Digest? = nil) throws -> Recording {
        let id = Identifier.make(role: replica.identity.role, random: SeededRandom(seed: seed))
        let recording = Recording(id: id, fileName: id + ".m4a", size: UInt64(bytes.count), sha256: sha256 ?? SHA256.hash(bytes),
                                  mediaType: "audio/mp4", entryID: nil, originNode: replica.identity.nodeID, createdAt: replica.now)
        storage.put(recording.fileName, bytes)
        try replica.addRecording(recording, signedBy: TestKeys.key(for: replica.identity.nodeID))
        return try replica.recording(id: id)!.recording  // as stored: signed
    }
}

/// Runs `link` until quiet; while `storage` (with `defersChecks`) holds chunks it has not
/// checked, checks one and ticks `side`, as a node's loop does when a verdict wakes it, and runs
/// again. Without deferred checks, one `run`. False as `run`, or when the rounds ran out.
@discardableResult
func runJudgingLater(_ link: SessionPair, _ storage: MemoryRecordingStorage, side: SessionPair.Side = .b) -> Bool {
    for _ in 0..<100_000 {
        guard link.run() else { return false }
        guard storage.pendingChecks > 0 else { return true }
        storage.judgePendingChunks(1)
        link.enqueue(link.session(side).tick(now: link.now), from: side)
    }
    return false
}

/// `count` pseudo-random bytes from `seed`.
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    let random = SeededRandom(seed: seed)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        var value = random.nextUInt64()
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: value))
            value >>= 8
        }
    }
    return Array(bytes.prefix(count))
}

/// LifeAdmin §2.1: the only automatic removal is a watch's own recording after a phone proved by
/// checksum that it holds it. Every removal in `node`'s storage must be one of those.
func expectOnlyConfirmedWatchCopiesRemoved(_ node: TestNode, sourceLocation: SourceLocation = #_sourceLocation) throws {
    for fileName in node.storage.removals {
        #expect(node.replica.identity.role == .watch, "a \(node.replica.identity.role) removed \(fileName)", sourceLocation: sourceLocation)
        let id = String(fileName.prefix { $0 != "." })
        let known = try node.replica.recording(id: id)
        #expect(known?.recording.fileName == fileName, "removed \(fileName), which is no recording's file", sourceLocation: sourceLocation)
        #expect(known?.recording.originNode == node.replica.identity.nodeID, "removed \(fileName), not its own recording",
                sourceLocation: sourceLocation)
        let confirmations = try node.replica.confirmations(id: id)
        #expect(confirmations.contains { $0.role == .phone && $0.sha256 == known?.recording.sha256 },
                "removed \(fileName) without a phone's matching confirmation: \(confirmations)", sourceLocation: sourceLocation)
    }
    #expect(Set(node.storage.removals).count == node.storage.removals.count, "a file removed twice: \(node.storage.removals)",
            sourceLocation: sourceLocation)
}

/// The sender still holds the recording, unconfirmed, offered again later (LifeAdmin §1.1 step 9).
func expectStillPending(_ node: TestNode, _ recording: Recording, bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    expectStored(node, recording.fileName, bytes, sourceLocation: sourceLocation)
    #expect(!node.storage.removals.contains(recording.fileName), sourceLocation: sourceLocation)
    #expect(try node.replica.confirmations(id: recording.id).isEmpty, sourceLocation: sourceLocation)
    #expect(try node.replica.recordingFile(id: recording.id)?.state == .present, sourceLocation: sourceLocation)
    let status = try node.replica.recordingStatuses().first { $0.recording.id == recording.id }
    #expect(status?.state == "pending", "state \(status?.state ?? "none")", sourceLocation: sourceLocation)
}

/// `node` stores exactly `bytes` as `fileName` (reported by size and hash, not byte by byte).
func expectStored(_ node: TestNode, _ fileName: String, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    guard let stored = node.storage.files[fileName] else {
        Issue.record("\(node.replica.identity.role) does not store \(fileName)", sourceLocation: sourceLocation)
        return
    }
    let identical = stored == bytes
    #expect(identical, "\(node.replica.identity.role) stores \(stored.count) bytes (SHA-256 \(SHA256.hash(stored).hex)), expected \(bytes.count) (\(SHA256.hash(bytes).hex))",
            sourceLocation: sourceLocation)
}

/// The receiver wrote nothing of the recording anywhere.
func expectNothingWritten(_ node: TestNode, _ recording: Recording, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(node.storage.files.isEmpty, "files: \(node.storage.files.keys.sorted())", sourceLocation: sourceLocation)
    #expect(node.storage.temporary[recording.id] == nil, "a temporary file was left", sourceLocation: sourceLocation)
    #expect(node.storage.temporary.isEmpty, sourceLocation: sourceLocation)
}

func expectFailure(_ link: SessionPair, from side: SessionPair.Side, _ id: String, _ code: TransferFailure,
                           sourceLocation: SourceLocation = #_sourceLocation) {
    let failures = link.failures(from: side)
    #expect(failures.map(\.id) == [id] && failures.map(\.code) == [code.rawValue],
            "expected one FAILURE(\(code)) for \(id), got \(failures)", sourceLocation: sourceLocation)
}
