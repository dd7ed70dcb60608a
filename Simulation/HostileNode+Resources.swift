import LifeSync

/// The hostile node's attacks on what an honest node holds (issue 29 §2): a trusted peer that
/// floods PINGs and reads nothing, parks most of a frame of up to the maximum size and never
/// finishes it (after its HELLO, or as its first frame, which may be a 1 MiB HELLO), announces a
/// frame over the maximum, and opens many connections at once, each parking a first frame (a
/// second HELLO'd connection of one node closes the first as a duplicate). Each runs on connections of its own that the hostile node never reads (they are not
/// among its `links`). Their numbers come from a generator of their own, made from the seed
/// alone, so the other attacks draw what they always drew. What must hold is the network's:
/// every honest node's sessions stay within one frame each and within the input budget all
/// together (`VirtualNetwork+Budget`); and the checker's: the honest nodes converge.
extension HostileNode {
    enum ResourceAttack: String, CaseIterable {
        /// Bursts of PINGs on a connection whose PONGs it never reads.
        case pingFloodUnread = "hostile_ping_flood_unread"
        /// Most of a frame, the last 1 to 4,096 bytes never sent: a BATCH of 1 to 8 MiB after its
        /// HELLO, or a HELLO of 128 KiB to 1 MiB (a trusted key's first frame may be that large).
        case parkedFrame = "hostile_parked_frame"
        /// A frame header announcing more than the maximum length.
        case oversizedFrame = "hostile_oversized_frame"
        /// Four to twelve connections to one node at once, each parking a frame before its HELLO.
        case manyConnections = "hostile_many_connections"
    }

    /// The resource attacks' generator, their connections, and when they next act.
    final class Resources {
        let random: SeededRandom
        var ends: [Int] = []
        var nextAttack: Int64 = 0

        init(seed: UInt64) { random = SeededRandom(seed: seed ^ 0x5245_534F_5552_4345) }
    }

    func mayAttackResources(_ attack: ResourceAttack) -> Bool { !simulator.options.hostileExclusions.contains(attack.rawValue) }

    func count(_ attack: ResourceAttack) {
        simulator.count(attack.rawValue)
        simulator.trace.record(simulator.now, attack.rawValue)
    }

    /// Called at each of the hostile node's steps: one resource attack every 2 to 12 s.
    func attackResources() {
        let random = resources.random
        guard simulator.now >= resources.nextAttack else { return }
        resources.nextAttack = simulator.now + 2_000 + Int64(random.next(below: 10_000))
        let allowed = ResourceAttack.allCases.filter(mayAttackResources)
        let targets = simulator.names.filter { simulator.network.isUp($0) }
        guard !allowed.isEmpty, !targets.isEmpty else { return }
        let target = targets[Int(random.next(below: UInt64(targets.count)))]
        switch allowed[Int(random.next(below: UInt64(allowed.count)))] {
        case .pingFloodUnread:
            floodUnread(target)
        case .parkedFrame:
            park(on: target, afterHello: random.next(below: 2) == 0)
        case .oversizedFrame:
            guard let end = openUnread(to: target) else { return }
            count(.oversizedFrame)
            let length = UInt32(Framing.maximumFrameLength + 1) + UInt32(random.next(below: 1 << 30))
            var w = HostileWriter()
            w.u32(length)
            w.u8(random.next(below: 2) == 0 ? MessageType.hello.rawValue : MessageType.batch.rawValue)
            w.raw([UInt8](repeating: 0, count: Int(random.next(below: 4_096))))
            simulator.network.send(w.bytes, from: end)
        case .manyConnections:
            count(.manyConnections)
            for _ in 0..<(4 + random.next(below: 9)) { park(on: target, afterHello: false) }
        }
    }

    /// Every connection of the resource attacks closed (the liveness phase).
    func stopResourceAttacks() {
        for end in resources.ends { simulator.network.close(end) }
        resources.ends.removeAll()
    }

    /// A connection of its own to `target`, never read; nil if the target cannot be reached.
    func openUnread(to target: String) -> Int? {
        guard let end = simulator.network.connect(HostileNode.name, to: target) else { return nil }
        resources.ends.append(end)
        return end
    }

    /// A HELLO under its own identity (the one it is trusted as), made without its main
    /// generator.
    func plainHello() -> [UInt8] {
        Message.hello(Hello(nodeID: nodeID, role: .phone, incarnation: incarnation, capabilities: [.seals, .receivesEntries],
                            clock: HLCTimestamp(milliseconds: Simulator.epoch + simulator.now, counter: 0), vector: VersionVector())).encoded()
    }

    /// A HELLO, then one to four bursts of 300 to 1,500 PINGs, 200 ms apart.
    func floodUnread(_ target: String) {
        guard let end = openUnread(to: target) else { return }
        count(.pingFloodUnread)
        simulator.network.send(plainHello(), from: end)
        let random = resources.random
        for burst in 0..<(1 + random.next(below: 4)) {
            var bytes: [UInt8] = []
            for i in 0..<(300 + random.next(below: 1_200)) { bytes += ping(i) }
            simulator.network.schedule(at: simulator.now + 200 * Int64(burst + 1)) { [unowned self] in
                if !stopped && resources.ends.contains(end) { simulator.network.send(bytes, from: end) }
            }
        }
    }

    /// Most of a BATCH (after a HELLO) or of a HELLO (as the first frame), never finished.
    func park(on target: String, afterHello: Bool) {
        guard let end = openUnread(to: target) else { return }
        count(.parkedFrame)
        let random = resources.random
        let length = (afterHello ? Framing.maximumFrameLength : Message.Limits.maximumHandshakeFrameLength) >> Int(random.next(below: 4))
        let withheld = 1 + Int(random.next(below: 4_096))
        var w = HostileWriter()
        if afterHello { w.raw(plainHello()) }
        w.u32(UInt32(length))
        w.u8(afterHello ? MessageType.batch.rawValue : MessageType.hello.rawValue)
        w.raw([UInt8](repeating: 0, count: length - 1 - withheld))
        simulator.network.send(w.bytes, from: end)
    }
}
