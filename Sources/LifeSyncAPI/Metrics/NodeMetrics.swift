/// What a running node counts for `GET /metrics`: sync traffic by direction, batches, changes,
/// conflicts, recording bytes, and how long applying a received batch took. One place counts:
/// `record(_:)` reads the node's actions (frames sent, session and node events) as the runtime
/// carries them out; the runtime adds only what no action shows (bytes read, time spent).
/// Gauges (entries, peers, pending changes) are read from the replica and node when scraped.
import LifeSync

package struct NodeMetrics: Equatable, Sendable {
    package enum Direction: String, Sendable, CaseIterable { case `in`, out }

    package struct Traffic: Equatable, Sendable {
        /// Sync protocol bytes on peer connections (TLS payload, frames included).
        package var bytes: UInt64 = 0
        /// Batches with changes: committed (in) or sent (out).
        package var batches: UInt64 = 0
        /// Changes in those batches.
        package var changes: UInt64 = 0
        /// Recording bytes moved (chunks the receiver took or acknowledged).
        package var recordingBytes: UInt64 = 0
        /// Recordings completed: received and verified (in), confirmed by a peer (out).
        package var recordings: UInt64 = 0
    }

    package private(set) var traffic: [Direction: Traffic] = [.in: Traffic(), .out: Traffic()]
    /// Received changes whose content became the local version.
    package private(set) var changesApplied: UInt64 = 0
    /// Concurrent versions that lost a merge here (each kept in the conflicts table).
    package private(set) var conflictsDetected: UInt64 = 0
    /// Received changes this node held already, and the most copies of one change.
    package private(set) var copies = CopyCount()
    package private(set) var peerConnections: UInt64 = 0
    package private(set) var transferFailures: UInt64 = 0
    /// Seconds to process received bytes that committed at least one batch.
    package private(set) var applySeconds = Histogram(bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
    /// Progress last seen per transfer, so cumulative progress events count as deltas.
    private var transferDone: [TransferKey: UInt64] = [:]
    /// Transfers tracked at once; past it the table starts over (a few deltas are then lost,
    /// never counted twice): one per open connection and direction is the usual need.
    static let maximumTracked = 1_024

    private struct TransferKey: Hashable, Sendable {
        var connection: Int
        var id: String
        var sending: Bool
    }

    package init() {}

    package subscript(direction: Direction) -> Traffic { traffic[direction]! }

    /// Bytes read from peer connections.
    package mutating func received(bytes: Int) {
        precondition(bytes >= 0, "a read returns a count")
        traffic[.in]!.bytes &+= UInt64(bytes)
    }

    /// How long the core took over bytes that committed a batch.
    package mutating func observeApply(seconds: Double) { applySeconds.observe(max(0, seconds)) }

    /// Counts what `action` shows.
    package mutating func record(_ action: NodeAction) {
        switch action {
        case .send(_, let bytes):
            traffic[.out]!.bytes &+= UInt64(bytes.count)
        case .event(.peerConnected):
            peerConnections &+= 1
        case .event(.transferFailed):
            transferFailures &+= 1
        case .sessionEvent(let connection, let event):
            record(event, connection: connection)
        case .connect, .close, .event, .replicaChanged:
            break
        }
    }

    private mutating func record(_ event: SessionEvent, connection: Int) {
        switch event {
        case .applied(_, let changes, let outcome):
            traffic[.in]!.batches &+= 1
            traffic[.in]!.changes &+= UInt64(max(0, changes))
            changesApplied &+= UInt64(max(0, outcome.applied))
            conflictsDetected &+= UInt64(max(0, outcome.conflicts + outcome.clashes))
            copies.record(heldAlready: outcome.heldAlready)
        case .sent(_, let changes):
            traffic[.out]!.batches &+= 1
            traffic[.out]!.changes &+= UInt64(max(0, changes))
        case .recordingResumed(let id, let offset):
            track(TransferKey(connection: connection, id: id, sending: false), baseline: offset)
        case .recordingProgress(let id, let done, _, let sending):
            let key = TransferKey(connection: connection, id: id, sending: sending)
            guard let last = transferDone[key] else {
                // A sender's first report is the receiver's starting offset: nothing sent yet.
                // A receiver's first is after its first chunk (a resume set a baseline above).
                if !sending { traffic[.in]!.recordingBytes &+= done }
                track(key, baseline: done)
                return
            }
            if done > last { traffic[sending ? .out : .in]!.recordingBytes &+= done - last }
            transferDone[key] = done
        case .recordingReceived(let id, _):
            traffic[.in]!.recordings &+= 1
            transferDone[TransferKey(connection: connection, id: id, sending: false)] = nil
        case .recordingConfirmed(let id):
            traffic[.out]!.recordings &+= 1
            transferDone[TransferKey(connection: connection, id: id, sending: true)] = nil
        case .recordingFailed(let id, _, let sending):
            transferDone[TransferKey(connection: connection, id: id, sending: sending)] = nil
        default:
            break
        }
    }

    private mutating func track(_ key: TransferKey, baseline: UInt64) {
        if transferDone[key] == nil && transferDone.count >= Self.maximumTracked { transferDone.removeAll() }
        transferDone[key] = baseline
    }

    /// Whether `actions` committed a received batch (what `observeApply` times).
    package static func appliedBatch(_ actions: [NodeAction]) -> Bool {
        actions.contains { if case .sessionEvent(_, .applied) = $0 { return true } else { return false } }
    }
}
