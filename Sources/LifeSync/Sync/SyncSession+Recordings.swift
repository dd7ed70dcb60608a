/// Recording transfer inside a session (PROTOCOL.md §5.9–5.13, LifeAdmin §1.1): the sender
/// offers with size, chunk size and whole-file SHA-256; the receiver accepts from where its
/// verified bytes end; chunks carry their own SHA-256; the receiver hashes while writing, syncs,
/// compares, moves the file into place and confirms with the hash it computed. The sender lets go
/// of nothing until a matching confirmation.
extension SyncSession {
    /// Whether the role policy lets us send recording bytes to this peer: the phone is the source
    /// of truth; watches and macs send to phones, phones mirror to macs, nothing goes to a watch.
    var mayOfferRecordings: Bool {
        guard storage != nil, let peer else { return false }
        return policy.offersRecordings(to: peer)
    }

    /// Lets recordings that failed in this session be tried again (the fallback timer's retry).
    package func forgetFailedRecordings() { open?.failedRecordings.removeAll() }

    /// Recordings this node holds that the peer should get and has not confirmed.
    package func pendingRecordingCount() -> Int {
        guard state == .open, mayOfferRecordings, let peer else { return 0 }
        return (try? replica.recordingsToOffer(peerNodeID: peer.nodeID, peerIncarnation: peer.incarnation).count) ?? 0
    }

    /// Offers the next recording the peer lacks, one at a time.
    func offerNext(now: Int64, actions: inout [SessionAction]) {
        guard state == .open, open?.historyStep == .done, open?.outgoing == nil, mayOfferRecordings, let storage, let peer else { return }
        // What the peer said it lacks first (`receiveWant`), then what it has not confirmed.
        guard let unconfirmed = try? replica.recordingsToOffer(peerNodeID: peer.nodeID, peerIncarnation: peer.incarnation) else { return }
        let candidates = (open?.wanted ?? []) + unconfirmed
        // Only once the peer holds the recording's metadata: a receiver takes bytes only for a
        // recording it knows, and checks them against that metadata. A wanted one stays wanted
        // until confirmed, so it may have been deleted here since.
        guard let recording = candidates.first(where: { candidate in
            (open?.failedRecordings[candidate.id] ?? nil).map { now >= $0 } ?? true && open?.claimedByPeer.contains(candidate.id) != true
                && !isDeleted(candidate.id) && holdsCopy(of: candidate, in: storage, actions: &actions) && peerHoldsMetadata(of: candidate.id)
        }) else { return }
        open?.failedRecordings[recording.id] = nil
        let chunkSize = configuration.transfer.chunkSize
        open?.outgoing = OutgoingTransfer(recording: recording, now: now,
                                          digests: storage.chunkDigests(recording.storageName, chunkSize: chunkSize), chunkSize: chunkSize)
        lastSent = now
        actions.append(.send(Message.offer(Offer(recordingID: recording.id, fileName: recording.fileName, mediaType: recording.mediaType,
                                                  size: recording.size, chunkSize: configuration.transfer.chunkSize, sha256: recording.sha256)).encoded()))
    }

    /// Whether our copy of `recording` is there; a copy the replica says it holds and storage
    /// lacks is marked damaged, so `recordings` says why it is not sent.
    func holdsCopy(of recording: Recording, in storage: RecordingStorage, actions: inout [SessionAction]) -> Bool {
        guard !storage.exists(recording.storageName) else { return true }
        noteDamaged(recording.id, reason: "local copy is missing", actions: &actions)
        return false
    }

    func noteDamaged(_ id: String, reason: String, actions: inout [SessionAction]) {
        try? replica.markRecordingDamaged(id: id, reason: reason)
        actions.append(.event(.recordingFailed(id: id, reason: "damaged: \(reason); not offered until it is repaired or attached again", sending: true)))
    }

    /// Offers `id` again later, waiting twice as long after each failure in this session (the
    /// retry delay, then up to 32 times it): a peer that keeps refusing it is asked less and less.
    func retryLater(_ id: String, now: Int64) {
        let failures = (open?.failureCounts[id] ?? 0) + 1
        open?.failureCounts[id] = failures
        open?.failedRecordings[id] = now + configuration.transfer.retryDelay << Int64(min(failures - 1, 5))
    }

