import LifeSync

/// The simulated network: dials, in-order delivery with latency, bandwidth and retransmission
/// delays, one-way and two-way partitions, and resets that cut a frame in half.
extension Simulator {
    func isBlocked(_ from: String, _ to: String) -> Bool { blocked.contains(Simulator.direction(from, to)) }

    func completeDial(from name: String, peer: Int, to address: String) {
        guard let dialer = nodes[name], let core = dialer.core else { return }
        // A dial needs the target up and both directions open (SYN one way, SYN-ACK the other).
        guard let target = nodes[address], let targetCore = target.core, !isBlocked(name, address), !isBlocked(address, name),
              !unlinked.contains(Simulator.pair(name, address)) else {
            trace.record(now, "dial \(name)->\(address) failed")
            perform(core.connectFailed(peer: peer, reason: "unreachable", now: now), on: name)
            return
        }
        let id = nextConnection
        nextConnection += 1
        let latency = options.latency.lowerBound + Int64(network.next(below: UInt64(options.latency.upperBound - options.latency.lowerBound + 1)))
        connections[id] = Connection(dialer: name, acceptor: address, latency: latency)
        trace.record(now, "connect \(id) \(name)->\(address) latency \(latency)")
        perform(core.connected(connection: 2 * id, peer: peer, now: now), on: name)
        perform(targetCore.accepted(connection: 2 * id + 1, remote: name, now: now), on: address)
    }

    /// Sends bytes from connection end `end` to the other end, in order, after latency and
    /// serialisation; occasionally delayed as if a segment had been lost and retransmitted.
    func send(_ bytes: [UInt8], from end: Int) {
        guard let connection = connections[end / 2], connection.open else { return }
        let fromDialer = end % 2 == 0
        let (from, to) = fromDialer ? (connection.dialer, connection.acceptor) : (connection.acceptor, connection.dialer)
        let direction = fromDialer ? 0 : 1
        var bytes = bytes
        // A bit flipped in a recording chunk on the way (the chunk's own checksum must catch it).
        if options.faults && !safetyOver && bytes.count > 64 && bytes[4] == MessageType.chunk.rawValue && network.next(below: 100) < 3 {
            let position = bytes.count - 1 - Int(network.next(below: UInt64(min(64, bytes.count - 60))))
            bytes[position] ^= UInt8(1) << UInt8(network.next(below: 8))
            count("bit_flip")
            trace.record(now, "bit flip \(end) at \(position)")
        }
        var arrival = now + connection.latency + Int64(bytes.count) / max(1, options.bandwidth)
        if options.faults && !safetyOver && network.next(below: 100) < 2 {
            arrival += 200 + Int64(network.next(below: 800))  // a lost segment, retransmitted
            count("retransmission")
        }
        if isBlocked(from, to) {
            // Held by TCP until the partition heals (or the connection dies first).
            arrival = max(arrival, now + options.duration)
        }
        arrival = max(arrival, connection.lastArrival[direction])
        connection.lastArrival[direction] = arrival
        let destination = fromDialer ? end + 1 : end - 1
        queue.push(.deliver(end: destination, bytes: bytes), at: arrival)
        // A payload held back goes right after this one: the two arrive swapped.
        if let held = connection.held[direction] {
            connection.held[direction] = nil
            queue.push(.deliver(end: destination, bytes: held), at: arrival)
        }
        // A buggy middlebox on an honest link: a payload (one frame) delivered twice, or held
        // back until the next one overtakes it.
        if options.faults && options.duplicationAndReordering && !safetyOver && connection.honest {
            let roll = Int(network.next(below: 1000)), rate = min(options.duplicationAndReorderingPerMille, 500)
            if roll < rate {
                count("duplicate")
                trace.record(now, "duplicate \(end) \(bytes.count)")
                queue.push(.deliver(end: destination, bytes: bytes), at: arrival)
            } else if roll < 2 * rate && connection.held[direction] == nil {
                count("reorder")
                trace.record(now, "hold \(end) \(bytes.count)")
                connection.held[direction] = bytes
                queue.push(.release(connection: end / 2, direction: direction), at: arrival + 100 + Int64(network.next(below: 400)))
            }
        }
    }

    /// A held payload nothing overtook goes out now, in order after what was sent since.
    func release(connection id: Int, direction: Int) {
        guard let connection = connections[id], let held = connection.held[direction] else { return }
        connection.held[direction] = nil
        let arrival = max(now, connection.lastArrival[direction])
        connection.lastArrival[direction] = arrival
        queue.push(.deliver(end: direction == 0 ? 2 * id + 1 : 2 * id, bytes: held), at: arrival)
    }

    /// The hostile node dials `target`: a connection if the target is up (partitions and
    /// unlinked pairs are between honest nodes); returns the hostile node's end.
    func hostileConnect(to target: String) -> Int? {
        guard let targetCore = nodes[target]?.core else { return nil }
        let id = nextConnection
        nextConnection += 1
        let latency = options.latency.lowerBound + Int64(network.next(below: UInt64(options.latency.upperBound - options.latency.lowerBound + 1)))
        connections[id] = Connection(dialer: HostileNode.name, acceptor: target, latency: latency)
        trace.record(now, "connect \(id) \(HostileNode.name)->\(target) latency \(latency)")
        perform(targetCore.accepted(connection: 2 * id + 1, remote: HostileNode.name, now: now), on: target)
        return 2 * id
    }

    /// Our side closes: the other side hears of it after the latency.
    func closeConnection(of end: Int) {
        guard let connection = connections[end / 2], connection.open else { return }
        // Bytes already sent still arrive before the close (TCP's orderly shutdown).
        let other = end % 2 == 0 ? end + 1 : end - 1
        let direction = end % 2 == 0 ? 0 : 1
        let closeAt = max(now + connection.latency, connection.lastArrival[direction]) + 1
        // Nothing sent afterwards, either way, lands before the close.
        connection.lastArrival = connection.lastArrival.map { max($0, closeAt) }
        queue.push(.closeEnd(end: other), at: closeAt)
        queue.push(.closeEnd(end: end), at: now + 1)
    }

    /// A reset: the next bytes in flight arrive cut short, then both ends see the connection die.
    func resetConnection(_ id: Int) {
        guard let connection = connections[id], connection.open else { return }
        connection.open = false
        count("reset")
        trace.record(now, "reset \(id)")
        queue.push(.closeEnd(end: 2 * id), at: now + connection.latency)
        queue.push(.closeEnd(end: 2 * id + 1), at: now + connection.latency)
    }

    /// Every open connection between the two groups is reset (as a partition eventually does).
    func resetConnections(where cut: (String, String) -> Bool) {
        for id in connections.keys.sorted() {
            guard let c = connections[id], c.open else { continue }
            if cut(c.dialer, c.acceptor) { resetConnection(id) }
        }
    }

    func count(_ kind: String) { faultCounts[kind, default: 0] += 1 }
}
