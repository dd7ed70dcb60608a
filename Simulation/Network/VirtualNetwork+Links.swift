import LifeSync

/// Connections: dials, in-order delivery with latency and bandwidth, wire faults, orderly
/// closes and resets. A connection `id` has two ends: `2 * id` (the dialler's) and `2 * id + 1`.
extension VirtualNetwork {
    final class Connection {
        /// Host names: side 0 dialled, side 1 accepted.
        let names: [String]
        let latency: Int64
        /// False once reset: nothing in flight arrives any more.
        var open = true
        /// Per side, whether that end has been told of the close (or died): nothing more reaches it.
        var closed = [false, false]
        /// Per direction (0: dialler → acceptor), when the last byte sent arrives: delivery stays in order.
        var lastArrival: [Int64] = [0, 0]
        /// Per direction, a payload held back so that the next one overtakes it (reordering).
        var held: [[UInt8]?] = [nil, nil]
        /// Neither side is a raw endpoint: middlebox faults apply.
        let betweenCores: Bool

        init(names: [String], latency: Int64, betweenCores: Bool) {
            self.names = names
            self.latency = latency
            self.betweenCores = betweenCores
        }

        func name(of end: Int) -> String { names[end % 2] }
        func side(of name: String) -> Int? { names.firstIndex(of: name) }
    }

    /// The connection ends `name` holds, open or closing.
    package func openConnections(of name: String) -> [Int] {
        connections.keys.sorted().compactMap { id in
            guard let c = connections[id], c.open, let side = c.side(of: name), !c.closed[side] else { return nil }
            return 2 * id + side
        }
    }

    /// The host at the other end of `end`.
    package func remote(of end: Int) -> String? { connections[end / 2]?.names[1 - end % 2] }

    func completeDial(from name: String, life: Int, peer: Int, to address: String) {
        guard let host = hosts[name], host.life == life, let core = host.core else { return }
        host.dialing.remove(peer)
        if let squatter = squatters[address], let endpoint = hosts[squatter]?.endpoint, reachable(name, squatter) {
            // The squatter answers, proving its own key, not the host's.
            let id = open(from: name, to: squatter)
            perform(core.connected(connection: 2 * id, peer: peer, peerKey: hosts[squatter]!.key, now: now), on: name)
            endpoint.accepted(end: 2 * id + 1, from: name)
            return
        }
        guard let targetCore = hosts[address]?.core, reachable(name, address) else {
            failedDials.append((now, name, peer))
            note("dial \(name)->\(address) failed")
            perform(core.connectFailed(peer: peer, reason: "unreachable", now: now), on: name)
            return
        }
        let id = open(from: name, to: address)
        let keys = (dialler: host.key, target: hosts[address]!.key)
        perform(core.connected(connection: 2 * id, peer: peer, peerKey: keys.target, now: now), on: name)
        perform(targetCore.accepted(connection: 2 * id + 1, remote: name, peerKey: keys.dialler, now: now), on: address)
    }

    /// A raw endpoint dials `target` and is connected at once if it can be; returns its end. It
    /// proves its own key, or `key` (a stranger may make a new key for every dial).
    package func connect(_ name: String, to target: String, key: SHA256.Digest? = nil) -> Int? {
        precondition(hosts[name]?.endpoint != nil, "\(name) is not a raw endpoint")
        guard let targetCore = hosts[target]?.core, reachable(name, target) else { return nil }
        let id = open(from: name, to: target)
        perform(targetCore.accepted(connection: 2 * id + 1, remote: name, peerKey: key ?? hosts[name]!.key, now: now), on: target)
        return 2 * id
    }

    /// A dial needs the target up and both directions open (SYN one way, SYN-ACK the other).
    func reachable(_ a: String, _ b: String) -> Bool {
        !blocked.contains(Direction(from: a, to: b)) && !blocked.contains(Direction(from: b, to: a)) && !unlinked.contains(Pair(a, b))
    }

    private func open(from name: String, to target: String) -> Int {
        let id = nextConnection
        nextConnection += 1
        let latency = configuration.latency.lowerBound + Int64(random.next(below: UInt64(configuration.latency.count)))
        let betweenCores = hosts[name]?.endpoint == nil && hosts[target]?.endpoint == nil
        connections[id] = Connection(names: [name, target], latency: latency, betweenCores: betweenCores)
        note("connect \(id) \(name)->\(target) latency \(latency)")
        return id
    }