    /// Whether the peer is known to hold the version of the recording's metadata we hold.
    func peerHoldsMetadata(of id: String) -> Bool {
        guard let delta = open?.delta, let stamp = try? replica.recordingStamp(id: id) else { return false }
        return delta.peerHas[stamp.origin] >= stamp.sequence
    }

    /// Gives up an outgoing transfer the receiver stopped moving on (see `stallTimeout`).
    func abandonStalledTransfer(now: Int64, actions: inout [SessionAction]) {
        guard let transfer = open?.outgoing, transfer.isStalled(now: now, timeout: configuration.transfer.stallTimeout) else { return }
        open?.outgoing = nil
        retryLater(transfer.id, now: now)
        actions.append(.event(.recordingFailed(id: transfer.id, reason: "no progress for \((now - transfer.lastProgress) / 1000) s", sending: true)))
        offerNext(now: now, actions: &actions)
    }

    // MARK: - Sending

    func receiveAccept(id: String, offset: UInt64, now: Int64, actions: inout [SessionAction]) throws {
        guard var transfer = open?.outgoing, transfer.id == id else { return }  // about a transfer we gave up
        try transfer.accept(offset: offset, chunkSize: configuration.transfer.chunkSize, now: now)
        open?.outgoing = transfer
        actions.append(.event(.recordingProgress(id: id, done: transfer.acknowledged, total: transfer.recording.size, sending: true)))
        sendChunks(now: now, actions: &actions)
    }

    /// Sends the chunks the window has room for (`OutgoingTransfer.fill`).
    func sendChunks(now: Int64, actions: inout [SessionAction]) {
        guard var transfer = open?.outgoing, transfer.accepted, let storage else { return }
        do {
            var frames = try transfer.fill(chunkSize: configuration.transfer.chunkSize, window: configuration.transfer.window, from: storage)
            if configuration.plantedBugs.contains(.wrongChunkDigest) {
                // The digest's last byte: after length, type, the ID's str16 and the offset (§5.9.3).
                let at = 4 + 1 + 2 + transfer.id.utf8.count + 8 + 31
                for i in frames.indices { frames[i][at] ^= 0xFF }
            }
            if !frames.isEmpty { lastSent = now }
            actions += frames.map { .send($0) }
        } catch {
            // Our own copy is unreadable (tried again later) or damaged (not offered again).
            retryLater(transfer.id, now: now)
            open?.outgoing = nil
            actions.append(.send(Message.failure(recordingID: transfer.id, code: TransferFailure.storageFailure.rawValue,
                                                 message: "sender cannot read its copy: \(error)").encoded()))
            if let damaged = error as? LocalCopyDamaged {
                noteDamaged(transfer.id, reason: damaged.reason, actions: &actions)
            } else {
                actions.append(.event(.recordingFailed(id: transfer.id, reason: "cannot read the local copy: \(error)", sending: true)))
            }
            offerNext(now: now, actions: &actions)
            return
        }
        open?.outgoing = transfer
        if transfer.sent == transfer.recording.size && configuration.plantedBugs.contains(.watchRemovesBeforeConfirmation) {
            removeWatchCopy(transfer.recording, actions: &actions)  // PLANTED BUG: before the confirmation
        }
    }

