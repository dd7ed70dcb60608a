import Dispatch
import Glibc
import LifeSync

/// A `NodeServer` running on a thread of its own: how the demo and the loopback tests run
/// several nodes in one process. `stop()` shuts the node down cleanly and waits for it.
public final class NodeThread: @unchecked Sendable {
    public let server: NodeServer
    private let finished = DispatchSemaphore(value: 0)
    private var stopped = false

    /// Opens the replica at `path` on the node's own connection and starts serving. Each line
    /// `log` receives starts with `[name] ` (see `NodeServer.init`). `log` runs on the node's thread.
    public init(path: String, configuration: NodeConfiguration, listen: String?, limits: NodeServer.Limits = NodeServer.Limits(),
                name: String? = nil, log: @escaping @Sendable (String) -> Void) throws {
        let replica = try Replica(path: path, clock: SystemClock(), random: SystemRandom())
        server = try NodeServer(replica: replica, configuration: configuration, listen: listen, limits: limits, name: name, log: log)
        let server = self.server, finished = self.finished
        detachThread(named: "lifesync-\(replica.identity.role.rawValue)") {
            server.run()
            finished.signal()
        }
    }

    public var listeningAddress: String? { server.listeningAddress }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        server.requestStop()
        finished.wait()
    }

    deinit { stop() }
}

/// Polls `condition` every `interval` seconds (50 ms unless told) until it holds or `timeout`
/// seconds pass; returns whether it held.
package func waitUntil(timeout: Double, every interval: Double = 0.05, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = MonotonicClock.seconds() + timeout
    while MonotonicClock.seconds() < deadline {
        if try condition() { return true }
        usleep(useconds_t(interval * 1_000_000))
    }
    return try condition()
}
