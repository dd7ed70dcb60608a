import LifeSync
import LifeSyncSimulation
import Testing
import TestSupport

/// What `lifesync recordings` says of a recording (issue 14): who confirmed it, where it came
/// from, a damaged local copy with its reason, and retries that slow down.
@Suite struct RecordingStateTests {
    static let chunk = RecordingTransferTests.chunk

    /// A confirmation is a receiver's word after its hash check of bytes we sent: the phone,
    /// which received the file, does not list the watch that sent it as a confirmer.
    @Test func onlyTheReceiverConfirmsAndTheSenderIsKeptAsWhereTheBytesCameFrom() throws {
        let watch = try TestNode(.watch, seed: 1) { $0.transfer.keepRecordings = true }
        let phone = try TestNode(.phone, seed: 2)
        let recording = try watch.attach(randomBytes(10_000, seed: 3), seed: 100)
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        let atPhone = try #require(try phone.replica.recordingStatuses().first)
        #expect(atPhone.confirmedBy.isEmpty, "the phone lists \(atPhone.confirmedBy.map(\.nodeID)) as confirmers")
        #expect(atPhone.receivedFrom == watch.replica.identity.nodeID)
        #expect(atPhone.state == "synced")
        let atWatch = try #require(try watch.replica.recordingStatuses().first)
        #expect(atWatch.confirmedBy.map(\.nodeID) == [phone.replica.identity.nodeID])
        #expect(atWatch.receivedFrom == nil)
        // Not offered back to the node it came from.
        #expect(try phone.replica.recordingsToOffer(peerNodeID: watch.replica.identity.nodeID).isEmpty)
        #expect(try phone.replica.recordingsToOffer(peerNodeID: "mac_6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d").map(\.id) == [recording.id])
    }

    /// The receiver's progress note (what `recordings` shows while a file arrives) moves the
    /// figure of an arriving file only: a note that comes late never rolls back a finished one.
    @Test func aProgressNoteMovesOnlyAnArrivingFile() throws {
        let phone = try TestNode(.phone, seed: 7)
        let digest = SHA256.hash(randomBytes(100, seed: 8))
        try phone.replica.setRecordingFile(id: "watch_rec", state: .partial, sha256: digest, received: 0)
        try phone.replica.noteRecordingProgress(id: "watch_rec", received: 4096)
        #expect(try phone.replica.recordingFile(id: "watch_rec")?.received == 4096)
        #expect(try phone.replica.recordingFile(id: "watch_rec")?.state == .partial)
        try phone.replica.setRecordingFile(id: "watch_rec", state: .present, sha256: digest, received: 10_000)
        try phone.replica.noteRecordingProgress(id: "watch_rec", received: 8192)
        #expect(try phone.replica.recordingFile(id: "watch_rec")?.received == 10_000)
        try phone.replica.noteRecordingProgress(id: "unknown", received: 1)
        #expect(try phone.replica.recordingFile(id: "unknown") == nil, "a note creates nothing")
    }