    func receiveConfirm(id: String, digest: SHA256.Digest, now: Int64, actions: inout [SessionAction]) {
        guard let transfer = open?.outgoing, transfer.id == id, let peer else { return }
        open?.outgoing = nil
        let confirmation = transfer.confirmation(of: digest)
        guard confirmation != .mismatch else {
            // A confirmation that does not match proves nothing: the recording stays pending.
            retryLater(id, now: now)
            actions.append(.event(.recordingFailed(id: id, reason: "the confirmation's checksum does not match", sending: true)))
            offerNext(now: now, actions: &actions)
            return
        }
        guard confirmation == .proof else {
            // "I have it already": believed for this session only (nothing is removed, and the
            // recording stays pending for the next one). Only delivered bytes are proof.
            open?.claimedByPeer.insert(id)
            actions.append(.event(.recordingClaimedByPeer(id: id)))
            offerNext(now: now, actions: &actions)
            return
        }
        do {
            try replica.recordConfirmation(id: id, nodeID: peer.nodeID, role: peer.role, sha256: transfer.recording.sha256, incarnation: peer.incarnation)
        } catch {
            retryLater(id, now: now)
            actions.append(.event(.recordingFailed(id: id, reason: "could not record the confirmation: \(error)", sending: true)))
            return
        }
        open?.failureCounts[id] = nil
        // Wanted until now: a transfer that failed is offered again (`retryLater`), for nothing
        // but the WANT says the peer lacks it.
        open?.wanted.removeAll { $0.id == id }
        actions.append(.event(.recordingConfirmed(id: id)))
        // The only automatic removal there is: a watch's copy, once a phone has proved it holds
        // it — by acknowledging bytes this session sent, up to the end (the last chunk's running
        // digest covers the whole file, resumed prefix included).
        if policy.dropsCopy(confirmedBy: peer.role, keepRecordings: configuration.transfer.keepRecordings) {
            removeWatchCopy(transfer.recording, actions: &actions)
        }
        offerNext(now: now, actions: &actions)
    }

    private func removeWatchCopy(_ recording: Recording, actions: inout [SessionAction]) {
        guard let storage, storage.exists(recording.storageName) else { return }
        do {
            try replica.setRecordingFile(id: recording.id, state: .removed, sha256: recording.sha256, received: 0)
            try storage.remove(recording.storageName)
            actions.append(.event(.recordingCopyRemoved(id: recording.id)))
        } catch {
            actions.append(.event(.recordingFailed(id: recording.id, reason: "could not remove the watch copy: \(error)", sending: true)))
        }
    }

    /// A FAILURE never removes anything here: a receiver has no say over our copy. A user's
    /// delete reaches us as a replicated tombstone (or not at all, on a watch, which then keeps
    /// its copy); `deleted` from a peer only stops this transfer.
    func receiveFailure(id: String, code: UInt16, text: String, now: Int64, actions: inout [SessionAction]) {
        if configuration.plantedBugs.contains(.trustsFailureDeleted), code == TransferFailure.deleted.rawValue,
           open?.outgoing?.id == id, let storage, !isDeleted(id) {
            try? replica.deleteRecording(id: id, from: storage)  // PLANTED BUG: the receiver's word as a user delete
        }
        if let transfer = open?.outgoing, transfer.id == id {
            open?.outgoing = nil
            if transfer.digests != nil, code == TransferFailure.corruptChunk.rawValue || code == TransferFailure.checksumMismatch.rawValue {
                // Chunks sent with the kept digests did not match on arrival: the copy may have
                // changed since they were kept. Only a cache goes; the next attempt hashes the
                // copy itself, and marks it damaged if it is.
                storage?.forgetChunkDigests(transfer.recording.storageName)
            }
            retryLater(id, now: now)
            actions.append(.event(.recordingFailed(id: id, reason: "peer refused (\(TransferFailure.name(code))): \(text)", sending: true)))
            offerNext(now: now, actions: &actions)
        } else if open?.incoming?.id == id {
            open?.incoming = nil  // the sender gave up; the verified prefix stays for a resume…
            if isDeleted(id) {
                storage?.discardTemporary(id)  // …unless our own replica says the recording was deleted
                try? replica.setRecordingFile(id: id, state: .removed, sha256: (try? replica.recording(id: id))?.recording.sha256 ?? SHA256.Digest(bytes: [UInt8](repeating: 0, count: 32)), received: 0)
            }
        }
    }

    // MARK: - Receiving

