import LifeSync
import Testing
import TestSupport

/// The relay hold and HOLDS (PROTOCOL.md §5.11, §7.4): in a household where every device is
/// paired with every other, each node gets each write once, from its origin; a node reached only
/// through a relay still gets every write.
extension NodeCoreTests {
    /// Four nodes, all paired, each dialling those after it, each with writes made offline:
    /// every change reaches every node once. With the hold off (as before it), the same
    /// household receives writes twice: the test can fail.
    @Test func aFullyPairedHouseholdGetsEachWriteOnce() throws {
        let held = try Self.mesh(relayHold: 1_000)
        #expect(held.converged, "the household did not converge")
        #expect(held.duplicates.isEmpty, "changes received twice: \(held.duplicates.prefix(5))")
        let unheld = try Self.mesh(relayHold: 0)
        #expect(unheld.converged)
        #expect(!unheld.duplicates.isEmpty, "without the hold, relays should have doubled some writes")
    }

    /// A watch paired with the phone only: its writes reach the mac through the phone, which the
    /// mac asks for them (HOLDS's `relay`) as soon as the phone says it holds them, so they go at
    /// once, not a hold later; the mac's reach the phone without waiting.
    @Test func aNodeReachedOnlyThroughARelayGetsEveryWriteFromTheRelayItAsks() throws {
        let net = VirtualNet()
        net.add("mac", replica: try net.memoryReplica(.mac, seed: 61), seed: 1)
        net.add("phone", replica: try net.memoryReplica(.phone, seed: 62), peers: ["mac"], seed: 2)
        net.add("watch", replica: try net.memoryReplica(.watch, seed: 63), peers: ["phone"], seed: 3)
        for name in ["mac", "phone", "watch"] { net.start(name) }
        net.run(for: 3_000)
        // The first writes wait for the phone to say it holds them and the mac to ask it (three
        // one-way trips of 10 ms); later ones go as the phone takes them, the mac asking still.
        for round in 1...2 {
            let t0 = net.now
            try net.write("watch", count: 3, label: "from the wrist")
            #expect(net.run(upTo: t0 + 10_000) { count(net.nodes["mac"]!.replica) == 3 * round }, "the watch's writes never reached the mac")
            let arrived = net.batches(from: "phone", to: "mac", since: t0).first?.time ?? .max
            let atPhone = net.batches(from: "watch", to: "phone", since: t0).first?.time ?? .max
            #expect(arrived - atPhone < (round == 1 ? 100 : 40), "round \(round): relayed \(arrived - atPhone) ms after the phone got them (a hold is 1 s)")
            net.run(for: 5_000)
        }
        let asked = net.wire.contains { record in
            guard record.from == "mac", record.to == "phone", case .holds(_, _, let relay?) = record.message else { return false }
            return !relay.isEmpty
        }
        #expect(asked, "the mac never asked the phone to relay it anything")
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    /// A mac connected to three macs that hold another node's writes, but not to that node
    /// (a mesh still forming, or a device not paired with it), and that chooses its relays: it
    /// asks one of the three, gets each write once, from it alone, and at once.
    @Test func aPeerAsksOneRelayForAnOriginAndGetsItsWritesFromThatOneAlone() throws {
        for comesLate in [false, true] {
            let far = try Self.relayedToFar(comesLate: comesLate, choosing: true)
            #expect(far.arrived, "comes late \(comesLate): the writes never reached the far mac")
            #expect(far.seen == 40)
            #expect(far.twice.isEmpty, "comes late \(comesLate): changes received twice, the first: \(far.twice.prefix(3))")
            #expect(far.senders.count == 1, "comes late \(comesLate): sent by \(far.senders.sorted())")
            #expect(far.violations.isEmpty, "\(far.violations)")
        }
    }

    /// Two of the three relays say they hold the writes and never send them (buggy peers): a
    /// relay the far mac asks that sends nothing for 5 s is passed over, so it gets each write
    /// once, from the third, in well under the 30 s settle it waited out before (when the
    /// relays not asked send what they hold).
    @Test func aRelayThatOwesWritesAndSendsNoneIsPassedOver() throws {
        let far = try Self.relayedToFar(comesLate: false, choosing: true, buggyFirst: true)
        #expect(far.arrived, "the writes never reached the far mac")
        #expect(far.at < 15_000, "the far mac got the writes \(far.at) ms after they were written")
        #expect(far.seen == 40)
        #expect(far.twice.isEmpty, "changes received twice, the first: \(far.twice.prefix(3))")
        #expect(far.senders.count == 1, "sent by \(far.senders.sorted())")
    }

    /// The same, with every message taking 1.5 s: a relay hears what the far mac holds only
    /// after its turn. Relays of an earlier revision, taking turns, then send it the same writes
    /// (the 40-node mesh's busy nodes, their loops seconds behind); relays it asks do not.
    @Test func relaysThatHearLateSendNothingTheyWereNotAsked() throws {
        let turns = try Self.relayedToFar(comesLate: false, choosing: false, latency: 1_500)
        #expect(turns.arrived)
        #expect(!turns.twice.isEmpty, "relays taking turns 1 s apart, hearing 1.5 s late, should have doubled writes")
        let asked = try Self.relayedToFar(comesLate: false, choosing: true, latency: 1_500)
        #expect(asked.arrived, "the writes never reached the far mac")
        #expect(asked.seen == 40)
        #expect(asked.twice.isEmpty, "changes received twice, the first: \(asked.twice.prefix(3))")
        #expect(asked.violations.isEmpty, "\(asked.violations)")
    }

    /// A far mac of the revision before relay choice (no bit 8) connected to three relays of
    /// another node: the three take turns, so it gets each write once, from the first in turn,
    /// about a hold later than from one relay.
    @Test func relaysOfANodeThePeerDoesNotHearFromTakeTurns() throws {
        let far = try Self.relayedToFar(comesLate: false, choosing: false)
        #expect(far.arrived, "the writes never reached the far mac")
        #expect(far.seen == 40)
        #expect(far.twice.count == 0, "changes received twice, the first: \(far.twice.prefix(3))")
    }

    /// The same relays, but the far mac comes online only once they have held the writes for
    /// longer than every turn: their turns count from when the far mac could first be relayed
    /// to, not only from when they took the writes, so it still gets each write once. (Counted
    /// from the writes alone, every turn was over by then and all three sent them at once: in
    /// a 40-node mesh whose busy nodes said what they hold seconds late, up to five relays sent
    /// a node the same writes within 0.2 s.)
    @Test func relaysTakeTurnsForAPeerThatComesLate() throws {
        let far = try Self.relayedToFar(comesLate: true, choosing: false)
        #expect(far.arrived, "the writes never reached the far mac")
        #expect(far.seen == 40)
        #expect(far.twice.count == 0, "changes received more than once, the first: \(far.twice.prefix(3))")
        #expect(far.violations.isEmpty, "\(far.violations)")
    }

    /// "origin" writes 40 notes; three macs it dials relay them to "far", which is connected to
    /// the three and not to "origin". `comesLate`: "far" dials the relays once they have held
    /// the writes past every turn; else it is up before "origin" writes. `choosing`: "far" asks
    /// its relays (bit 8); else it is of the revision before, and they take turns. What "far"
    /// got from the relays: each change once (`seen`) and again (`twice`), and who sent any.
    /// `buggyFirst`: every relay but the one "far" ranks last never relays (each says it holds
    /// the writes and sends none), so it must pass them over.
    static func relayedToFar(comesLate: Bool, choosing: Bool, latency: Int64 = 10, buggyFirst: Bool = false) throws
        -> (arrived: Bool, seen: Int, twice: [String], senders: Set<String>, violations: [String], at: Int64) {
        let net = VirtualNet()
        net.latency = latency
        let relays = ["mac1", "mac2", "mac3"]
        let far = try net.memoryReplica(.mac, seed: 80), origin = try net.memoryReplica(.mac, seed: 85)
        let relayReplicas = try relays.indices.map { try net.memoryReplica(.mac, seed: 81 + UInt64($0)) }
        let good = relayReplicas.max { a, b in
            RelayChoice.rank(origin.identity.incarnation, a.identity.nodeID, far.identity.nodeID)
                < RelayChoice.rank(origin.identity.incarnation, b.identity.nodeID, far.identity.nodeID)
        }!.identity.nodeID
        net.add("far", replica: far, peers: comesLate ? relays : [], seed: 1) {
            if !choosing { $0.session.capabilitiesLeftOut = .relays }
        }
        for (i, name) in relays.enumerated() {
            net.add(name, replica: relayReplicas[i], peers: comesLate ? [] : ["far"], seed: UInt64(i + 2)) {
                if buggyFirst && relayReplicas[i].identity.nodeID != good { $0.session.plantedBugs = [.relayDropsForeignChanges] }
            }
        }
        net.add("origin", replica: origin, peers: relays, seed: 5)
        if comesLate {
            for name in ["origin"] + relays { net.start(name) }
            try net.write("origin", count: 40, label: "from the origin")
            guard net.run(upTo: net.now + 20_000, until: { relays.allSatisfy { count(net.nodes[$0]!.replica) == 40 } }) else {
                return (false, 0, [], [], net.violations, 0)
            }
            net.run(for: 10_000)  // every turn is over
            net.start("far")
        } else {
            for name in ["far"] + relays { net.start(name) }
            net.run(for: 3_000 + 6 * latency)
            net.start("origin")
            try net.write("origin", count: 40, label: "from the origin")
        }
        let written = net.now
        let arrived = net.run(upTo: net.now + 40_000) { count(net.nodes["far"]!.replica) == 40 }
        let at = net.now - written
        net.run(for: 35_000)
        var seen = Set<String>(), twice: [String] = [], senders = Set<String>()
        for relay in relays {
            let sent = net.sentChanges(from: relay, to: "far")
            if !sent.isEmpty { senders.insert(relay) }
            for key in sent where !seen.insert(key).inserted { twice.append(key) }
        }
        return (arrived, seen.count, twice, senders, net.violations, at)
    }

    /// Three nodes, all paired; the phone writes. Each mac gets the write from the phone and
    /// ends that burst with a CAUGHT_UP back to it; the two macs exchange no batch, so neither
    /// tells the other it sent everything (each did, twice a write, before PROTOCOL.md §7.5
    /// said a CAUGHT_UP follows a batch).
    @Test func peersThatExchangedNoBatchSendNoCaughtUp() throws {
        let net = VirtualNet()
        let names = ["phone", "mac1", "mac2"]
        for (i, name) in names.enumerated() {
            net.add(name, replica: try net.memoryReplica(i == 0 ? .phone : .mac, seed: 90 + UInt64(i)), peers: Array(names[(i + 1)...]), seed: UInt64(i + 1))
        }
        for name in names.reversed() { net.start(name) }
        net.run(for: 3_000)
        let t0 = net.now
        for _ in 0..<5 {
            try net.write("phone", label: "a walk")
            net.run(for: 1_000)
        }
        net.run(for: 5_000)
        #expect(names.allSatisfy { count(net.nodes[$0]!.replica) == 5 })
        func caughtUps(_ from: String, _ to: String) -> Int {
            net.wire.filter { $0.time >= t0 && $0.from == from && $0.to == to && { if case .caughtUp = $0 { true } else { false } }($0.message) }.count
        }
        #expect(caughtUps("mac1", "mac2") == 0 && caughtUps("mac2", "mac1") == 0,
                "mac1 → mac2 \(caughtUps("mac1", "mac2")), mac2 → mac1 \(caughtUps("mac2", "mac1"))")
        #expect(caughtUps("phone", "mac1") == 5 && caughtUps("phone", "mac2") == 5, "one after each push")
        #expect((1...5).contains(caughtUps("mac1", "phone")) && (1...5).contains(caughtUps("mac2", "phone")), "each mac ends what it received")
        #expect(net.violations.isEmpty, "\(net.violations)")
    }

