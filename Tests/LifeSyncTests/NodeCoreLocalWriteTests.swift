import Foundation
import LifeSync
import Testing
import TestSupport

extension NodeCoreTests {
    // MARK: Local writes: debounce

    @Test func writesWithinTheDebounceWindowArePushedOnceAfterTheDebounce() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 41)
        let mac = try net.memoryReplica(.mac, seed: 42)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        net.run(for: 2_000)
        #expect(net.connectionCount("phone") == 1)
        #expect(net.batches(from: "phone", to: "mac").isEmpty)

        // Five writes 100 ms apart: one push, 500 ms after the first.
        let t0 = net.now
        for i in 0..<5 {
            try net.write("phone", label: "burst \(i)")
            net.run(for: 100)
        }
        net.run(until: t0 + 3_000)
        let pushes = net.batches(from: "phone", to: "mac", since: t0)
        #expect(pushes.count == 1, "expected one BATCH, got \(pushes.map { ($0.time, $0.batch.changes.count) })")
        #expect(pushes.first?.batch.changes.count == 5)
        if let push = pushes.first {
            #expect(push.time >= t0 + 500 && push.time <= t0 + 520, "pushed at +\(push.time - t0) ms, expected +500 ms")
        }
        #expect(net.sentEventCount("phone", since: t0) == 1)
        #expect(count(mac) == 5)

        // A second burst: again one push.
        let t1 = net.now
        try net.write("phone", count: 3, label: "second")
        net.run(for: 200)
        try net.write("phone", count: 2, label: "second b")
        net.run(for: 2_000)
        let second = net.batches(from: "phone", to: "mac", since: t1)
        #expect(second.map(\.batch.changes.count) == [5], "\(second.map { ($0.time - t1, $0.batch.changes.count) })")
        #expect(second.first.map { $0.time - t1 } == 500)

        // Writes further apart than the debounce are pushed one by one (the window does not slide forever).
        let t2 = net.now
        for _ in 0..<3 {
            try net.write("phone", label: "spaced")
            net.run(for: 1_000)
        }
        net.run(for: 1_000)
        #expect(net.batches(from: "phone", to: "mac", since: t2).map(\.batch.changes.count) == [1, 1, 1])
        #expect(count(mac) == 13)
        #expect(net.batches(from: "mac", to: "phone").allSatisfy { $0.batch.changes.isEmpty }, "nothing echoed back")
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    // MARK: The peer's row

    @Test func aPeerInStepHasItsRowSavedOnceASecondAndItsLastCountsSavedToo() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 45)
        let mac = try net.memoryReplica(.mac, seed: 46)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) { $0.debounce = 50 }
        net.start("mac")
        net.start("phone")
        try net.write("phone")
        net.run(for: 2_000)
        #expect(count(mac) == 1)

        // 50 writes 100 ms apart, each pushed on its own: each side commits the entry once,
        // and the peer's row (every push ends in sync) about once a second, not 50 times.
        let (phoneBefore, macBefore) = (phone.database.commits, mac.database.commits)
        for _ in 0..<50 {
            try net.write("phone")
            net.run(for: 100)
        }
        net.run(for: 200)
        #expect(count(mac) == 51)
        #expect(net.batches(from: "phone", to: "mac").filter { !$0.batch.changes.isEmpty }.count >= 40, "the writes went one push at a time")
        let phoneCommits = phone.database.commits - phoneBefore - 50
        let macCommits = mac.database.commits - macBefore - 100
        #expect(phoneCommits <= 8, "the phone committed \(phoneCommits) times besides its 50 writes")
        #expect(macCommits <= 8, "the mac committed \(macCommits) times besides the 50 batches it applied and the 50 times it indexed their text")

        // Three more writes just after a save: their counts are saved within a second and a
        // half of the first, whatever else happens (`status` is never further behind).
        net.run(for: 1_100)
        let first = net.now
        for _ in 0..<3 {
            try net.write("phone")
            net.run(for: 100)
        }
        net.run(until: first + 1_600)
        #expect(try phone.peers().first?.entriesSent == 54)
        #expect(try mac.peers().first?.entriesReceived == 54)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    // MARK: Fallback timer

    @Test func theFallbackTimerRunsOnlyWhileSomethingIsPending() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 51)
        let mac = try net.memoryReplica(.mac, seed: 52)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) { $0.reconnectMaximum = 2_000 }
        let core = { net.nodes["phone"]!.core }
        net.start("phone")
        net.run(for: 5_000)
        #expect(core().fallbackAt == nil, "nothing pending: the timer is off")

        let written = net.now
        try net.write("phone", count: 3)
        net.run(for: 1_000)
        let armed = try #require(core().fallbackAt, "three writes the peer lacks: the timer runs")
        #expect(armed >= written + 300_000 && armed <= written + 301_000)
        #expect(core().pendingCount == 3)
        net.run(for: 10_000)
        #expect(core().fallbackAt == armed, "the timer is not pushed back while it runs")

        // The peer comes up; once it acknowledged everything the timer stops.
        net.start("mac")
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        net.run(for: 1_000)
        #expect(core().pendingCount == 0)
        #expect(core().fallbackAt == nil, "everything acknowledged: the timer stops")
        // And stays off while nothing is pending, well past the old deadline.
        net.run(until: armed + 60_000)
        #expect(core().fallbackAt == nil)
        #expect(!net.logs.contains { $0.node == "phone" && $0.line.contains("fallback") })

        // The peer leaves again and something new is written: the timer is back.
        net.crash("mac")
        net.run(for: 1_000)
        #expect(core().fallbackAt == nil, "the peer left but it has everything")
        let again = net.now
        try net.write("phone")
        net.run(for: 1_000)
        let rearmed = try #require(core().fallbackAt)
        #expect(rearmed >= again + 300_000 && rearmed <= again + 301_000)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func whenTheFallbackFiresWithThePeerDownItDialsAgain() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 61)
        let mac = try net.memoryReplica(.mac, seed: 62)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) {
            // The backoff alone would not retry for 20 minutes or more.
            $0.reconnectBase = 1_500_000
            $0.reconnectMaximum = 3_600_000
        }
        let core = { net.nodes["phone"]!.core }
        net.start("phone")
        net.run(for: 1_000)
        #expect(net.dials(of: "phone").count == 1)
        try net.write("phone", count: 2)
        net.run(for: 1_000)
        let fallback = try #require(core().fallbackAt)

        net.run(until: fallback - 1)
        #expect(net.dials(of: "phone").count == 1, "nothing dials before the fallback")
        net.run(until: fallback + 1_000)
        let retries = net.dials(of: "phone", since: fallback - 1)
        #expect(retries.map(\.time) == [fallback], "the fallback timer dials the absent peer")
        #expect(net.logs.contains { $0.node == "phone" && $0.line.contains("fallback") })
        let next = try #require(core().fallbackAt, "still pending: the timer is re-armed")
        #expect(next >= fallback + 300_000 && next <= fallback + 301_000)

        // The peer is back before the next fallback: that one connects and delivers.
        net.start("mac")
        net.run(until: next - 1)
        #expect(count(mac) == 0, "nothing dials between fallbacks (the backoff is 20+ minutes)")
        #expect(net.run(upTo: 2_000) { count(mac) == 2 })
        #expect(net.dials(of: "phone").map(\.time) == [0, fallback, next])
        net.run(for: 1_000)
        #expect(core().fallbackAt == nil)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func aWatchPeerThatReceivesNoEntriesLeavesNothingPending() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 151)
        let watch = try net.memoryReplica(.watch, seed: 152)
        for i in 0..<5 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<2 { try watch.add(json: ReplicaFixtures.entryJSON(text: "watch \(i)", category: "mood")) }
        net.add("watch", replica: watch, seed: 2)
        net.add("phone", replica: phone, peers: ["watch"], seed: 1) { $0.reconnectMaximum = 2_000 }
        let core = { net.nodes["phone"]!.core }
        net.start("watch")
        net.start("phone")
        #expect(net.run(upTo: 5_000) { count(phone) == 7 })
        net.run(for: 2_000)
        #expect(count(watch) == 2, "a watch receives no entries by default")
        #expect(core().pendingCount == 0)
        #expect(core().fallbackAt == nil)

        // The watch goes away; the phone's entries are still nothing the watch would take.
        net.crash("watch")
        net.run(for: 2_000)
        #expect(core().pendingCount == 0, "the phone counts \(core().pendingCount) change(s) pending for a watch that receives none")
        #expect(core().fallbackAt == nil, "fallback timer armed for a watch that receives no entries")
        try net.write("phone", count: 2)
        net.run(for: 2_000)
        #expect(core().pendingCount == 0)
        #expect(core().fallbackAt == nil)
    }

    // MARK: Writes by other processes

    @Test func writesThroughAnotherConnectionArePickedUpByDataVersionPolling() throws {
        let directory = TemporaryDirectory("lifesync-nodecore")
        let net = VirtualNet()
        let path = directory.file("phone.sqlite")
        let phone = try ReplicaFixtures.replica(role: .phone, seed: 71, clock: net.clock, path: path)
        let mac = try net.memoryReplica(.mac, seed: 72)
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        net.run(for: 2_000)
        #expect(net.connectionCount("phone") == 1)

        // Another process (here: another connection) writes; nobody calls localWrite.
        let other = try Replica(path: path, clock: net.clock, random: SeededRandom(seed: 700))
        #expect(other.identity == phone.identity)
        let t0 = net.now
        var ids: [String] = []
        for i in 0..<3 { ids.append(try other.add(json: ReplicaFixtures.entryJSON(text: "from the CLI \(i)")).id) }
        #expect(net.run(upTo: 5_000) { count(mac) == 3 })
        let delay = net.now - t0
        #expect(delay <= 250 + 500 + 2 * net.latency + 10, "noticed after \(delay) ms (poll 250 + debounce 500)")
        let pushes = net.batches(from: "phone", to: "mac", since: t0)
        #expect(pushes.count == 1)
        #expect(Set(pushes.flatMap { $0.batch.changes.map(\.id) }) == Set(ids))
        for id in ids { #expect(try mac.entry(id: id).data.text?.hasPrefix("from the CLI") == true) }

        // Idle again: no more pushes without writes.
        let t1 = net.now
        net.run(for: 10_000)
        #expect(net.batches(from: "phone", to: "mac", since: t1).isEmpty)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }
}
