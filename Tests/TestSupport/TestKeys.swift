import Foundation
import LifeSync
import LifeSyncRuntime

/// Node keys for replicas that tests join by sessions: a node seals its own writes as it sends
/// them (PROTOCOL.md §5.2.5), so every replica that sends needs its key, as `lifesync serve`
/// gives it. One real P-256 key per node ID, made once per test process.
package enum TestKeys {
    nonisolated(unsafe) private static var keys: [String: NodeKey] = [:]
    private static let lock = NSLock()

    /// The key of `nodeID`, the same on every call.
    package static func key(for nodeID: String) -> NodeKey {
        lock.lock()
        defer { lock.unlock() }
        if let key = keys[nodeID] { return key }
        do {
            let key = try NodeKey.generate(nodeID: nodeID)
            keys[nodeID] = key
            return key
        } catch {
            fatalError("no test key for \(nodeID): \(error)")
        }
    }

    /// Gives `replica` its node's key if it has none yet.
    package static func adopt(_ replica: Replica) {
        guard replica.signer == nil else { return }
        do { try replica.adoptSigningKey(key(for: replica.identity.nodeID)) } catch { fatalError("could not adopt a test key: \(error)") }
    }
}

extension Batch {
    /// This batch with its changes sealed as `nodeID` (its key from `TestKeys`).
    package func sealed(as nodeID: String) -> Batch {
        var copy = self
        copy.seals = try! Seal.sealing(changes.map(\.encoded), as: nodeID, signer: TestKeys.key(for: nodeID))
        return copy
    }
}