    /// Ten nodes, each dialling the three after it, so most writes reach a node through relays,
    /// starting 0.7 s apart (the mesh forming while writes flow), every message 1.5 s on its way
    /// (a busy household's loops seconds behind): with relay choice no node receives a change
    /// more than twice (the one relay it asked, and the change's node when their batches cross;
    /// here once). Relays of the revision before, taking turns, sent one change five times.
    @Test func aFormingMeshReceivesNoChangeMoreThanTwice() throws {
        let asked = try Self.formingMesh(choosing: true)
        #expect(asked.converged, "the mesh did not converge")
        #expect(asked.mostCopies <= 2, "a change arrived \(asked.mostCopies) times: \(asked.example)")
        let turns = try Self.formingMesh(choosing: false)
        #expect(turns.converged)
        #expect(turns.mostCopies > 2, "relays taking turns should have sent some change three times (most \(turns.mostCopies))")
    }

    /// The mesh of `aFormingMeshReceivesNoChangeMoreThanTwice`: whether it converged, and the
    /// most copies of one change any node received, with one such change.
    static func formingMesh(choosing: Bool) throws -> (converged: Bool, mostCopies: Int, example: String) {
        let net = VirtualNet()
        net.latency = 1_500
        let names = ["phone"] + (1...9).map { "mac\($0)" }
        for (i, name) in names.enumerated() {
            let replica = try net.memoryReplica(i == 0 ? .phone : .mac, seed: 300 + UInt64(i))
            net.add(name, replica: replica, peers: Array(names[(i + 1)..<min(i + 4, names.count)]), seed: UInt64(i + 1)) {
                if !choosing { $0.session.capabilitiesLeftOut = .relays }
            }
        }
        for name in names { _ = try net.write(name, count: 20, label: "offline on \(name)") }
        for name in names.reversed() {
            net.start(name)
            net.run(for: 700)
        }
        let converged = net.run(upTo: net.now + 120_000) { names.allSatisfy { count(net.nodes[$0]!.replica) == 20 * names.count } }
        net.run(for: 40_000)
        var most = 0, example = ""
        for receiver in names {
            var copies: [String: Int] = [:]
            for sender in names where sender != receiver {
                for key in net.sentChanges(from: sender, to: receiver) { copies[key, default: 0] += 1 }
            }
            if let (key, n) = copies.max(by: { ($0.value, $0.key) < ($1.value, $1.key) }), n > most { (most, example) = (n, "\(receiver): \(key)") }
        }
        return (converged, most, example)
    }

