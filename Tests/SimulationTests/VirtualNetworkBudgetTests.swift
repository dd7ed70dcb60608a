import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// A core's input budget on the simulated network (`VirtualNetwork+Budget`), the rule the runtime
/// runs (`InputBudget`): a paired peer's connections parking unfinished frames spend it, then
/// wait (their bytes held back), and are closed once stalled; an honest peer syncs meanwhile.
@Suite struct VirtualNetworkBudgetTests {
    /// Most of a 1 MiB first frame (a trusted key's HELLO may be that large), never finished.
    static func parkedHello() -> [UInt8] {
        let length = Message.Limits.maximumHandshakeFrameLength
        return RawPeer.frameHeader(length: length, type: .hello) + [UInt8](repeating: 0, count: length - 1 - 100)
    }

    @Test func parkedFramesStayWithinTheBudgetWaitAndAreClosedOnceStalled() throws {
        let budget = 2 << 20
        let (network, recorder) = try VirtualNetworkTests.network(withMac: true) {
            $0.maximumBufferedInput = budget
            $0.stalledFrameTimeout = 3_000  // before the sessions' own HELLO timeout (10 s)
        }
        network.run(until: 1_000)
        var parked: [Int] = []
        for _ in 0..<6 {
            let end = try #require(network.connect("raw", to: "phone"))
            network.send(Self.parkedHello(), from: end)
            parked.append(end)
        }
        // The mac writes meanwhile: its batch must reach the phone while the frames are parked.
        let mac = try #require(network.core(of: "mac")), phone = try #require(network.core(of: "phone"))
        _ = try mac.replica.add(json: try JSONValue.parse(#"{"category": "note", "data": {"text": "past the parked frames"}}"#))
        network.perform(mac.localWrite(now: network.now), on: "mac")
        network.run(until: 4_000)
        let spent = try #require(network.inputBudget(of: "phone"))
        #expect(spent.isSpent, "\(spent.total) bytes held")
        // Two parked frames (of 1 MiB less 100 bytes) do not spend it, the third does; each of the
        // other three is handed one small piece and waits, then has its turn (which it wastes):
        // the turns take the sum past the budget by one largest frame at most.
        let bound = budget + spent.overdraft + 6 * 64 * 1024
        #expect(spent.largest <= bound, "\(spent.largest) bytes held at most, bound \(bound)")
        #expect(network.faultCounts["input_budget_spent"] == 1 && network.faultCounts["input_budget_held_back", default: 0] == 3, "\(network.faultCounts)")
        #expect(try phone.replica.liveEntryCount() == 1, "the mac's write did not get past the parked frames")

        // Unchanged for the stall timeout and in two turns of their own while spent: closed,
        // until what is held is under the budget again; the sessions' HELLO timeout ends the rest.
        network.run(until: 9_000)
        #expect(network.faultCounts["input_budget_stalled_closed", default: 0] >= 2, "\(network.faultCounts)")
        #expect(Set(recorder.closes.map(\.end)).isSubset(of: Set(parked)) && !recorder.closes.isEmpty, "\(recorder.closes)")
        #expect(network.inputBudget(of: "phone")?.isSpent == false)
        network.run(until: 13_000)
        #expect(Set(recorder.closes.map(\.end)) == Set(parked), "\(recorder.closes)")
        #expect(network.inputBudget(of: "phone")?.total == 0)
        #expect(network.violations.isEmpty, "\(network.violations)")
    }

    /// The frame closest to complete was the only one read while the budget was spent: a peer
    /// that parked frames one byte short of complete held every honest frame larger than a read
    /// piece back until its own were closed as stalled (10 s). With turns, the honest frame gets
    /// one as soon as the parked ones have wasted theirs.
    @Test func framesParkedOneByteShortDoNotHoldAnHonestFrameBack() throws {
        let (network, _) = try VirtualNetworkTests.network(withMac: true) { $0.maximumBufferedInput = 2 << 20 }
        network.run(until: 1_000)
        let length = Message.Limits.maximumHandshakeFrameLength
        for _ in 0..<3 {
            let end = try #require(network.connect("raw", to: "phone"))
            network.send(RawPeer.frameHeader(length: length, type: .hello) + [UInt8](repeating: 0, count: length - 2), from: end)
        }
        network.run(until: 4_000)
        #expect(network.inputBudget(of: "phone")?.isSpent == true)
        // About 600 KB of writes: one BATCH frame many read pieces long.
        let mac = try #require(network.core(of: "mac")), phone = try #require(network.core(of: "phone"))
        let text = String(repeating: "a long evening note ", count: 100)
        for n in 0..<300 { _ = try mac.replica.add(json: try JSONValue.parse(#"{"category": "note", "data": {"text": "\#(n) \#(text)"}}"#)) }
        network.perform(mac.localWrite(now: network.now), on: "mac")
        network.run(until: 6_000)
        #expect(try phone.replica.liveEntryCount() == 300, "the mac's batch waited behind the parked frames")
        #expect(network.faultCounts["input_budget_stalled_closed", default: 0] == 0, "nothing was closed yet: the honest frame had its turn")
        #expect(network.violations.isEmpty, "\(network.violations)")
    }
}
