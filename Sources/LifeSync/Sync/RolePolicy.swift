/// Who sends what to whom (PROTOCOL.md §7.3 and §5.9): every rule of the role policy, in one
/// place. The phone is the source of truth for recordings; a watch sends its own entries and
/// recordings toward the phone and receives neither by default; a mac mirrors everything.
///
/// ```swift
/// let policy = RolePolicy(role: .watch)
/// policy.capabilities(transfersRecordings: true)   // [.recordings]: wants nothing
/// policy.mayForward(origin: o, own: mine, to: phoneCapabilities)   // only o ∈ mine
/// ```
package struct RolePolicy: Sendable, Equatable {
    /// This node's role.
    package var role: Role
    /// A watch takes entries only when configured to (`--receive-entries`).
    package var watchReceivesEntries = false

    package init(role: Role, watchReceivesEntries: Bool = false) {
        self.role = role
        self.watchReceivesEntries = watchReceivesEntries
    }

    /// What this node announces in its HELLO.
    package func capabilities(transfersRecordings: Bool) -> Capabilities {
        var capabilities: Capabilities = role.isFullReplica || watchReceivesEntries ? [.receivesEntries, .seals, .histories, .forks, .holds, .relays] : [.seals, .histories, .forks, .holds, .relays]
        if transfersRecordings {
            capabilities.insert(.recordings)
            capabilities.insert(.wants)
            // Recordings never flow to a watch.
            if role != .watch { capabilities.insert(.receivesRecordings) }
        }
        return capabilities
    }

    /// Whether this node sends `origin`'s changes to a peer with `peerCapabilities`: nothing to
    /// a peer that takes no entries; a watch only its own writes; full replicas relay everything.
    package func mayForward(origin: String, own: Set<String>, to peerCapabilities: Capabilities) -> Bool {
        guard peerCapabilities.contains(.receivesEntries) else { return false }
        return role == .watch ? own.contains(origin) : true
    }

    /// Whether recording metadata goes to a peer of `peerRole` (never to a watch; its rows count
    /// as covered by `through` all the same).
    package func sendsRecordingMetadata(to peerRole: Role) -> Bool { peerRole != .watch }

    /// Whether this node offers recording bytes to `peer`: watches and macs send to phones,
    /// phones mirror to macs, nothing goes to a watch.
    package func offersRecordings(to peer: Hello) -> Bool {
        guard peer.capabilities.contains(.recordings), peer.capabilities.contains(.receivesRecordings) else { return false }
        return Self.recordingBytesFlow(from: role, to: peer.role)
    }

    /// Whether `peer` offers recording bytes to this node (the mirror of `offersRecordings`).
    package func receivesRecordings(from peer: Hello, transfersRecordings: Bool) -> Bool {
        guard peer.capabilities.contains(.recordings), receivesRecordings(transfersRecordings: transfersRecordings) else { return false }
        return Self.recordingBytesFlow(from: peer.role, to: role)
    }

    /// Between which roles recording bytes go at all (both sides transferring recordings).
    static func recordingBytesFlow(from sender: Role, to receiver: Role) -> Bool {
        switch sender {
        case .watch: return receiver == .phone
        case .phone, .mac: return receiver != .watch
        }
    }

    /// Whether anything can move between this node and a peer of `peerRole`, either way:
    /// entries to whichever side takes them, recording bytes where roles allow. Two watches that
    /// take no entries have nothing to exchange, however often they meet.
    package func exchangesAnything(withPeer peerRole: Role, peerReceivesEntries: Bool) -> Bool {
        capabilities(transfersRecordings: false).contains(.receivesEntries) || peerReceivesEntries
            || Self.recordingBytesFlow(from: role, to: peerRole) || Self.recordingBytesFlow(from: peerRole, to: role)
    }

    /// Whether this node takes recording bytes at all.
    package func receivesRecordings(transfersRecordings: Bool) -> Bool {
        capabilities(transfersRecordings: transfersRecordings).contains(.receivesRecordings)
    }

    /// Whether a confirmation from a peer of `peerRole` lets this node drop its own copy: only a
    /// watch, only for a phone (the source of truth), unless told to keep its recordings.
    package func dropsCopy(confirmedBy peerRole: Role, keepRecordings: Bool) -> Bool {
        role == .watch && peerRole == .phone && !keepRecordings
    }

    /// Whether a dialled peer that is away is owed `origin`'s changes (pending counts): the same
    /// rule as `mayForward`, judged from what the peer last announced.
    package func owes(origin: String, own: Set<String>, peerReceivesEntries: Bool?) -> Bool {
        guard peerReceivesEntries != false else { return false }
        return role == .watch ? own.contains(origin) : true
    }
}
