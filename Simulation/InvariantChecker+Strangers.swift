import LifeSync

/// The door against strangers (`StrangerNode`): a key nobody trusts reads nothing and writes
/// nothing, however it presents itself, and the untrusted keys a node notes stay bounded.
extension InvariantChecker {
    func checkStrangers() -> [String] {
        guard let stranger = simulator.stranger else { return [] }
        var violations: [String] = []
        // Read nothing: the only frame ever sent to it is the refusal (a dialler that meets its
        // key sends that and no HELLO; an acceptor reads its HELLO and sends that).
        // One line per sender (the first leak, and how many), so the write checks still show.
        var leaks: [String: (first: String, count: Int)] = [:]
        for frame in simulator.network.watchedFrames where frame.to == StrangerNode.name && frame.errorCode != ErrorCode.notTrusted.rawValue {
            let what = frame.errorCode.map { "ERROR \($0)" } ?? "frame of type 0x\(String(frame.type, radix: 16))"
            leaks[frame.from, default: ("\(what) at \(frame.time) ms", 0)].count += 1
        }
        for (name, leak) in leaks.sorted(by: { $0.key < $1.key }) {
            violations.append("strangers: \(name) sent the stranger \(leak.count) frames other than ERROR not_trusted, the first a \(leak.first)")
        }
        // Write nothing: none of its records and none of its origins in any replica.
        for name in simulator.names {
            guard let replica = simulator.nodes[name]?.replica else { continue }
            let held = stranger.createdRecords.sorted().filter { id in
                (try? replica.versionStamp(id: id)) ?? nil != nil || (try? replica.recording(id: id)) ?? nil != nil
            }
            if let first = held.first { violations.append("strangers: \(name) holds \(held.count) records the stranger wrote, \(first) first") }
            if let known = try? replica.knownOrigins(), let origin = known.first(where: { stranger.origins.contains($0.origin) }) {
                violations.append("strangers: \(name) knows the stranger's origin \(origin.origin)")
            }
            // Bounded apart: keys that claimed a node ID, and keys that claimed none.
            let pending = (try? replica.pendingPeers()) ?? []
            let claimed = pending.filter { $0.claimedNodeID != nil }.count, anonymous = pending.count - claimed
            if claimed > Replica.pendingLimit || anonymous > Replica.anonymousPendingLimit {
                violations.append("strangers: \(name) keeps \(claimed) untrusted keys with a claim and \(anonymous) without, "
                                  + "more than \(Replica.pendingLimit) and \(Replica.anonymousPendingLimit)")
            }
            let perHost = Dictionary(grouping: pending) { $0.address[..<($0.address.lastIndex(of: ":") ?? $0.address.endIndex)] }
            if let (host, keys) = perHost.first(where: { $0.value.count > Replica.pendingPerHost }) {
                violations.append("strangers: \(name) keeps \(keys.count) untrusted keys from \(host), more than \(Replica.pendingPerHost)")
            }
            // Counted, so a test can see a bound was really reached.
            if claimed == Replica.pendingLimit || anonymous == Replica.anonymousPendingLimit
                || perHost.values.contains(where: { $0.count == Replica.pendingPerHost }) {
                simulator.count("stranger_pending_at_limit")
            }
        }
        return violations
    }
}

/// Notes of untrusted keys (`NodeEvent.untrustedPeer`): one key is noted at most once per
/// `NodeCore.untrustedNoteInterval` by one running process (a restart forgets, by design).
extension Simulator {
    func noteUntrusted(_ fingerprint: SHA256.Digest, by name: String) {
        let key = "\(name) \(fingerprint.hex)"
        if let last = untrustedNotes[key], now - last < NodeCore.untrustedNoteInterval {
            violations.append("strangers: \(name) noted the untrusted key \(fingerprint.hex.prefix(16)) again after \(now - last) ms (at \(now) ms)")
        }
        untrustedNotes[key] = now
    }

    func forgetUntrustedNotes(of name: String) {
        untrustedNotes = untrustedNotes.filter { !$0.key.hasPrefix(name + " ") }
    }
}