    /// A sender whose own copy no longer matches its SHA-256 says so, stops offering it (no
    /// second OFFER however long the session runs), and offers it again once the file is right.
    @Test func aDamagedLocalCopyIsShownWithItsReasonAndNotOfferedUntilRepaired() throws {
        let mac = try TestNode(.mac, seed: 4)
        let phone = try TestNode(.phone, seed: 5)
        let bytes = randomBytes(20_000, seed: 6)
        let recording = try mac.attach(bytes, seed: 101)
        var damaged = bytes
        damaged[15_000] ^= 0x40
        mac.storage.put(recording.fileName, damaged)
        let link = SessionPair(a: mac.session(), b: phone.session(), now: 1_000)
        link.start()
        #expect(link.run())
        #expect(link.offers(from: .a).count == 1)
        let status = try #require(try mac.replica.recordingStatuses().first)
        #expect(status.state.hasPrefix("damaged: local copy does not match its checksum"), "state \(status.state)")
        #expect(try mac.replica.recordingsToOffer(peerNodeID: phone.replica.identity.nodeID).isEmpty)
        for now in stride(from: Int64(2_000), through: 3_600_000, by: 60_000) {
            link.now = now
            link.enqueue(link.a.tick(now: now), from: .a)
            #expect(link.run())
        }
        #expect(link.offers(from: .a).count == 1, "a damaged copy offered again and again")
        #expect(phone.storage.files[recording.fileName] == nil)

        // Unchanged while still damaged; offered again once the bytes are right.
        #expect(try mac.replica.recheckDamagedRecordings(in: mac.storage).isEmpty)
        mac.storage.put(recording.fileName, bytes)
        #expect(try mac.replica.recheckDamagedRecordings(in: mac.storage) == [recording.id])
        #expect(try mac.replica.recordingStatuses().first?.state == "pending")
        // As a restarted node (which checks damaged copies again when it starts) does.
        link.drop()
        let again = SessionPair(a: mac.session(now: 3_700_000), b: phone.session(now: 3_700_000), now: 3_700_000)
        again.start()
        #expect(again.run())
        // The phone's prefix from the damaged attempt is refused at the first chunk and dropped;
        // the retry after the retry delay sends it whole.
        expectFailure(again, from: .b, recording.id, .corruptChunk)
        again.now = 3_710_000
        again.enqueue(again.a.tick(now: again.now), from: .a)
        #expect(again.run())
        expectStored(phone, recording.fileName, bytes)
        #expect(try mac.replica.recordingStatuses().first?.state == "synced")
    }

    @Test func aMissingLocalCopyIsShownAsDamaged() throws {
        let mac = try TestNode(.mac, seed: 7)
        let phone = try TestNode(.phone, seed: 8)
        let recording = try mac.attach(randomBytes(5_000, seed: 9), seed: 102)
        try mac.storage.remove(recording.fileName)
        let link = SessionPair(a: mac.session(), b: phone.session(), now: 1_000)
        link.start()
        #expect(link.run())
        #expect(link.offers(from: .a).isEmpty)
        #expect(try mac.replica.recordingStatuses().first?.state == "damaged: local copy is missing")
    }

    /// A receiver that refuses every attempt as corrupt (a link that flips bits) is asked again
    /// after 10 s, then 20 s, 40 s…: not every 10 s for ever.
    @Test func retriesOfARecordingThatKeepsFailingBackOff() throws {
        let watch = try TestNode(.watch, seed: 10)
        let phone = try TestNode(.phone, seed: 11)
        _ = try watch.attach(randomBytes(10_000, seed: 12), seed: 103)
        let link = SessionPair(a: watch.session(), b: phone.session(), now: 1_000)
        var offeredAt: [Int64] = []
        link.onSend = { side, message in if side == .a, case .offer = message { offeredAt.append(link.now) } }
        link.damageChunks(to: .b)
        link.start()
        #expect(link.run())
        for _ in 0..<500 {
            guard let due = link.a.nextDeadline, due <= 160_000 else { break }
            link.now = due
            link.enqueue(link.a.tick(now: due), from: .a)
            #expect(link.run())
        }
        let gaps = zip(offeredAt.dropFirst(), offeredAt).map { $0 - $1 }
        #expect(gaps.prefix(4) == [10_000, 20_000, 40_000, 80_000], "offers at \(offeredAt)")
    }

