/// `GET /metrics`: the node in the Prometheus text format. Like `/api/*` it needs the bearer
/// key (a scraper sets `authorization: {credentials: …}`): counts and peer IDs are the user's.
import LifeSync
import LifeSyncHTTP

extension LifeLogAPI {
    func metricsText() throws -> HTTPResponse {
        var out = PrometheusText()
        out.family("lifesync_entries", .gauge, help: "Live entries in the replica.")
        out.sample("lifesync_entries", UInt64(try replica.liveEntryCount()))
        out.family("lifesync_tombstones", .gauge, help: "Deleted entries kept as tombstones so the delete replicates.")
        out.sample("lifesync_tombstones", UInt64(try replica.tombstoneCount()))
        out.family("lifesync_conflicts", .gauge, help: "Losing concurrent versions kept in the conflicts table.")
        out.sample("lifesync_conflicts", UInt64(try replica.conflictCount()))
        out.family("lifesync_recordings", .gauge, help: "Recordings not deleted.")
        out.sample("lifesync_recordings", UInt64(try replica.recordingCount()))
        if let node {
            let peers = node.peerStatuses
            out.family("lifesync_peers_connected", .gauge, help: "Peers with an open sync session.")
            out.sample("lifesync_peers_connected", UInt64(peers.filter { $0.state != .disconnected && $0.state != .connecting }.count))
            out.family("lifesync_pending_changes", .gauge, help: "Changes this node holds that a connected peer is not known to have.")
            for peer in peers { out.sample("lifesync_pending_changes", UInt64(max(0, peer.pending)), labels: [("peer", peer.nodeID)]) }
        }
        if let metrics = metrics?() {
            let directions = NodeMetrics.Direction.allCases
            func perDirection(_ name: String, help: String, _ value: (NodeMetrics.Traffic) -> UInt64) {
                out.family(name, .counter, help: help)
                for direction in directions { out.sample(name, value(metrics[direction]), labels: [("direction", direction.rawValue)]) }
            }
            perDirection("lifesync_sync_bytes_total", help: "Sync protocol bytes on peer connections.") { $0.bytes }
            perDirection("lifesync_batches_total", help: "Batches of changes committed (in) or sent (out).") { $0.batches }
            perDirection("lifesync_changes_total", help: "Changes in those batches.") { $0.changes }
            perDirection("lifesync_recording_transfer_bytes_total", help: "Recording bytes moved to (out) or from (in) peers.") { $0.recordingBytes }
            perDirection("lifesync_recordings_transferred_total", help: "Recordings received and verified (in) or confirmed by a peer (out).") { $0.recordings }
            out.family("lifesync_changes_applied_total", .counter, help: "Received changes that became the local version.")
            out.sample("lifesync_changes_applied_total", metrics.changesApplied)
            out.family("lifesync_conflicts_detected_total", .counter, help: "Concurrent versions that lost a merge on this node.")
            out.sample("lifesync_conflicts_detected_total", metrics.conflictsDetected)
            out.family("lifesync_changes_received_again_total", .counter, help: "Received changes this node held already (copies beyond the first).")
            out.sample("lifesync_changes_received_again_total", metrics.copies.again)
            out.family("lifesync_changes_received_beyond_twice_total", .counter, help: "Of those, copies beyond the second of one change.")
            out.sample("lifesync_changes_received_beyond_twice_total", metrics.copies.beyondSecond)
            out.family("lifesync_change_copies_max", .gauge, help: "The most copies of one change this node received (1 until one comes twice).")
            out.sample("lifesync_change_copies_max", metrics.copies.mostCopies)
            out.family("lifesync_peer_connections_total", .counter, help: "Sync sessions opened with peers.")
            out.sample("lifesync_peer_connections_total", metrics.peerConnections)
            out.family("lifesync_transfer_failures_total", .counter, help: "Recording transfers that failed (they are retried).")
            out.sample("lifesync_transfer_failures_total", metrics.transferFailures)
            out.histogram("lifesync_apply_seconds", help: "Time to apply received bytes that committed a batch.", metrics.applySeconds)
        }
        var response = HTTPResponse(status: 200, body: Array(out.text.utf8))
        response.headers.set("Content-Type", PrometheusText.contentType)
        return response
    }
}