    /// Sends bytes from `end` to the other end, in order, after latency and serialisation.
    package func send(_ bytes: [UInt8], from end: Int) {
        guard let connection = connections[end / 2], connection.open, !connection.closed[end % 2] else { return }
        let direction = end % 2
        let (from, to) = (connection.names[direction], connection.names[1 - direction])
        if !watched.isEmpty && (watched.contains(from) || watched.contains(to)) { record(bytes, from: end, connection) }
        var bytes = bytes
        // A bit flipped in a recording chunk on the way (the chunk's own checksum must catch it).
        if configuration.faults && bytes.count > 64 && bytes[4] == MessageType.chunk.rawValue && random.next(below: 100) < 3 {
            let position = bytes.count - 1 - Int(random.next(below: UInt64(min(64, bytes.count - 60))))
            bytes[position] ^= UInt8(1) << UInt8(random.next(below: 8))
            count("bit_flip")
            note("bit flip \(end) at \(position)")
        }
        var arrival = now + connection.latency + Int64(bytes.count) / max(1, configuration.bandwidth)
        if configuration.faults && random.next(below: 100) < 2 {
            arrival += 200 + Int64(random.next(below: 800))  // a lost segment, retransmitted
            count("retransmission")
        }
        if blocked.contains(Direction(from: from, to: to)) {
            // Held by TCP until the partition heals (or the connection dies first).
            arrival = max(arrival, now + configuration.partitionHold)
        }
        arrival = max(arrival, connection.lastArrival[direction])
        connection.lastArrival[direction] = arrival
        let destination = end ^ 1
        queue.push(.deliver(end: destination, bytes: bytes), at: arrival)
        // A payload held back goes right after this one: the two arrive swapped.
        if let held = connection.held[direction] {
            connection.held[direction] = nil
            queue.push(.deliver(end: destination, bytes: held), at: arrival)
        }
        // A buggy middlebox on an honest link: a payload (one frame) delivered twice, or held
        // back until the next one overtakes it.
        if configuration.faults && configuration.duplicationPerMille > 0 && connection.betweenCores {
            let roll = Int(random.next(below: 1000)), rate = min(configuration.duplicationPerMille, 500)
            if roll < rate {
                count("duplicate")
                note("duplicate \(end) \(bytes.count)")
                queue.push(.deliver(end: destination, bytes: bytes), at: arrival)
            } else if roll < 2 * rate && connection.held[direction] == nil {
                count("reorder")
                note("hold \(end) \(bytes.count)")
                connection.held[direction] = bytes
                queue.push(.release(connection: end / 2, direction: direction), at: arrival + 100 + Int64(random.next(below: 400)))
            }
        }
        assert(connection.lastArrival[direction] >= now)
    }

    /// A held payload nothing overtook goes out now, in order after what was sent since.
    func release(connection id: Int, direction: Int) {
        guard let connection = connections[id], let held = connection.held[direction] else { return }
        connection.held[direction] = nil
        let arrival = max(now, connection.lastArrival[direction])
        connection.lastArrival[direction] = arrival
        queue.push(.deliver(end: 2 * id + (1 - direction), bytes: held), at: arrival)
    }

    func deliver(_ bytes: [UInt8], to end: Int) {
        guard let connection = connections[end / 2], connection.open, !connection.closed[end % 2] else { return }
        let name = connection.name(of: end)
        guard let host = hosts[name] else { return }
        note("deliver \(end) \(bytes.count)", bytes: bytes)
        if let endpoint = host.endpoint {
            endpoint.received(end: end, bytes: bytes)
        } else if host.inputBudget != nil {
            holdBack(bytes, for: end, of: name)
        } else if let core = host.core {
            perform(core.received(connection: end, bytes: bytes, now: now), on: name)
        }
    }

    func closeEnd(_ end: Int) {
        guard let connection = connections[end / 2], !connection.closed[end % 2] else { return }
        connection.closed[end % 2] = true
        let name = connection.name(of: end)
        note("closed \(end) at \(name)")
        if let endpoint = hosts[name]?.endpoint { endpoint.closed(end: end) }
        if let host = hosts[name] { releaseBudget(of: end, host: host) }
        if let core = hosts[name]?.core { perform(core.closed(connection: end, now: now), on: name) }
        if connection.closed == [true, true] { connections[end / 2]?.open = false }
    }

    /// `end` closes its side: it hears of it at once, the other side after the bytes sent before.
    package func close(_ end: Int) {
        guard let connection = connections[end / 2], connection.open, !connection.closed[end % 2] else { return }
        shut(connection, id: end / 2, from: end % 2)
        queue.push(.closeEnd(end: end), at: now + 1)
    }

    /// Schedules the close of the side opposite `side`, after what `side` already sent.
    func shut(_ connection: Connection, id: Int, from side: Int) {
        let closeAt = max(now + connection.latency, connection.lastArrival[side]) + 1
        // Nothing sent afterwards, either way, lands before the close.
        connection.lastArrival = connection.lastArrival.map { max($0, closeAt) }
        queue.push(.closeEnd(end: 2 * id + (1 - side)), at: closeAt)
    }

    /// A reset: what is in flight is lost, and both ends see the connection die after the latency.
    package func reset(connection id: Int) {
        guard let connection = connections[id], connection.open else { return }
        connection.open = false
        count("reset")
        note("reset \(id)")
        for side in 0..<2 where !connection.closed[side] {
            queue.push(.closeEnd(end: 2 * id + side), at: now + connection.latency)
        }
    }

    /// Resets every open connection whose two hosts `cut` separates.
    package func resetConnections(where cut: (String, String) -> Bool) {
        for id in connections.keys.sorted() {
            guard let c = connections[id], c.open else { continue }
            if cut(c.names[0], c.names[1]) { reset(connection: id) }
        }
    }

    /// Open connections, by ID (for a fault that resets one at random).
    package var openConnectionIDs: [Int] { connections.keys.sorted().filter { connections[$0]!.open } }
}
