import LifeSync

/// Crashing and restarting nodes, and the workload's writes.
extension Simulator {
    /// The node stops at once: in-memory state (sessions, timers, anything not committed) is
    /// gone; its SQLite file (here: shared memory kept by a second connection) survives.
    func crash(_ name: String) {
        guard let node = nodes[name], node.isUp else { return }
        count("crash")
        trace.record(now, "crash \(name)")
        node.core = nil
        node.replica = nil
        node.scheduledTick = nil
        for id in connections.keys.sorted() {
            guard let c = connections[id], c.open, c.dialer == name || c.acceptor == name else { continue }
            c.open = false
            let otherEnd = c.dialer == name ? 2 * id + 1 : 2 * id
            queue.push(.closeEnd(end: otherEnd), at: now + c.latency)
        }
    }

    /// One random local write on a random node that is up.
    func performOperation() {
        let up = names.filter { nodes[$0]!.isUp }
        guard !up.isEmpty else { return }
        let name = up[Int(workload.next(below: UInt64(up.count)))]
        let roll = workload.next(below: 100)
        write(on: name, kind: roll < 50 ? .add : roll < 85 ? .update : .delete)
    }

    enum WriteKind { case add, update, delete }

    func write(on name: String, kind: WriteKind) {
        guard let node = nodes[name], let replica = node.replica, let core = node.core else { return }
        do {
            var id: String
            switch kind {
            case .add:
                let entry = try replica.add(json: .object([
                    ("category", .string(["mood", "note", "work"][Int(workload.next(below: 3))])),
                    ("data", .object([("text", .string("w\(ledger.writes.count) on \(name)"))])),
                ]))
                id = entry.id
            case .update, .delete:
                let live = try replica.entries(matching: EntryQuery(limit: 1_000_000)).map(\.id).sorted()
                guard !live.isEmpty else { return write(on: name, kind: .add) }
                id = live[Int(workload.next(below: UInt64(live.count)))]
                if kind == .update {
                    try replica.update(id: id, patch: .object([("data", .object([("text", .string("u\(ledger.writes.count) on \(name)"))]))]))
                } else {
                    try replica.delete(id: id)
                }
            }
            guard let stamp = try replica.versionStamp(id: id) else { return }
            ledger.record(node: name, id: id, stamp: stamp, time: now)
            trace.record(now, "write \(kind) \(name) \(id) \(stamp.origin)#\(stamp.sequence)")
            perform(core.localWrite(now: now), on: name)
        } catch {
            violations.append("workload: a write on \(name) failed: \(error)")
        }
    }
}
