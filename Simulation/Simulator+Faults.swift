import LifeSync

/// The fault schedule: partitions (one node, random halves, one way), crashes with restart,
/// clock jumps, connection resets, and the scripted scenario steps.
extension Simulator {
    /// The timed faults, one row each (`WeightedTable`).
    enum Fault: Sendable {
        case isolate, partitionHalves, blockOneWay, crash, diskFull, clockJump, resetConnection
    }

    static let faults = WeightedTable<Fault>([
        (.isolate, 20), (.partitionHalves, 15), (.blockOneWay, 10), (.crash, 20), (.diskFull, 7), (.clockJump, 8), (.resetConnection, 20),
    ])

    func injectFault() {
        backupOrRestore()
        let fault = Self.faults.pick(faultRandom)
        let victim = names[Int(faultRandom.next(below: UInt64(names.count)))]
        let healAfter = 5_000 + Int64(faultRandom.next(below: 60_000))
        switch fault {
        case .isolate:
            isolate(victim)
            duringSafety(at: now + healAfter) { $0.heal() }
        case .partitionHalves:
            var half = Set<String>()
            for name in names where faultRandom.next(below: 2) == 0 { half.insert(name) }
            count("partition_halves")
            network.partition(half, among: names)
            network.resetConnections { half.contains($0) != half.contains($1) }
            duringSafety(at: now + healAfter) { $0.heal() }
        case .blockOneWay:
            let other = names.filter { $0 != victim }[Int(faultRandom.next(below: UInt64(names.count - 1)))]
            block(from: victim, to: other)
            duringSafety(at: now + healAfter) { $0.heal() }
        case .crash:
            crash(victim)
            network.schedule(at: now + 1_000 + Int64(faultRandom.next(below: 60_000))) { [unowned self] in restart(victim) }
        case .diskFull:
            // The disk fills up for a while: writes of incoming recordings fail.
            if let node = nodes[victim] {
                node.storage.quota = node.storage.used + 8_000
                count("disk_full")
                trace.record(now, "disk full \(victim)")
                duringSafety(at: now + healAfter) { $0.heal() }
            }
        case .clockJump:
            let jump = [-86_400_000, -3_600_000, -90_000, 90_000, 3_600_000, 86_400_000][Int(faultRandom.next(below: 6))]
            jumpClock(victim, by: Int64(jump))
        case .resetConnection:
            let open = network.openConnectionIDs
            if !open.isEmpty { network.reset(connection: open[Int(faultRandom.next(below: UInt64(open.count)))]) }
        }
    }

    /// Partitions end and full disks empty.
    func heal() {
        network.heal()
        for node in nodes.values { node.storage.quota = .max }
    }

    func restart(_ name: String) {
        if nodes[name] != nil, !network.isUp(name) { try? startNode(name) }
    }

    func isolate(_ name: String) {
        count("isolate")
        network.isolate(name, from: names)
        network.resetConnections { $0 == name || $1 == name }
    }

    func block(from: String, to: String) {
        count("one_way")
        network.block(from: from, to: to)
    }

    func jumpClock(_ name: String, by ms: Int64) {
        count("clock_jump")
        nodes[name]?.clock.offset += ms
        trace.record(now, "clock \(name) \(ms > 0 ? "+" : "")\(ms)")
    }

    func performScripted(_ action: ScriptedEvent.Action) {
        switch action {
        case .add(let node): write(on: node, kind: .add)
        case .attach(let node): attach(on: node)
        case .update(let node): write(on: node, kind: .update)
        case .delete(let node): write(on: node, kind: .delete)
        case .isolate(let node): isolate(node)
        case .block(let from, let to): block(from: from, to: to)
        case .heal: network.heal()
        case .crash(let node): crash(node)
        case .restart(let node): restart(node)
        case .clockJump(let node, let by): jumpClock(node, by: by)
        case .unlink(let a, let b): network.unlink(a, b)
        }
    }
}