    /// HOLDS goes to a peer at most every 100 ms for each ten nodes (or part of ten) its sender
    /// hears from directly (PROTOCOL.md §5.11): a node of four sends some 100–199 ms apart, a
    /// node of twelve none less than 200 ms apart, while every node takes writes all the time.
    @Test func holdsAreSpacedByHowManyNodesTheSenderHearsFrom() throws {
        let four = try Self.holdsGaps(nodes: 4), twelve = try Self.holdsGaps(nodes: 12)
        #expect(four.count > 50 && twelve.count > 200, "HOLDS sent: \(four.count + 1) and \(twelve.count + 1) or more")
        #expect((four.min() ?? 0) >= 100 && four.contains { $0 < 200 }, "gaps of four nodes: \(four.sorted().prefix(5))")
        #expect((twelve.min() ?? 0) >= 200, "gaps of twelve nodes: \(twelve.sorted().prefix(5))")
    }

    /// The time between each HOLDS and the one before to the same peer from the same node, once
    /// a household of `nodes`, all paired, has formed and every node writes every 400 ms.
    static func holdsGaps(nodes count: Int) throws -> [Int64] {
        let net = VirtualNet()
        let names = ["phone"] + (1..<count).map { "mac\($0)" }
        for (i, name) in names.enumerated() {
            let replica = try net.memoryReplica(i == 0 ? .phone : .mac, seed: 500 + UInt64(i))
            net.add(name, replica: replica, peers: Array(names[(i + 1)...]), seed: UInt64(i + 1))
        }
        for name in names { net.start(name) }
        net.run(for: 5_000)
        let t0 = net.now
        for round in 0..<10 {
            for (i, name) in names.enumerated() {
                _ = try net.write(name, label: "round \(round)")
                net.run(for: 400 / Int64(names.count) + Int64(i % 2))
            }
        }
        var last: [String: Int64] = [:], gaps: [Int64] = []
        for record in net.wire where record.time >= t0 {
            guard case .holds = record.message else { continue }
            let pair = record.from + ">" + record.to
            if let before = last[pair] { gaps.append(record.time - before) }
            last[pair] = record.time
        }
        return gaps
    }

