import LifeSync

/// The door against strangers (`StrangerNode`): a key nobody trusts reads nothing and writes
/// nothing, however it presents itself, and the untrusted keys a node notes stay bounded.
extension InvariantChecker {
    func checkStrangers() -> [String] {
        guard let stranger = simulator.stranger else { return [] }
        var violations: [String] = []
        // Read nothing: the only frame ever sent to it is the refusal (a dialler that meets its
        // key sends that and no HELLO; an acceptor reads its HELLO and sends that).
        for frame in simulator.network.watchedFrames where frame.to == StrangerNode.name {
            if frame.errorCode != ErrorCode.notTrusted.rawValue {
                let what = frame.errorCode.map { "ERROR \($0)" } ?? "frame of type 0x\(String(frame.type, radix: 16))"
                violations.append("strangers: \(frame.from) sent the stranger a \(what) at \(frame.time) ms (only ERROR not_trusted may reach it)")
            }
        }
        // Write nothing: none of its records and none of its origins in any replica.
        for name in simulator.names {
            guard let replica = simulator.nodes[name]?.replica else { continue }
            for id in stranger.createdRecords.sorted() {
                if (try? replica.versionStamp(id: id)) ?? nil != nil || (try? replica.recording(id: id)) ?? nil != nil {
                    violations.append("strangers: \(name) holds \(id), which the stranger wrote")
                }
            }
            if let known = try? replica.knownOrigins(), let origin = known.first(where: { stranger.origins.contains($0.origin) }) {
                violations.append("strangers: \(name) knows the stranger's origin \(origin.origin)")
            }
            let pending = (try? replica.pendingPeers()) ?? []
            if pending.count > Replica.pendingLimit {
                violations.append("strangers: \(name) keeps \(pending.count) untrusted keys, more than \(Replica.pendingLimit)")
            }
            // Counted, so a test can see the bound was really reached.
            if pending.count == Replica.pendingLimit { simulator.count("stranger_pending_at_limit") }
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
