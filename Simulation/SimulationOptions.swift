import LifeSync

/// What one simulated run does: the nodes, how long, how hostile. Every field has a default
/// that makes the default scenario of `lifesync simulate`.
package struct SimulationOptions: Sendable {
    /// Node roles in order; names are `role` plus a number when a role repeats (watch1, watch2).
    package var roles: [Role] = [.phone, .mac, .watch, .watch]
    /// Simulated length of the safety phase (faults and writes), ms.
    package var duration: Int64 = 120_000
    /// The liveness phase must reach convergence within this long after healing, ms.
    package var settleLimit: Int64 = 900_000
    /// Local writes during the safety phase.
    package var operations = 120
    /// Whether to inject faults at all.
    package var faults = true
    /// Mean fault events during the safety phase.
    package var faultCount = 12
    /// One-way link latency bounds, ms.
    package var latency: ClosedRange<Int64> = 1...80
    /// Bytes per ms a link carries (bandwidth).
    package var bandwidth: Int64 = 2_000
    /// Largest clock offset a node starts with, ms (± this).
    package var clockSkew: Int64 = 120_000
    /// Faults on honest links (with `faults`, in the safety phase): now and then a payload (one
    /// frame) delivered twice, or held back until the next one overtakes it, as a buggy
    /// middlebox would.
    package var duplicationAndReordering = true
    /// How many payloads in a thousand on an honest link are duplicated, and as many reordered.
    package var duplicationAndReorderingPerMille = 3
    /// A hostile node takes part in the safety phase (`HostileNode`): forged and mutated frames,
    /// lying vectors, claimed identities. It holds no replica and is not judged; it falls silent
    /// for the liveness phase. So do strangers (`StrangerNode`), keys nobody trusts, which must
    /// read and write nothing (`InvariantChecker.checkStrangers`).
    package var hostile = false
    /// Attacks the hostile node leaves out, by the name it counts them under in the fault counts
    /// (`hostile_forged_vv`, …): to isolate one finding, or to run without a known one.
    package var hostileExclusions: Set<String> = []
    /// Bytes of unfinished frames all sessions of a node may hold together, bounded as the
    /// runtime bounds them (`NodeServer.Limits.maximumBufferedInput`, 64 MiB there; smaller
    /// here, so that the hostile node's parked frames spend it), and how long a frame may stay
    /// unchanged while it is spent, ms (`VirtualNetwork+Budget`). Nil: no total bound.
    package var maximumBufferedInput: Int? = 4 << 20
    package var stalledFrameTimeout: Int64 = 10_000
    /// Receivers check incoming chunks a few ms after they arrive, a random number at a time, as
    /// the runtime does on a queue of its own (`IncomingFileWriter`): acknowledgements lag and a
    /// corrupt chunk is found after later ones arrived.
    package var checksLater = true
    /// Replicas copied aside (half of them by `lifesync backup`) and later put back, the node
    /// down meanwhile (`Simulator+Restores`), the replica alone or the whole device. A sweep of
    /// its own (`simulate --restores`, in CI too): the default scenario's traces stay as they were.
    package var restores = false
    /// Defects to plant, for the tests that prove the checker can fail.
    package var plantedBugs: PlantedBugs = []
    /// Scripted events instead of (or on top of) random ones.
    package var script: [ScriptedEvent] = []
    /// When true, no random workload or faults: only the script.
    package var scriptOnly = false
    /// Receives every trace line as it is recorded (`simulate --trace`): to read a failing seed
    /// whole, not only the end the report shows.
    package var traceEcho: (@Sendable (String) -> Void)?

    package init() {}

    /// Node names for the roles, e.g. ["phone", "mac", "watch1", "watch2"].
    package var nodeNames: [String] {
        var counts: [Role: Int] = [:]
        for role in roles { counts[role, default: 0] += 1 }
        var seen: [Role: Int] = [:]
        return roles.map { role in
            seen[role, default: 0] += 1
            return counts[role]! > 1 ? "\(role.rawValue)\(seen[role]!)" : role.rawValue
        }
    }
}

/// One step of a scripted scenario (`--scenario FILE`), at a simulated time in ms.
package struct ScriptedEvent: Equatable, Sendable {
    package enum Action: Equatable, Sendable {
        /// A new entry written on the node.
        case add(node: String)
        /// A new recording (1–60 KB) attached on the node.
        case attach(node: String)
        /// An update of a random live entry the node holds.
        case update(node: String)
        case delete(node: String)
        /// Cut the node off from everyone (both directions).
        case isolate(node: String)
        /// Traffic from `from` to `to` is dropped (one way).
        case block(from: String, to: String)
        case heal
        case crash(node: String)
        case restart(node: String)
        /// Move the node's wall clock by `by` ms (negative: backwards).
        case clockJump(node: String, by: Int64)
        /// Remove the link between two nodes for good (no dialling either way).
        case unlink(a: String, b: String)
    }

    package var time: Int64
    package var action: Action

    package init(time: Int64, action: Action) {
        self.time = time
        self.action = action
    }
}