    /// A replica from before schema 8 recorded the sender as a confirmation on the receiver:
    /// the upgrade moves it to `received_from`, where it belongs.
    @Test func anOldReceiversSenderConfirmationBecomesWhereTheBytesCameFrom() throws {
        try withExtendedLifetime(TemporaryDirectory()) { dir in
            let path = dir.file("phone.sqlite")
            let watch = try TestNode(.watch, seed: 13)
            let storage = MemoryRecordingStorage()
            let watchID = watch.replica.identity.nodeID
            do {
                let phone = try ReplicaFixtures.replica(role: .phone, seed: 14, path: path)
                try watch.attach(randomBytes(3_000, seed: 15), seed: 104)
                let link = SessionPair(a: watch.session(), b: SyncSession(replica: phone, configuration: watch.configuration, now: 0,
                                                                          storage: storage, incomingTransfers: IncomingTransfers()))
                link.start()
                #expect(link.run())
                #expect(try phone.recordingStatuses().first?.receivedFrom == watchID)
            }
            // Back to schema 7: step 8's columns out, and every later step's tables too.
            let db = try Database(path: path, create: false)
            try db.execute("""
                ALTER TABLE recording_confirmations DROP COLUMN incarnation;
                ALTER TABLE recording_files DROP COLUMN received_from_incarnation;
                INSERT INTO recording_confirmations SELECT id, received_from, 'watch', sha256, updated_at FROM recording_files;
                ALTER TABLE recording_files DROP COLUMN damage;
                ALTER TABLE recording_files DROP COLUMN received_from;
                DROP TABLE api_keys;
                DROP TABLE entries_text; DELETE FROM meta WHERE key = 'text_index_from';
                DROP INDEX idx_entries_feed; DROP INDEX idx_tombstones_feed;
                ALTER TABLE entries DROP COLUMN feed_seq; ALTER TABLE tombstones DROP COLUMN feed_seq;
                DROP TABLE kept_writes; ALTER TABLE entries DROP COLUMN fields; ALTER TABLE entries DROP COLUMN own;
                ALTER TABLE conflicts DROP COLUMN fields;
                ALTER TABLE pending_peers DROP COLUMN wrong_codes;
                ALTER TABLE trusted_peers DROP COLUMN given_addresses; ALTER TABLE trusted_peers DROP COLUMN verified_addresses;
                ALTER TABLE trusted_peers DROP COLUMN heard_addresses;
                DROP TABLE incarnation_claims;
                DROP TABLE device_names;
                DROP TABLE seals; DROP TABLE seal_owners; DROP TABLE refused_batches;
                PRAGMA user_version = 7;
                """)
            let reopened = try Replica(path: path, clock: ManualClock(milliseconds: ReplicaFixtures.epoch), random: SeededRandom(seed: 1))
            let status = try #require(try reopened.recordingStatuses().first)
            #expect(status.confirmedBy.isEmpty && status.receivedFrom == watchID && status.state == "synced")
        }
    }

    /// The user's file name travels as signed metadata; storage names the file by ID on every
    /// node, so no peer-supplied name ever chooses a path.
    @Test func theOriginalFileNameTravelsWhileStorageNamesFilesByID() throws {
        let watch = try TestNode(.watch, seed: 16)
        let phone = try TestNode(.phone, seed: 17)
        let bytes = randomBytes(6_000, seed: 18)
        let id = Identifier.make(role: .watch, random: SeededRandom(seed: 105))
        let original = Recording(id: id, fileName: "Morning walk – day 2.M4A", size: UInt64(bytes.count), sha256: SHA256.hash(bytes),
                                 mediaType: "audio/mp4", entryID: nil, originNode: watch.replica.identity.nodeID, createdAt: watch.replica.now)
        #expect(original.storageName == id + ".m4a")
        watch.storage.put(original.storageName, bytes)
        try watch.replica.addRecording(original, signedBy: TestKeys.key(for: watch.replica.identity.nodeID))
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        #expect(link.offers(from: .a).map(\.fileName) == ["Morning walk – day 2.M4A"])
        #expect(try phone.replica.recording(id: id)?.recording.fileName == "Morning walk – day 2.M4A")
        expectStored(phone, id + ".m4a", bytes)
        #expect(phone.storage.files.keys.sorted() == [id + ".m4a"])
        #expect(try phone.replica.recordingStatuses().first?.state == "synced")
    }

    @Test func aFileNameIsABoundedBaseName() {
        for good in ["voice.m4a", "Voice Memo 3.M4A", "no extension", ".hidden", String(repeating: "é", count: 127) + "a"] {
            #expect(Recording.fileNameProblem(good) == nil, "\(good)")
        }
        for bad in ["", ".", "..", "a/b.m4a", "/x", "a\u{0}b", "tab\there", String(repeating: "é", count: 128), String(repeating: "x", count: 256)] {
            #expect(Recording.fileNameProblem(bad) != nil, "\(bad)")
        }
        #expect(Recording.fileNameProblem(String(repeating: "é", count: 128))?.contains("255 bytes") == true)
    }