    /// Each receiver's changes from every peer, and those it got more than once.
    static func mesh(relayHold: Int64) throws -> (converged: Bool, duplicates: [String]) {
        let net = VirtualNet()
        let names = ["phone", "mac1", "mac2", "mac3"]
        for (i, name) in names.enumerated() {
            let replica = try net.memoryReplica(i == 0 ? .phone : .mac, seed: 70 + UInt64(i))
            net.add(name, replica: replica, peers: Array(names[(i + 1)...]), seed: UInt64(i + 1)) { $0.session.relayHold = relayHold }
        }
        for name in names { _ = try net.write(name, count: 40, label: "offline on \(name)") }
        for name in names.reversed() { net.start(name) }
        let converged = net.run(upTo: net.now + 60_000) { names.allSatisfy { count(net.nodes[$0]!.replica) == 160 } }
        net.run(for: 5_000)
        var duplicates: [String] = []
        for receiver in names {
            var seen = Set<String>()
            for sender in names where sender != receiver {
                for key in net.sentChanges(from: sender, to: receiver) where !seen.insert(key).inserted { duplicates.append("\(receiver): \(key)") }
            }
        }
        return (converged, duplicates)
    }
}

@Suite struct RelayHoldTests {
    @Test func aNotedVectorIsReleasedAfterTheHoldAndSettlesLater() {
        let hold = RelayHold(hold: 1_000, holding: VersionVector([("a", 3)]))
        #expect(hold.cap(heldFor: 1_000, now: 0) == nil, "nothing noted: nothing held")
        hold.noted(VersionVector([("a", 5), ("b", 2)]), now: 100)
        #expect(hold.cap(heldFor: 1_000, now: 100) == VersionVector([("a", 3)]))
        #expect(hold.nextRelease == 1_100)
        #expect(!hold.release(now: 1_099))
        #expect(hold.release(now: 1_100))
        #expect(hold.cap(heldFor: 1_000, now: 1_100) == nil, "released: nothing held from other peers")
        #expect(hold.cap(heldFor: 2_000, now: 1_100) == VersionVector([("a", 3)]), "the second in turn waits a hold more")
        #expect(hold.cap(heldFor: hold.settle, now: 1_100) == VersionVector([("a", 3)]), "a direct node's writes wait to settle")
        // Woken for a turn only while a session waits for one, then when the vector settles.
        #expect(hold.nextRelease == 100 + hold.settle)
        hold.wake(heldFor: 2_000, now: 1_100)
        #expect(hold.nextRelease == 2_100)
        #expect(hold.release(now: 2_100))
        #expect(hold.cap(heldFor: 2_000, now: 2_100) == nil)
        #expect(hold.nextRelease == 100 + hold.settle)
        #expect(hold.release(now: 100 + hold.settle))
        #expect(hold.cap(heldFor: hold.settle, now: 100 + hold.settle) == nil && hold.nextRelease == nil)
    }

