/// Where a node keeps recording bytes. The core never touches files itself: the daemon passes
/// a folder on disk (`FileRecordingStorage`), the simulator an in-memory one with injected
/// faults. Names are always checked `{id}.{ext}` before they get here.
///
/// Permanent files are only ever written whole (a verified temporary file renamed into place),
/// so no partial file is ever visible; `remove` is called only for an explicit user delete and,
/// on a watch, after a phone confirmed the recording.
public protocol RecordingStorage: AnyObject {
    func exists(_ fileName: String) -> Bool
    /// The permanent file of recording `id` whatever its extension, if there is one: for a delete
    /// of a recording whose metadata this replica never had (put back from an older copy, it
    /// forgot the file its folder kept).
    func storedFileName(forRecordingID id: String) -> String?
    /// Fills `buffer` from a permanent file at `offset`; returns the bytes read (fewer only at
    /// the file's end). Reads into the caller's buffer so a chunk lands in its frame directly.
    func read(_ fileName: String, offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    func remove(_ fileName: String) throws
    /// Bytes in the temporary file of an incoming recording (0 when there is none).
    func temporarySize(_ id: String) -> UInt64
    func readTemporary(_ id: String, offset: UInt64, count: Int) throws -> [UInt8]
    /// Writes at `offset`, dropping anything the file held beyond it.
    func writeTemporary(_ id: String, offset: UInt64, bytes: UnsafeRawBufferPointer) throws
    /// Flushes the temporary file to stable storage.
    func syncTemporary(_ id: String) throws
    /// Moves the verified temporary file into permanent storage under `fileName`, atomically.
    func promoteTemporary(_ id: String, to fileName: String) throws
    func discardTemporary(_ id: String)
    /// Where an incoming transfer's chunks are checked and written (`IncomingFileWriter`):
    /// `hasher` holds the running hash of the `offset` bytes the file already has.
    func incomingWriter(for id: String, hashedUpTo offset: UInt64, hasher: SHA256) -> IncomingFileWriter
    /// The running digests of permanent file `fileName` at the end of each `chunkSize` chunk,
    /// if storage kept them when the file came in (nil: not kept, or for another chunk size).
    /// A cache that spares a sender one hash pass over every file it sends; see
    /// `OutgoingTransfer.digests` for what it checks before use.
    func chunkDigests(_ fileName: String, chunkSize: UInt32) -> [SHA256.Digest]?
    /// Drops the kept digests of `fileName` (a receiver found a chunk that did not match them).
    func forgetChunkDigests(_ fileName: String)
}

extension RecordingStorage {
    public func chunkDigests(_ fileName: String, chunkSize: UInt32) -> [SHA256.Digest]? { nil }
    public func forgetChunkDigests(_ fileName: String) {}

    public func writeTemporary(_ id: String, offset: UInt64, bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try writeTemporary(id, offset: offset, bytes: $0) }
    }
}

/// Transfer tunables (PROTOCOL.md §5.9–5.13). Sizes in bytes.
package struct TransferConfiguration: Sendable {
    package var chunkSize: UInt32 = 1 << 20
    /// Chunks sent ahead of the receiver's last acknowledgement.
    package var window = 4
    /// Offers above this are refused with a FAILURE, nothing written.
    package var maximumSize: UInt64 = 4 << 30
    /// On a watch: keep the local copy after a phone confirmed it (default: remove it).
    package var keepRecordings = false
    /// After a failed transfer (a corrupt chunk, a full disk), offer it again after this long, ms.
    package var retryDelay: Int64 = 10_000
    /// A transfer the receiver has not moved on (no ACCEPT) for this long, ms, is given up and
    /// offered again after `retryDelay`: a receiver that lost track of it (or never meant to
    /// take it) must not hold the one outgoing transfer of a session for ever.
    package var stallTimeout: Int64 = 60_000

    package init() {}
}

/// FAILURE codes of the transfer messages.
package enum TransferFailure: UInt16, Sendable {
    case tooLarge = 1
    case badName = 2
    case corruptChunk = 3
    case checksumMismatch = 4
    case storageFailure = 5
    case outOfOrder = 6
    /// Another peer is sending the same recording right now: offer it again later.
    case notAccepted = 7
    /// The user deleted the recording here: the sender stops offering it (it removes nothing
    /// on this word; only a replicated tombstone removes a copy).
    case deleted = 8
    /// The receiver holds no metadata for the recording yet (it travels in a BATCH first).
    case unknownRecording = 9
    /// The OFFER's size, hash or file name differ from the recording's replicated metadata.
    case metadataMismatch = 10

    /// The name PROTOCOL.md §5.9 gives the code (`checksum_mismatch`): what logs and the test
    /// vectors show, so a FAILURE reads the same everywhere.
    package var wireName: String {
        switch self {
        case .tooLarge: return "too_large"
        case .badName: return "bad_name"
        case .corruptChunk: return "corrupt_chunk"
        case .checksumMismatch: return "checksum_mismatch"
        case .storageFailure: return "storage_failure"
        case .outOfOrder: return "out_of_order"
        case .notAccepted: return "not_accepted"
        case .deleted: return "deleted"
        case .unknownRecording: return "unknown_recording"
        case .metadataMismatch: return "metadata_mismatch"
        }
    }

    /// The code's name for logs; unknown codes by number.
    package static func name(_ code: UInt16) -> String {
        TransferFailure(rawValue: code)?.wireName ?? "code \(code)"
    }
}

/// A storage failure in words.
public struct RecordingStorageError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