    /// A replica put back from an older copy forgets the recordings it received since, while its
    /// recordings folder keeps them (and the watch let go of its copy once this phone confirmed
    /// it). As the node starts, it takes back every intact copy its storage holds; a copy that no
    /// longer matches its checksum is left to be fetched again.
    @Test func aRestoredReplicaTakesBackTheIntactCopiesItsStorageHolds() throws {
        let watch = try TestNode(.watch, seed: 11)
        let phone = try TestNode(.phone, seed: 12)
        let intact = try watch.attach(randomBytes(9_000, seed: 13), seed: 110)
        let damaged = try watch.attach(randomBytes(7_000, seed: 14), seed: 111)
        let link = SessionPair(a: watch.session(), b: phone.session())
        link.start()
        #expect(link.run())
        // What a restore to before the transfers leaves: the metadata comes back from a peer,
        // the replica's own record of the bytes does not.
        try phone.replica.database.run("DELETE FROM recording_files")
        phone.storage.put(damaged.fileName, randomBytes(7_000, seed: 15))
        #expect(try phone.replica.recordingStatuses().allSatisfy { $0.state == "awaiting bytes" })
        #expect(try phone.replica.reconcileStoredCopies(in: phone.storage).adopted == [intact.id])
        let states = try phone.replica.recordingStatuses().map { ($0.recording.id, $0.state) }
        #expect(states.contains { $0 == intact.id && $1 != "awaiting bytes" })
        #expect(states.contains { $0 == damaged.id && $1 == "awaiting bytes" })
        #expect(try phone.replica.reconcileStoredCopies(in: phone.storage).adopted.isEmpty, "nothing twice")
        // And the other way: a file counted as held that is gone (deleted after the copy was
        // made) is awaited again.
        try phone.storage.remove(intact.fileName)
        #expect(try phone.replica.reconcileStoredCopies(in: phone.storage).missing == [intact.id])
        #expect(try phone.replica.recordingStatuses().allSatisfy { $0.state == "awaiting bytes" })
    }

    /// A confirmation stands for the history it was made in: a peer that comes back under a new
    /// incarnation (its replica was put back from an older copy) is offered the recording again.
    @Test func aConfirmationFromAnEarlierIncarnationOfThePeerIsOfferedAgain() throws {
        let phone = try TestNode(.phone, seed: 21)
        let recording = try phone.attach(randomBytes(2_000, seed: 22), seed: 120)
        let mac = "mac_6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
        let (before, after) = ("0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "1a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
        try phone.replica.recordConfirmation(id: recording.id, nodeID: mac, role: .mac, sha256: recording.sha256, incarnation: before)
        #expect(try phone.replica.recordingsToOffer(peerNodeID: mac, peerIncarnation: before).isEmpty)
        #expect(try phone.replica.recordingsToOffer(peerNodeID: mac, peerIncarnation: after).map(\.id) == [recording.id])
        try phone.replica.recordConfirmation(id: recording.id, nodeID: mac, role: .mac, sha256: recording.sha256, incarnation: after)
        #expect(try phone.replica.recordingsToOffer(peerNodeID: mac, peerIncarnation: after).isEmpty)
        // The same for the node a copy came from: not offered back, unless it came back as
        // another history (and may have lost the file).
        let other = "mac_7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
        try phone.replica.setRecordingFile(id: recording.id, state: .present, sha256: recording.sha256, received: recording.size,
                                           receivedFrom: other, receivedFromIncarnation: before)
        #expect(try phone.replica.recordingsToOffer(peerNodeID: other, peerIncarnation: before).isEmpty)
        #expect(try phone.replica.recordingsToOffer(peerNodeID: other, peerIncarnation: after).map(\.id) == [recording.id])
    }
}
