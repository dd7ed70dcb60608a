@testable import LifeSync
import LifeSyncAPI
import LifeSyncHTTP
import TestSupport
import Testing

@Suite struct MetricsExpositionTests {
    /// A node that has counted some traffic: a committed batch with a conflict, frames sent,
    /// a recording received in two chunks after a resume.
    static func counted() -> NodeMetrics {
        var metrics = NodeMetrics()
        var outcome = ApplyOutcome()
        outcome.applied = 3
        outcome.conflicts = 1
        metrics.received(bytes: 700)
        metrics.record(.send(connection: 1, bytes: [UInt8](repeating: 0, count: 120)))
        metrics.record(.sessionEvent(connection: 1, .applied(batchID: 1, changes: 4, outcome: outcome)))
        metrics.record(.sessionEvent(connection: 1, .sent(batchID: 1, changes: 2)))
        // Copies: a#1 and a#2 come a second time, then a#1 a third.
        var again = ApplyOutcome()
        again.heldAlready = [("a", 1), ("a", 2)]
        metrics.record(.sessionEvent(connection: 2, .applied(batchID: 7, changes: 2, outcome: again)))
        again.heldAlready = [("a", 1)]
        metrics.record(.sessionEvent(connection: 3, .applied(batchID: 9, changes: 1, outcome: again)))
        metrics.record(.sessionEvent(connection: 1, .recordingResumed(id: "r", offset: 100)))
        metrics.record(.sessionEvent(connection: 1, .recordingProgress(id: "r", done: 150, total: 200, sending: false)))
        metrics.record(.sessionEvent(connection: 1, .recordingProgress(id: "r", done: 200, total: 200, sending: false)))
        metrics.record(.sessionEvent(connection: 1, .recordingReceived(id: "r", size: 200)))
        metrics.observeApply(seconds: 0.003)
        metrics.observeApply(seconds: 42)
        return metrics
    }

    @Test func countsComeFromTheNodesActions() {
        let metrics = Self.counted()
        #expect(metrics[.in].bytes == 700 && metrics[.out].bytes == 120)
        #expect(metrics[.in].batches == 3 && metrics[.in].changes == 7 && metrics[.out].batches == 1 && metrics[.out].changes == 2)
        #expect(metrics.copies.again == 3 && metrics.copies.beyondSecond == 1 && metrics.copies.mostCopies == 3)
        #expect(metrics.changesApplied == 3 && metrics.conflictsDetected == 1)
        #expect(metrics[.in].recordingBytes == 100, "only the bytes after the resume offset moved in this session")
        #expect(metrics[.in].recordings == 1)
        #expect(metrics.applySeconds.count == 2 && metrics.applySeconds.cumulative.last?.count == 2)
        #expect(metrics.applySeconds.cumulative.first { $0.le >= 0.003 }?.count == 1)
    }

    @Test func metricsFollowTheTextFormat() throws {
        let replica = try ReplicaFixtures.replica(role: .phone, seed: 3)
        let key = try replica.createAPIKey(name: "scraper")
        _ = try replica.add(json: .object([("timestamp", .string("2026-11-20T08:00:00Z")), ("data", .object([("text", .string("hi"))]))]))
        let api = LifeLogAPI(replica: replica)
        let metrics = Self.counted()
        api.metrics = { metrics }
        let request = try HTTPRequest(method: "GET", target: "/metrics", headers: HTTPHeaders([("Host", "x"), ("Authorization", "Bearer \(key)")]))
        let (response, _) = api.handle(request)
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        let text = String(decoding: response.body.wholeBytes ?? [], as: UTF8.self)
        let (problems, samples) = PrometheusCheck.check(text)
        #expect(problems == [], "\(text)")
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? { samples.first { $0.name == name && $0.labels == labels }?.value }
        #expect(value("lifesync_entries") == 1)
        #expect(value("lifesync_sync_bytes_total", ["direction": "in"]) == 700)
        #expect(value("lifesync_changes_applied_total") == 3)
        #expect(value("lifesync_changes_received_again_total") == 3)
        #expect(value("lifesync_changes_received_beyond_twice_total") == 1)
        #expect(value("lifesync_change_copies_max") == 3)
        #expect(value("lifesync_apply_seconds_bucket", ["le": "+Inf"]) == 2)
        #expect(value("lifesync_apply_seconds_bucket", ["le": "10"]) == 1)
        #expect(value("lifesync_recording_transfer_bytes_total", ["direction": "in"]) == 100)

        let anonymous = try HTTPRequest(method: "GET", target: "/metrics", headers: HTTPHeaders([("Host", "x")]))
        #expect(api.handle(anonymous).response.status == 401)
    }

    /// Copies are told apart per change, and the memory of changes seen twice is bounded: past
    /// `remembered` newer ones, a change's next copy counts as a second again (erring low).
    @Test func copiesAreCountedPerChangeWithinABoundedMemory() {
        var count = CopyCount()
        #expect(count.mostCopies == 1)
        count.record(heldAlready: [("a", 1), ("b", 1), ("a", 2)])
        #expect(count.again == 3 && count.beyondSecond == 0 && count.mostCopies == 2)
        count.record(heldAlready: (2...CopyCount.remembered).map { ("z", UInt64($0)) })
        count.record(heldAlready: [("a", 2)])
        #expect(count.beyondSecond == 1 && count.mostCopies == 3, "a#2 is still remembered")
        count.record(heldAlready: [("a", 1)])
        #expect(count.beyondSecond == 1, "a#1 was forgotten: its third copy counts as a second")
        count.record(heldAlready: [("a", 1), ("a", 1)])
        #expect(count.again == CopyCount.remembered + 6 && count.beyondSecond == 3 && count.mostCopies == 4)
    }

    /// The checker itself catches what it is there for, so a passing check means something.
    @Test func theCheckerRefusesBrokenExpositions() {
        let broken = [
            "# TYPE requests counter\nrequests 1\n",                                 // counter without _total
            "a_total 1\n# TYPE a_total counter\n",                                   // sample before TYPE
            "# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 2\n",  // not cumulative
            "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",        // no +Inf
            "# TYPE g gauge\ng{x=\"unterminated} 1\n",                               // broken label
            "# TYPE g gauge\ng one\n",                                              // not a number
            "# TYPE g gauge\ng 1",                                                  // no final line feed
        ]
        for text in broken { #expect(!PrometheusCheck.check(text).problems.isEmpty, "\(text)") }
        #expect(PrometheusCheck.check("# HELP g a \\\\ gauge\n# TYPE g gauge\ng{x=\"a\\\"b\"} 1.5\n").problems == [])
    }

    @Test func writerEscapesAndFormatsNumbers() {
        var out = PrometheusText()
        out.family("x_total", .counter, help: "line\nbreak \\ here")
        out.sample("x_total", UInt64(3), labels: [("peer", "a\"b\\c\nd")])
        #expect(out.text == "# HELP x_total line\\nbreak \\\\ here\n# TYPE x_total counter\nx_total{peer=\"a\\\"b\\\\c\\nd\"} 3\n")
        #expect(PrometheusCheck.check(out.text).problems == [])
        #expect(PrometheusText.number(.infinity) == "+Inf" && PrometheusText.number(0.25) == "0.25")
    }
}