    func receiveOffer(_ offer: Offer, now: Int64, actions: inout [SessionAction]) throws {
        guard let storage, capabilities.contains(.receivesRecordings) else {
            throw WireError(.unexpectedMessage, "OFFER to a node that does not receive recordings")
        }
        func refuse(_ failure: TransferFailure, _ text: String) {
            actions.append(.send(Message.failure(recordingID: offer.recordingID, code: failure.rawValue, message: text).encoded()))
            actions.append(.event(.recordingFailed(id: offer.recordingID, reason: text, sending: false)))
        }
        if var current = open?.incoming, current.id == offer.recordingID, current.offer == offer {
            // The same offer again (a duplicate, or the sender's retry after it gave up waiting):
            // the transfer goes on from what arrived, its running hash intact, once every chunk
            // handed on is judged (the sender starts again where this ACCEPT says).
            let outcome = current.settle(waiting: true)
            open?.incoming = current
            settled(outcome, acknowledgingAnyway: true, now: now, actions: &actions)
            return
        }
        open?.incoming = nil
        guard offer.size <= configuration.transfer.maximumSize else {
            return refuse(.tooLarge, "\(offer.size) bytes exceed the maximum \(configuration.transfer.maximumSize)")
        }
        if let problem = Recording.fileNameProblem(offer.fileName) { return refuse(.badName, "file name " + problem) }
        let sha = offer.sha256
        // Bytes are taken only for a recording whose metadata replicated here, and only the bytes
        // it names: a peer cannot substitute content, nor make us store what nobody attached.
        guard let known = try? replica.recording(id: offer.recordingID) else {
            return refuse(.unknownRecording, "no metadata for \(offer.recordingID) here yet; offer it after it synced")
        }
        if known.deleted { return refuse(.deleted, "the recording was deleted by the user") }
        guard known.recording.sha256 == sha, known.recording.size == offer.size, known.recording.fileName == offer.fileName else {
            return refuse(.metadataMismatch, "the offer (\(offer.size) bytes, \(sha.hex.prefix(16))…) does not match the recording's metadata (\(known.recording.size) bytes, \(known.recording.sha256.hex.prefix(16))…)")
        }
        if let file = try? replica.recordingFile(id: offer.recordingID), file.state == .present, storage.exists(known.recording.storageName) {
            // A verified file is never overwritten. The offer is no proof that the offerer holds
            // the bytes (anyone can copy metadata), so it earns no confirmation here: when we
            // offer it the file, its own CONFIRM is the proof.
            actions.append(.send(Message.confirm(recordingID: offer.recordingID, sha256: offer.sha256).encoded()))
            return
        }
        guard incomingTransfers.claim(offer.recordingID) else {
            return refuse(.notAccepted, "it is being received from another peer; offer it again later")
        }
        // Resume from the end of the last whole chunk of an earlier attempt at the same bytes.
        let chunk = UInt64(offer.chunkSize)
        var resume: UInt64 = 0
        if !configuration.plantedBugs.contains(.resumeFromZero),
           let file = try? replica.recordingFile(id: offer.recordingID), file.state == .partial, file.sha256 == sha {
            resume = min(storage.temporarySize(offer.recordingID), offer.size) / chunk * chunk
        }
        let transfer: IncomingTransfer
        do {
            transfer = try IncomingTransfer.start(offer, resumingAt: resume, in: storage)
            try replica.setRecordingFile(id: offer.recordingID, state: .partial, sha256: sha, received: resume)
        } catch {
            incomingTransfers.release(offer.recordingID)
            storage.discardTemporary(offer.recordingID)
            return refuse(.storageFailure, "cannot prepare the temporary file: \(error)")
        }
        open?.incoming = transfer
        if resume > 0 { actions.append(.event(.recordingResumed(id: offer.recordingID, offset: resume))) }
        actions.append(.send(Message.accept(recordingID: offer.recordingID, offset: resume).encoded()))
        if transfer.isComplete { finishIncoming(now: now, actions: &actions) }
    }

    func receiveChunk(_ chunk: Chunk, now: Int64, actions: inout [SessionAction]) throws {
        guard var transfer = open?.incoming, transfer.id == chunk.recordingID else { return }  // after a refusal
        let outcome = transfer.take(chunk)
        open?.incoming = transfer
        settled(outcome, now: now, actions: &actions)
    }

    /// Verdicts on chunks that arrived earlier (a storage that checks them on a thread of its
    /// own): the runtime ticks the session when one comes in.
    func collectVerdicts(now: Int64, actions: inout [SessionAction]) {
        guard var transfer = open?.incoming, transfer.verified < transfer.received else { return }
        let outcome = transfer.settle(waiting: false)
        open?.incoming = transfer
        settled(outcome, now: now, actions: &actions)
    }

