@testable import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// The rate in a transfer's progress lines is this session's: bytes moved in it over time spent
/// in it (issue 14: "2–3 MiB/s and 178 MiB/s on a link held at 40 MiB/s" after a resume).
@Suite struct TransferRateTests {
    static let mebibyte: UInt64 = 1 << 20

    @Test func countsOnlyWhatMovedSinceTheSessionStarted() {
        let rate = TransferRate(connection: 1, now: 100_000, done: 44 * Self.mebibyte)
        #expect(rate.mebibytesPerSecond(done: 124 * Self.mebibyte, now: 102_000) == 40)
        #expect(rate.mebibytesPerSecond(done: 44 * Self.mebibyte, now: 100_000) == 0)
        #expect(rate.mebibytesPerSecond(done: 10 * Self.mebibyte, now: 105_000) == 0, "progress that went back is no negative rate")
    }

    /// Through the node: a transfer that got to 44 % in a first connection and resumes in a
    /// second, 40 MiB/s each, reports 40 MiB/s in both, not the resumed prefix over the second
    /// session's time, nor everything over the time since the first started.
    @Test func aResumedTransferReportsItsNewSessionsRate() throws {
        let replica = try ReplicaFixtures.replica(role: .phone)
        let core = NodeCore(replica: replica, configuration: NodeConfiguration(), random: SeededRandom(seed: 1), now: 0)
        let key = SHA256.hash([1, 2, 3])
        let total = 1_000 * Self.mebibyte
        func rates(on connection: Int, from start: Int64, startingAt done: UInt64, seconds: Int64) -> [Double] {
            (0...seconds).flatMap { second -> [Double] in
                let actions = core.handle(.recordingProgress(id: "watch_rec", done: done + UInt64(second) * 40 * Self.mebibyte, total: total, sending: false),
                                          on: connection, now: start + second * 1_000)
                return actions.compactMap { if case .event(.transferProgress(_, _, _, _, _, let rate)) = $0 { rate } else { nil } }
            }
        }
        _ = core.accepted(connection: 1, remote: "127.0.0.1:5000", peerKey: key, now: 0)
        #expect(rates(on: 1, from: 0, startingAt: 0, seconds: 1) == [0])  // the first line: nothing measured yet
        #expect(rates(on: 1, from: 2_000, startingAt: 80 * Self.mebibyte, seconds: 0) == [40])
        _ = core.closed(connection: 1, now: 2_500)
        _ = core.accepted(connection: 2, remote: "127.0.0.1:5001", peerKey: key, now: 600_000)
        let resumed = rates(on: 2, from: 600_000, startingAt: 44 * Self.mebibyte, seconds: 1)
        #expect(resumed == [0])
        #expect(rates(on: 2, from: 602_000, startingAt: 124 * Self.mebibyte, seconds: 0) == [40])
    }
}
