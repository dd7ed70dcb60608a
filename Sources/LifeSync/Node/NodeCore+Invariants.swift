extension NodeCore {
    /// What holds between any two calls of the driver, checked in debug builds after each one
    /// (`assert(invariantsHold())`, as `DeltaSync` checks its own where they change):
    ///
    /// 1. A connection made by dialling names a dialer the node has.
    /// 2. While the node runs, a dialer that is connected names an open connection, and that
    ///    connection names the dialer back. (Stopping, the node leaves its dialers as they are.)
    /// 3. While it stops, no session is open or awaiting its HELLO: `shutdown` closed every one,
    ///    a connection accepted or dialled after it is closed without one, and a closed session
    ///    stays closed.
    /// 4. A connection silenced (`Connection.silenced`) is one closed as a duplicate.
    /// 5. What the node remembers of strangers stays within its bounds: discovery's announcers
    ///    and refused senders (`DiscoveryMemory`), the untrusted keys noted (`untrustedNoted`).
    func invariantsHold() -> Bool {
        for (id, conn) in connections {
            if let dialer = conn.dialer { precondition(dialers.indices.contains(dialer), "connection \(id) names dialer \(dialer), which does not exist") }
        }
        switch phase {
        case .running:
            for (i, dialer) in dialers.enumerated() {
                if case .connected(let id) = dialer.state {
                    precondition(connections[id]?.dialer == i, "dialer \(i) is connected on \(id), which is not its connection")
                }
            }
        case .stopping:
            for (id, conn) in connections {
                precondition(conn.session.state == .closed, "connection \(id) has a live session while the node stops")
            }
        }
        for (id, conn) in connections where conn.silenced {
            precondition(conn.closedAsDuplicate, "connection \(id) is silenced without being closed as a duplicate")
        }
        precondition(discovery.withinBounds && untrustedNoted.withinBounds, "a memory of strangers is over its bound")
        return true
    }
}
