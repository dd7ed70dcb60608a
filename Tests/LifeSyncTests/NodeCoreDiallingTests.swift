import Foundation
import LifeSync
import Testing
import TestSupport

@Suite struct NodeCoreTests {
    // MARK: Start and dialling

    @Test func startDialsEveryConfiguredPeerOnceAndThreeNodesConverge() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 11)
        let mac = try net.memoryReplica(.mac, seed: 12)
        let mac2 = try net.memoryReplica(.mac, seed: 13)
        for i in 0..<5 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<7 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        for i in 0..<3 { try mac2.add(json: ReplicaFixtures.entryJSON(text: "mac2 \(i)")) }
        net.add("mac", replica: mac, seed: 2)
        net.add("mac2", replica: mac2, seed: 3)
        net.add("phone", replica: phone, peers: ["mac", "mac2"], seed: 1)
        net.start("mac")
        net.start("mac2")
        #expect(net.dials.isEmpty, "nodes without peers dial nobody")

        net.start("phone")
        #expect(net.dials.map(\.address) == ["mac", "mac2"], "start dials each configured peer exactly once")
        #expect(net.dials.map(\.peer) == [0, 1])
        #expect(net.dials.allSatisfy { $0.time == 0 })

        // Nothing else is dialled while those dials are open and after they succeed.
        net.run(for: 60_000)
        #expect(net.dials.count == 2, "no redial of connected peers: \(net.dials.map { ($0.time, $0.address) })")
        #expect(net.connectionCount("phone") == 2)
        #expect(net.violations.isEmpty, "\(net.violations)")
        // The phone relays between the two macs: all three hold the same 15 entries.
        #expect(count(phone) == 15 && count(mac) == 15 && count(mac2) == 15)
        #expect(net.converged(["phone", "mac", "mac2"]))
        #expect(net.nodes["phone"]!.core.peerStatuses.map(\.state) == [.synced, .synced])
    }

    @Test func failedDialsBackOffExponentiallyWithJitterUpToTheCap() throws {
        let net = VirtualNet()
        net.connectLatency = 300  // a refused connect takes a while to report: no second dial in between
        let phone = try net.memoryReplica(.phone, seed: 21)
        let mac = try net.memoryReplica(.mac, seed: 22)
        net.add("mac", replica: mac, seed: 2)  // never started: every dial fails
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("phone")
        net.run(for: 240_000)

        let dials = net.dials(of: "phone")
        let failures = net.connectFailures.filter { $0.node == "phone" }
        #expect(dials.count >= 10, "only \(dials.count) dials in 4 minutes")
        #expect(failures.count >= dials.count - 1)
        #expect(net.violations.isEmpty, "\(net.violations)")
        let base: Int64 = 500, cap: Int64 = 30_000
        var ratios: [Double] = []
        var delays: [Int64] = []
        for k in 0..<min(failures.count, dials.count - 1) {
            let delay = dials[k + 1].time - failures[k].time
            let raw = min(cap, base << Int64(k))
            delays.append(delay)
            ratios.append(Double(delay) / Double(raw))
            #expect(delay >= Int64(Double(raw) * 0.8) - 1 && delay <= Int64(Double(raw) * 1.2) + 1,
                    "retry \(k + 1) came \(delay) ms after the failure; expected \(raw) ms ± 20 %")
        }
        // Roughly doubling until the cap…
        for k in 0..<5 where k + 1 < delays.count {
            let growth = Double(delays[k + 1]) / Double(delays[k])
            #expect(growth > 1.3 && growth < 3.05, "delay \(k + 1)→\(k + 2) grew by \(growth)")
        }
        // …then held at the cap.
        let capped = delays.dropFirst(7)
        #expect(capped.count >= 3)
        #expect(capped.allSatisfy { $0 >= 24_000 && $0 <= 36_000 }, "capped delays: \(Array(capped))")
        #expect(delays.allSatisfy { $0 <= 36_000 })
        // The jitter is real: not every delay is exactly the nominal one.
        #expect(Set(ratios.map { ($0 * 1000).rounded() }).count > 3, "ratios \(ratios)")
        #expect(net.nodes["phone"]!.core.fallbackAt == nil, "nothing pending: no fallback timer")

        // The peer comes back: the next retry connects, and a later drop starts again at the base delay.
        net.start("mac")
        let up = net.now
        #expect(net.run(upTo: 40_000) { net.connectionCount("phone") == 1 })
        #expect(net.now - up <= 36_400)
        net.run(for: 1_000)
        net.cutLinks(of: "mac")
        let cutAt = net.now
        net.run(for: 5_000)
        let after = net.dials(of: "phone", since: cutAt)
        #expect(after.count == 1, "one redial after the drop, got \(after.map(\.time))")
        if let first = after.first {
            #expect(first.time - cutAt >= 400 && first.time - cutAt <= 620, "redial after \(first.time - cutAt) ms; expected ~500 ms (failures reset by the handshake)")
        }
        #expect(net.connectionCount("phone") == 1)
    }

    @Test func neverTwoDialsAtOnceEvenWhenTheFallbackFiresDuringADial() throws {
        let net = VirtualNet()
        net.connectLatency = 5_000  // each dial hangs 5 s before failing
        let phone = try net.memoryReplica(.phone, seed: 31)
        net.add("mac", replica: try net.memoryReplica(.mac, seed: 32), seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) {
            $0.fallbackInterval = 2_000
            $0.reconnectBase = 100
            $0.reconnectMaximum = 400
        }
        net.start("phone")
        try net.write("phone", count: 2)
        net.run(for: 60_000)
        #expect(net.violations.isEmpty, "\(net.violations)")
        let dials = net.dials(of: "phone")
        #expect(dials.count >= 10)
        // Each dial waits for the previous one to report.
        for (dial, next) in zip(dials, dials.dropFirst()) {
            #expect(next.time - dial.time >= 5_000, "dial at \(next.time) while the one at \(dial.time) was open")
        }
    }

    // MARK: Both sides dial

    @Test func twoNodesDiallingEachOtherKeepOneConnection() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 141)
        let mac = try net.memoryReplica(.mac, seed: 142)
        for i in 0..<10 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<10 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        net.add("mac", replica: mac, peers: ["phone"], seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        #expect(net.run(upTo: 10_000) { count(mac) == 20 && count(phone) == 20 })
        net.run(for: 5_000)
        #expect(net.converged(["phone", "mac"]))
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1, "one of the two connections yields")
        // Each change crossed at most once per connection: an acceptor answers only after the
        // dialler's HELLO, so both connections may carry the first window before one of them
        // yields. The merge makes the repeat harmless; afterwards nothing is sent twice.
        let phoneToMac = net.sentChanges(from: "phone", to: "mac").count, macToPhone = net.sentChanges(from: "mac", to: "phone").count
        #expect((10...20).contains(phoneToMac) && (10...20).contains(macToPhone), "\(phoneToMac), \(macToPhone)")
        // Once one connection is up, neither side keeps dialling a peer it is connected to:
        // every redial would be another HELLO exchange closed as a duplicate.
        let settled = net.now
        net.run(for: 300_000)
        let redials = net.dials.filter { $0.time >= settled }
        #expect(redials.count == 0, "\(redials.count) redial(s) of an already connected peer in 5 minutes, at \(redials.map(\.time))")
        let churn = net.logs.filter { $0.time >= settled && $0.line.contains("already connected") }.count
        #expect(churn == 0, "\(churn) duplicate connection(s) closed after settling")
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }
}
