import Foundation
import LifeSync
import LifeSyncRuntime

/// Nodes on loopback in this process, each on its own thread with its own replica file, plus
/// separate connections to those files for the test to write and read (as the CLI would).
package final class LoopbackCluster: @unchecked Sendable {
    package let directory = TemporaryDirectory("lifesync-cluster")
    package private(set) var nodes: [String: NodeThread] = [:]
    package private(set) var logs: [String: [String]] = [:]
    private let logLock = NSLock()

    package init() {}

    package func path(_ name: String) -> String { directory.file("\(name).sqlite") }

    private var created: [String] = []

    /// Creates the replica `name` with `role` and its key, paired with every node created before
    /// (each trusts the other), as `lifesync id` and `lifesync trust` would.
    @discardableResult
    package func create(_ name: String, role: Role) throws -> Replica {
        let replica = try Replica.create(path: path(name), role: role, clock: SystemClock(), random: SystemRandom())
        for other in created { try LocalPairing.pair([replica, try open(other)]) }
        created.append(name)
        return replica
    }

    /// A fresh connection to `name`'s replica.
    package func open(_ name: String) throws -> Replica {
        try Replica(path: path(name), clock: SystemClock(), random: SystemRandom())
    }

    /// Starts node `name` listening on `listen` (port 0 picks one) and dialling `peers`.
    @discardableResult
    package func start(_ name: String, listen: String? = "127.0.0.1:0", peers: [String] = [],
                      limits: NodeServer.Limits = NodeServer.Limits(),
                      configure: (inout NodeConfiguration) -> Void = { _ in }) throws -> NodeThread {
        var configuration = NodeConfiguration(peers: peers)
        configuration.reconnectBase = 100
        configuration.reconnectMaximum = 500
        configuration.debounce = 50
        configure(&configuration)
        let node = try NodeThread(path: path(name), configuration: configuration, listen: listen, limits: limits, name: name) { [weak self] line in
            guard let self else { return }
            self.logLock.lock(); self.logs[name, default: []].append(line); self.logLock.unlock()
        }
        nodes[name] = node
        return node
    }

    package func stop(_ name: String) {
        nodes.removeValue(forKey: name)?.stop()
    }

    package func log(_ name: String) -> [String] {
        logLock.lock(); defer { logLock.unlock() }
        return logs[name] ?? []
    }

    /// The port node `name` listens on.
    package func port(_ name: String) -> UInt16 {
        UInt16(nodes[name]!.listeningAddress!.split(separator: ":").last!)!
    }

    package func address(_ name: String) -> String { nodes[name]!.listeningAddress! }

    deinit { for node in nodes.values { node.stop() } }
}