    /// Acts on what the incoming transfer's writer judged: a refusal ends the transfer; newly
    /// verified bytes are noted (every 16 chunks), acknowledged and, once the file is whole,
    /// finished. `acknowledgingAnyway`: an ACCEPT goes even when nothing new was verified.
    private func settled(_ outcome: IncomingTransfer.ChunkOutcome, acknowledgingAnyway: Bool = false, now: Int64, actions: inout [SessionAction]) {
        guard let transfer = open?.incoming else { return }
        switch outcome {
        case .refused(let failure, let text, let dropPrefix):
            open?.incoming = nil
            if dropPrefix {
                storage?.discardTemporary(transfer.id)
                try? replica.clearRecordingFile(id: transfer.id)
            }
            actions.append(.send(Message.failure(recordingID: transfer.id, code: failure.rawValue, message: text).encoded()))
            actions.append(.event(.recordingFailed(id: transfer.id, reason: text, sending: false)))
        case .taken(let verified, let checkpoint):
            if checkpoint {
                try? replica.noteRecordingProgress(id: transfer.id, received: transfer.verified)
            }
            guard verified != nil || acknowledgingAnyway else { return }
            lastSent = now
            actions.append(.send(Message.accept(recordingID: transfer.id, offset: transfer.verified).encoded()))
            actions.append(.event(.recordingProgress(id: transfer.id, done: transfer.verified, total: transfer.offer.size, sending: false)))
            if transfer.isComplete { finishIncoming(now: now, actions: &actions) }
        }
    }

    /// Whether the user deleted the recording (on this replica, or a delete that reached it).
    func isDeleted(_ id: String) -> Bool { (try? replica.recording(id: id))?.deleted == true }

    /// Syncs, compares the whole-file hash, moves the file into place, confirms.
    private func finishIncoming(now: Int64, actions: inout [SessionAction]) {
        guard let storage, let transfer = open?.incoming else { return }
        open?.incoming = nil
        // Deleted while it arrived: nothing of it stays.
        if isDeleted(transfer.id) {
            storage.discardTemporary(transfer.id)
            try? replica.setRecordingFile(id: transfer.id, state: .removed, sha256: transfer.offer.sha256, received: 0)
            actions.append(.send(Message.failure(recordingID: transfer.id, code: TransferFailure.deleted.rawValue,
                                                 message: "the recording was deleted by the user").encoded()))
            return
        }
        let computed: SHA256.Digest
        switch transfer.finish(in: storage) {
        case .mismatch(let wrong):
            try? replica.clearRecordingFile(id: transfer.id)
            actions.append(.send(Message.failure(recordingID: transfer.id, code: TransferFailure.checksumMismatch.rawValue,
                                                 message: "the file's SHA-256 is \(wrong.hex), expected \(transfer.offer.sha256.hex)").encoded()))
            actions.append(.event(.recordingFailed(id: transfer.id, reason: "whole-file checksum mismatch", sending: false)))
            return
        case .failed(let error):
            actions.append(.send(Message.failure(recordingID: transfer.id, code: TransferFailure.storageFailure.rawValue,
                                                 message: "cannot store the file: \(error)").encoded()))
            actions.append(.event(.recordingFailed(id: transfer.id, reason: "cannot store: \(error)", sending: false)))
            return
        case .stored(let digest):
            computed = digest
        }
        do {
            // Where they came from, so they are not offered back; not a confirmation: the sender
            // proved nothing to us, it only sent bytes (and may have dropped them since).
            try replica.setRecordingFile(id: transfer.id, state: .present, sha256: computed, received: transfer.offer.size, receivedFrom: peer?.nodeID,
                                         receivedFromIncarnation: peer?.incarnation)
        } catch {
            actions.append(.send(Message.failure(recordingID: transfer.id, code: TransferFailure.storageFailure.rawValue,
                                                 message: "cannot record the file: \(error)").encoded()))
            actions.append(.event(.recordingFailed(id: transfer.id, reason: "cannot record: \(error)", sending: false)))
            return
        }
        actions.append(.send(Message.confirm(recordingID: transfer.id, sha256: computed).encoded()))
        actions.append(.event(.recordingReceived(id: transfer.id, size: transfer.offer.size)))
    }
}
