import Foundation
import LifeSync
import Testing
import TestSupport

extension NodeCoreTests {
    // MARK: In flight

    @Test func noBatchIsSentTwiceWhileInFlight() throws {
        let net = VirtualNet()
        net.latency = 40
        let phone = try net.memoryReplica(.phone, seed: 81)
        let mac = try net.memoryReplica(.mac, seed: 82)
        for i in 0..<300 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<50 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        let small: (inout NodeConfiguration) -> Void = {
            $0.session.window = 2
            $0.session.batchMaximumChanges = 10
            $0.debounce = 30
        }
        net.add("mac", replica: mac, seed: 2, configure: small)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1, configure: small)
        net.start("mac")
        net.start("phone")
        // Local writes keep coming while batches are in flight: each one triggers a push.
        var written = 0
        for _ in 0..<40 {
            net.run(for: 37)
            try net.write("phone", count: 2, label: "during")
            try net.write("mac", label: "during")
            written += 1
        }
        #expect(net.run(upTo: 60_000) { count(mac) == 470 && count(phone) == 470 })
        net.run(for: 2_000)
        #expect(net.converged(["phone", "mac"]))

        for (from, to, total) in [("phone", "mac", 380), ("mac", "phone", 90)] {
            let keys = net.sentChanges(from: from, to: to)
            let repeated = Dictionary(grouping: keys, by: { $0 }).filter { $0.value.count > 1 }.keys
            #expect(repeated.isEmpty, "\(from)→\(to): \(repeated.count) change(s) sent twice, e.g. \(repeated.prefix(2))")
            #expect(Set(keys).count == total, "\(from)→\(to): \(Set(keys).count) distinct changes, expected \(total)")
        }
        // The window is respected: never more than 2 batches unacknowledged.
        for name in ["phone", "mac"] {
            var open = 0, most = 0
            for event in net.sessionEvents(name) {
                if case .sent = event { open += 1; most = max(most, open) }
                if case .acknowledged = event { open -= 1 }
            }
            #expect(most <= 2, "\(name) had \(most) batches in flight")
        }
        #expect(written == 40)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func theFallbackTimerFiringMidTransferDoesNotResendWhatIsInFlight() throws {
        let net = VirtualNet()
        net.latency = 100
        let phone = try net.memoryReplica(.phone, seed: 91)
        let mac = try net.memoryReplica(.mac, seed: 92)
        for i in 0..<200 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<200 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        let slow: (inout NodeConfiguration) -> Void = {
            $0.session.window = 1
            $0.session.batchMaximumChanges = 10
            $0.fallbackInterval = 1_000  // fires several times during the ~4 s transfer
        }
        net.add("mac", replica: mac, seed: 2, configure: slow)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1, configure: slow)
        net.start("mac")
        net.start("phone")
        #expect(net.run(upTo: 60_000) { count(mac) == 400 && count(phone) == 400 })
        net.run(for: 3_000)
        #expect(net.converged(["phone", "mac"]))
        let fired = net.nodeEvents.filter { $0.event == .fallbackTimerFired }.count
        #expect(fired >= 2, "the scenario needs the fallback to fire mid-transfer (fired \(fired)×)")
        for (from, to) in [("phone", "mac"), ("mac", "phone")] {
            let keys = net.sentChanges(from: from, to: to)
            #expect(keys.count == 200, "\(from)→\(to): \(keys.count) changes sent for 200 distinct (\(keys.count - Set(keys).count) resent while in flight)")
        }
    }

    // MARK: Reconnection

    @Test func afterReconnectingThePeerIsSentNothingItAlreadyHas() throws {
        let net = VirtualNet()
        net.latency = 30
        let phone = try net.memoryReplica(.phone, seed: 101)
        let mac = try net.memoryReplica(.mac, seed: 102)
        for i in 0..<60 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        for i in 0..<20 { try mac.add(json: ReplicaFixtures.entryJSON(text: "mac \(i)")) }
        net.add("mac", replica: mac, seed: 2)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1)
        net.start("mac")
        net.start("phone")
        #expect(net.run(upTo: 10_000) { net.converged(["phone", "mac"]) && count(mac) == 80 })
        net.run(for: 1_000)

        // A clean drop, then reconnection: both sides already hold everything.
        net.cutLinks(of: "phone")
        let cut = net.now
        #expect(net.run(upTo: 5_000) { net.connectionCount("phone") == 1 && net.sessionEvents("phone", since: cut).contains(.sentAll) })
        net.run(for: 2_000)
        #expect(net.dials(of: "phone", since: cut).count == 1)
        #expect(net.sentChanges(from: "phone", to: "mac", since: cut).isEmpty, "re-sent what the mac had")
        #expect(net.sentChanges(from: "mac", to: "phone", since: cut).isEmpty, "re-sent what the phone had")

        // Writes while apart: exactly those travel after the reconnection.
        net.cutLinks(of: "phone")
        net.setReachable("mac", false)
        let apart = net.now
        let newPhone = try net.write("phone", count: 4, label: "apart")
        let newMac = try net.write("mac", count: 2, label: "apart")
        net.run(for: 3_000)
        net.setReachable("mac", true)
        #expect(net.run(upTo: 40_000) { count(mac) == 86 && count(phone) == 86 })
        net.run(for: 2_000)
        #expect(Set(net.sentChanges(from: "phone", to: "mac", since: apart).map { String($0.prefix { $0 != "@" }) }) == Set(newPhone))
        #expect(net.sentChanges(from: "phone", to: "mac", since: apart).count == 4)
        #expect(Set(net.sentChanges(from: "mac", to: "phone", since: apart).map { String($0.prefix { $0 != "@" }) }) == Set(newMac))
        #expect(net.sentChanges(from: "mac", to: "phone", since: apart).count == 2)
        #expect(net.converged(["phone", "mac"]))
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func aTransferCutMidwayResumesWithoutResendingWhatArrived() throws {
        let net = VirtualNet()
        net.latency = 50
        let phone = try net.memoryReplica(.phone, seed: 111)
        let mac = try net.memoryReplica(.mac, seed: 112)
        for i in 0..<300 { try phone.add(json: ReplicaFixtures.entryJSON(text: "phone \(i)")) }
        let small: (inout NodeConfiguration) -> Void = {
            $0.session.window = 3
            $0.session.batchMaximumChanges = 10
        }
        net.add("mac", replica: mac, seed: 2, configure: small)
        net.add("phone", replica: phone, peers: ["mac"], seed: 1, configure: small)
        net.start("mac")
        net.start("phone")
        #expect(net.run(upTo: 20_000) { count(mac) >= 120 })
        // Cut with batches (and their ACKs) on the wire.
        net.cutLinks(of: "mac")
        let cut = net.now
        let held = try mac.replicaVector()
        let heldCount = count(mac)
        #expect(heldCount < 300)
        #expect(net.run(upTo: 30_000) { count(mac) == 300 })
        net.run(for: 1_000)
        let incarnation = phone.identity.incarnation
        let after = net.batches(from: "phone", to: "mac", since: cut).flatMap(\.batch.changes)
        #expect(after.allSatisfy { $0.stamp.sequence > held[incarnation] }, "re-sent changes the mac had committed")
        #expect(after.count == 300 - heldCount, "sent \(after.count) after the cut; the mac lacked \(300 - heldCount)")
        #expect(net.converged(["phone", "mac"]))
        // Before the cut no change went twice either.
        let before = net.batches(from: "phone", to: "mac").filter { $0.time < cut }.flatMap { $0.batch.changes.map(VirtualNet.key) }
        #expect(Set(before).count == before.count)
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func mutualDiallersReconnectAfterACutAndSettleOnOneConnectionAgain() throws {
        let net = VirtualNet()
        let phone = try net.memoryReplica(.phone, seed: 161)
        let mac = try net.memoryReplica(.mac, seed: 162)
        net.add("mac", replica: mac, peers: ["phone"], seed: 2) { $0.reconnectMaximum = 2_000 }
        net.add("phone", replica: phone, peers: ["mac"], seed: 1) { $0.reconnectMaximum = 2_000 }
        net.start("mac")
        net.start("phone")
        net.run(for: 10_000)
        #expect(net.connectionCount("phone") == 1)

        // A network cut: both see the link drop; writes happen on both sides meanwhile.
        net.setReachable("mac", false)
        net.setReachable("phone", false)
        net.cutLinks(of: "phone")
        let cut = net.now
        let fromPhone = try net.write("phone", count: 2, label: "cut")
        let fromMac = try net.write("mac", count: 3, label: "cut")
        net.run(for: 5_000)
        #expect(net.dials.filter { $0.time > cut }.count >= 2, "both sides try to reconnect")
        net.setReachable("mac", true)
        net.setReachable("phone", true)
        #expect(net.run(upTo: 10_000) { count(phone) == 5 && count(mac) == 5 })
        for id in fromPhone { #expect((try? mac.entry(id: id)) != nil) }
        for id in fromMac { #expect((try? phone.entry(id: id)) != nil) }
        net.run(for: 5_000)
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1)
        let settled = net.now
        net.run(for: 120_000)
        #expect(net.dials.filter { $0.time >= settled }.isEmpty, "redials after settling: \(net.dials.filter { $0.time >= settled }.map(\.time))")
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1)

        // The node holding the kept connection crashes: the other one dials it again when it returns.
        net.crash("mac")
        let crashed = net.now
        net.run(for: 3_000)
        try net.write("phone", label: "while mac is down")
        net.start("mac")
        #expect(net.run(upTo: 10_000) { count(mac) == 6 })
        net.run(for: 5_000)
        #expect(net.connectionCount("phone") == 1 && net.connectionCount("mac") == 1)
        #expect(net.dials(of: "phone", since: crashed).count >= 1)
        #expect(net.converged(["phone", "mac"]))
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    @Test func aSenderRestartedMidTransferIsNotAnsweredWithAStaleVector() throws {
        // The watch dies with a batch on the wire and comes straight back. The phone greets the
        // new connection at once, then the dead connection's last batch lands: the vector in that
        // greeting is stale, and the new session must not make the phone take that batch again.
        let net = VirtualNet()
        net.latency = 50
        let watch = try net.memoryReplica(.watch, seed: 171)
        let phone = try net.memoryReplica(.phone, seed: 172)
        for i in 0..<200 { try watch.add(json: ReplicaFixtures.entryJSON(text: "watch \(i)", category: "mood")) }
        let small: (inout NodeConfiguration) -> Void = {
            $0.session.window = 2
            $0.session.batchMaximumChanges = 20
        }
        net.add("phone", replica: phone, seed: 2, configure: small)
        net.add("watch", replica: watch, peers: ["phone"], seed: 1, configure: small)
        net.start("phone")
        net.start("watch")
        // Run until the watch has just put a batch on the wire, with some already delivered.
        #expect(net.run(upTo: 20_000) {
            count(phone) >= 60 && net.batches(from: "watch", to: "phone").last?.time == net.now
        })
        let crashed = net.now
        let held = count(phone)
        net.crash("watch", keepSentBytes: true)
        net.start("watch")
        #expect(net.run(upTo: 20_000) { count(phone) == 200 })
        net.run(for: 2_000)
        #expect(net.converged(["watch", "phone"]))
        var received = 0, redundant = 0
        for event in net.sessionEvents("phone", since: crashed) {
            if case .applied(_, let changes, let outcome) = event {
                received += changes
                redundant += changes - outcome.applied
            }
        }
        #expect(held < 200)
        #expect(redundant == 0, "after the restart the phone was sent \(redundant) change(s) it already held (received \(received) for \(200 - held) missing)")
        #expect(net.violations.isEmpty, "\(net.violations)")
    }
}
