import LifeSync

/// The fault schedule: partitions (one node, random halves, one way), crashes with restart,
/// clock jumps, connection resets, and the scripted scenario steps.
extension Simulator {
    func injectFault() {
        let roll = faultRandom.next(below: 100)
        let victim = names[Int(faultRandom.next(below: UInt64(names.count)))]
        let healAfter = 5_000 + Int64(faultRandom.next(below: 60_000))
        switch roll {
        case 0..<20:
            isolate(victim)
            queue.push(.heal, at: now + healAfter)
        case 20..<35:
            var half = Set<String>()
            for name in names where faultRandom.next(below: 2) == 0 { half.insert(name) }
            count("partition_halves")
            for a in names { for b in names where half.contains(a) != half.contains(b) { blocked.insert(Simulator.direction(a, b)) } }
            trace.record(now, "partition halves \(half.sorted())")
            resetConnections { half.contains($0) != half.contains($1) }
            queue.push(.heal, at: now + healAfter)
        case 35..<45:
            let other = names.filter { $0 != victim }[Int(faultRandom.next(below: UInt64(names.count - 1)))]
            block(from: victim, to: other)
            queue.push(.heal, at: now + healAfter)
        case 45..<65:
            crash(victim)
            queue.push(.restart(node: victim), at: now + 1_000 + Int64(faultRandom.next(below: 60_000)))
        case 65..<72:
            // The disk fills up for a while: writes of incoming recordings fail.
            if let node = nodes[victim] {
                node.storage.quota = node.storage.used + 8_000
                count("disk_full")
                trace.record(now, "disk full \(victim)")
                queue.push(.heal, at: now + healAfter)
            }
        case 72..<80:
            let jump = [-86_400_000, -3_600_000, -90_000, 90_000, 3_600_000, 86_400_000][Int(faultRandom.next(below: 6))]
            jumpClock(victim, by: Int64(jump))
        default:
            let open = connections.keys.sorted().filter { connections[$0]!.open }
            if !open.isEmpty { resetConnection(open[Int(faultRandom.next(below: UInt64(open.count)))]) }
        }
    }

    func isolate(_ name: String) {
        count("isolate")
        for other in names where other != name {
            blocked.insert(Simulator.direction(name, other))
            blocked.insert(Simulator.direction(other, name))
        }
        trace.record(now, "isolate \(name)")
        resetConnections { $0 == name || $1 == name }
    }

    func block(from: String, to: String) {
        count("one_way")
        blocked.insert(Simulator.direction(from, to))
        trace.record(now, "block \(from)->\(to)")
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
        case .heal:
            blocked.removeAll()
            trace.record(now, "heal")
        case .crash(let node): crash(node)
        case .restart(let node): if let n = nodes[node], !n.isUp { try? startNode(node) }
        case .clockJump(let node, let by): jumpClock(node, by: by)
        case .unlink(let a, let b):
            unlinked.insert(Simulator.pair(a, b))
            resetConnections { Simulator.pair($0, $1) == Simulator.pair(a, b) }
        }
    }
}
