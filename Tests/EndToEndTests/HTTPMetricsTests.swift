import Foundation
import Testing
import TestSupport

/// `GET /metrics` of a real `lifesync serve --http` with a peer, read by curl.
@Suite(.serialized) struct HTTPMetricsTests {
    @Test(.timeLimit(.minutes(3)))
    func metricsCountSyncTrafficAndFollowTheFormat() throws {
        let api = try HTTPNode(listen: true)
        #expect(try api.anonymous.request("GET", "/metrics").status == 401, "metrics need the bearer key")
        let mac = try api.group.node("mac", role: "mac")
        try mac.start(peers: [api.node.address], listen: false)
        let added = try LifeSyncBinary.run(["add", "--db", mac.db, "--text", "from the mac", "--metric", "mood=6"])
        #expect(added.status == 0, "\(added.stderr)")

        var last = PrometheusCheck.check("")
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            last.samples.first { $0.name == name && $0.labels == labels }?.value
        }
        let counted = try eventually(timeout: 15, interval: 0.2) {
            let scraped = try api.curl.request("GET", "/metrics")
            guard scraped.status == 200 else { return false }
            #expect(scraped.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            last = PrometheusCheck.check(scraped.body)
            return (value("lifesync_batches_total", ["direction": "in"]) ?? 0) >= 1 && value("lifesync_entries") == 1
        }
        #expect(counted, "the mac's batch never showed in the metrics: \(last.samples)\nlog:\n\(api.node.allOutput)")
        #expect(last.problems == [])
        #expect((value("lifesync_changes_applied_total") ?? 0) >= 1)
        #expect((value("lifesync_sync_bytes_total", ["direction": "in"]) ?? 0) > 0 && (value("lifesync_sync_bytes_total", ["direction": "out"]) ?? 0) > 0)
        #expect(value("lifesync_peers_connected") == 1)
        #expect((value("lifesync_apply_seconds_count") ?? 0) >= 1 && value("lifesync_apply_seconds_bucket", ["le": "+Inf"]) == value("lifesync_apply_seconds_count"))
        #expect(last.samples.contains { $0.name == "lifesync_pending_changes" && $0.labels["peer"]?.hasPrefix("mac_") == true })
    }
}
