/// Recordings a receiver lacks, named to its sender (PROTOCOL.md §5.9.9, WANT).
///
/// A sender offers what its peer has not confirmed; a confirmation is a fact about the past. A
/// receiver put back whole from an older copy (its replica, write mark and recording folder
/// together) has lost bytes it once confirmed, and nothing the sender holds can tell it: its
/// HELLO looks like any node's that was away. The receiver can tell, so it says so: once per
/// session, after the sender's first CAUGHT_UP (the metadata has arrived by then), it names the
/// live recordings whose metadata it holds and whose bytes it lacks. The sender offers those it
/// holds first, whatever it recorded of an earlier delivery. The word costs the sender only
/// bytes the peer is entitled to anyway, and lives in the session alone: nothing is recorded.
extension SyncSession {
    /// Whether the peer sends us recording bytes and takes a WANT.
    var mayWant: Bool {
        guard storage != nil, let peer, peer.capabilities.contains(.wants) else { return false }
        return policy.receivesRecordings(from: peer, transfersRecordings: true)
    }

    /// Names the recordings we lack to the peer, at most once per session, in WANTs of at most
    /// `maximumWantedRecordings` each (`maximumWantsPerSession` of them).
    func sendWants(actions: inout [SessionAction]) {
        guard open?.wantsSent == false, mayWant else { return }
        open?.wantsSent = true
        let page = Message.Limits.maximumWantedRecordings
        guard var lacking = try? replica.recordingsWithoutBytes(limit: page * Message.Limits.maximumWantsPerSession) else { return }
        if let incoming = open?.incoming?.id { lacking.removeAll { $0 == incoming } }
        for start in stride(from: 0, to: lacking.count, by: page) {
            actions.append(.send(Message.want(recordingIDs: Array(lacking[start..<min(start + page, lacking.count)])).encoded()))
        }
    }

    /// The peer lacks these recordings: those we hold and may send it go ahead of the rest. A
    /// peer we send no recordings to is not answered; one that sends more WANTs than a session
    /// allows is refused.
    func receiveWant(_ ids: [String], now: Int64, actions: inout [SessionAction]) throws {
        guard let session = open else { return }
        guard session.wantsReceived < Message.Limits.maximumWantsPerSession else {
            throw WireError(.limitExceeded, "more than \(Message.Limits.maximumWantsPerSession) WANTs in one session")
        }
        open?.wantsReceived += 1
        guard mayOfferRecordings else { return }
        // The transfer under way is no news (its WANT crossed our OFFER), nor is a repeat.
        let known = Set(session.wanted.map(\.id) + [session.outgoing?.id].compactMap { $0 })
        let held = (try? replica.presentRecordings(ids: ids.filter { !known.contains($0) })) ?? []
        open?.wanted += held
        offerNext(now: now, actions: &actions)
    }
}