    @Test func aBusyNodeKeepsItsNewestVectorsAndReleasesNoneEarly() {
        let hold = RelayHold(hold: 1_000)
        for t in Int64(0)..<200 { hold.noted(VersionVector([("a", UInt64(t + 1))]), now: t) }
        #expect(hold.cap(heldFor: 1_000, now: 200) == VersionVector())
        #expect(hold.release(now: 1_150))
        // Vectors noted within a tenth of a hold of the first of them are one, timed by the last.
        #expect(hold.cap(heldFor: 1_000, now: 1_150) == VersionVector([("a", 100)]))
        #expect(hold.cap(heldFor: 1_000, now: 1_198) == VersionVector([("a", 100)]))
        #expect(hold.cap(heldFor: 1_000, now: 1_199) == nil)
        // Past 64 groups the oldest go (here both of "a" and the first six of "b", noted from
        // 2,000 to 2,500): their writes are released with the next group's, noted at 2,600.
        for t in Int64(0)..<70 { hold.noted(VersionVector([("b", UInt64(t + 1))]), now: 2_000 + t * 100) }
        #expect(hold.cap(heldFor: 1_000, now: 3_599) == VersionVector())
        #expect(hold.cap(heldFor: 1_000, now: 3_600) == VersionVector([("a", 200), ("b", 7)]))
        // Not woken again within a tenth of the hold, however many vectors come of age.
        let busy = RelayHold(hold: 1_000)
        for t in Int64(0)..<200 { busy.noted(VersionVector([("a", UInt64(t + 1))]), now: t) }
        #expect(busy.release(now: 1_150))
        #expect(busy.nextRelease == 1_250)
        #expect(!busy.release(now: 1_249))
    }

    /// Every relay a peer hears from ranks the same way: each waits its own number of holds,
    /// at most until the writes settle; another peer, or another origin, has its own order.
    @Test func relaysTakeTurnsByAHashOfOriginPeerAndNode() {
        let hold = RelayHold(hold: 1_000)
        let relays = Set((1...5).map { "mac\($0)" })
        func turns(_ origin: String, _ peer: String) -> [String: Int64] {
            Dictionary(uniqueKeysWithValues: relays.map { me in
                (me, hold.holdFor(origin, to: peer, relays: relays.subtracting([me]), me: me))
            })
        }
        let far = turns("o1", "far")
        #expect(Set(far.values) == [1_000, 2_000, 3_000, 4_000, 5_000])
        let orders = [turns("o2", "far"), turns("o1", "near"), turns("o3", "far"), turns("o1", "other")]
        #expect(orders.contains { $0 != far }, "the same first relay for every origin and peer")
        // The peer's own name and ours in its list change nothing; forty relays wait at most 30 s.
        #expect(hold.holdFor("o1", to: "far", relays: relays.union(["far"]), me: "mac1") == far["mac1"])
        let many = Set((1...40).map { "mac\($0)" })
        #expect(many.map { hold.holdFor("o1", to: "far", relays: many, me: $0) }.max() == hold.settle)
    }

    @Test func noHoldHoldsNothing() {
        let hold = RelayHold(hold: 0)
        hold.noted(VersionVector([("a", 1)]), now: 0)
        #expect(hold.cap(heldFor: 1_000, now: 0) == nil && hold.nextRelease == nil)
    }
}
