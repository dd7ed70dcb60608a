/// What a node's LAN discovery remembers between datagrams (`NodeCore+Discovery`): the address
/// each trusted node was last heard at, what each announcer last said, and when each refused
/// sender was last logged. It owns the bounds: `NodeCore.discoveryMemory` announcers and as many
/// refused senders at most.
///
/// ```swift
/// guard discovery.hear(announcement, at: "192.168.1.20:7002", now: now) else { return [] }
/// ```
struct DiscoveryMemory {
    /// The address discovery last heard each trusted node at; dialled first (`dialTargets`).
    var addresses: [String: String] = [:]
    /// What each announcer (by node ID) last announced, and when.
    private var heard: [String: HeardAnnouncement] = [:]
    /// When each refused sender (by host) was last logged.
    private var refused = NotedAt<String>(interval: NodeCore.discoveryRefusalInterval, capacity: NodeCore.discoveryMemory)

    /// Whether an announcement is worth acting on: a new announcer, a changed one (a restart, a
    /// new key, a new address), or an unchanged one due for a refresh; and notes it. The same run
    /// heard at a second address while the first is still heard keeps the first. False, too,
    /// while the memory is full of live announcers.
    mutating func hear(_ announcement: Announcement, at address: String, now: Int64) -> Bool {
        let id = announcement.nodeID
        if var last = heard[id], last.fingerprint == announcement.fingerprint, last.instance == announcement.instance {
            if last.address == address {
                last.heardAt = now
                let due = now - last.notedAt >= NodeCore.discoveryRefreshInterval
                if due { last.notedAt = now }
                heard[id] = last
                return due
            }
            if now - last.heardAt < NodeCore.discoveryAddressHold { return false }
        } else if heard[id] == nil && heard.count >= NodeCore.discoveryMemory {
            heard = heard.filter { now - $0.value.heardAt < NodeCore.discoveryAddressHold }
            guard heard.count < NodeCore.discoveryMemory else { return false }
        }
        heard[id] = HeardAnnouncement(address: address, fingerprint: announcement.fingerprint, instance: announcement.instance,
                                      heardAt: now, notedAt: now)
        return true
    }

    /// Whether a refused datagram from `host` is to be logged (once a minute per sender); if
    /// it is, it is noted.
    mutating func noteRefused(_ host: String, now: Int64) -> Bool {
        refused.note(host, now: now)
    }

    /// Forgets what was learnt of nodes no longer trusted: trusted again, a node's next
    /// announcement counts as new.
    mutating func forgetAll(but trusted: Set<String>) {
        for nodeID in addresses.keys where !trusted.contains(nodeID) {
            addresses[nodeID] = nil
            heard[nodeID] = nil
        }
    }

    /// Whether the announcers and refused senders are within their bound (`NodeCore.invariantsHold`).
    var withinBounds: Bool { heard.count <= NodeCore.discoveryMemory && refused.withinBounds }
}

/// What one announcer last said: acted on (stored, logged, dialled) only when it changes, or
/// to refresh `last_seen` every `discoveryRefreshInterval`.
struct HeardAnnouncement {
    var address: String
    var fingerprint: SHA256.Digest
    var instance: UInt64
    /// When it was last heard saying exactly this, and when that was last acted on.
    var heardAt: Int64
    var notedAt: Int64
}
