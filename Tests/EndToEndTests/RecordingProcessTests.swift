import Foundation
import Glibc
import Testing
import TestSupport

// Recordings through the built CLI: `attach`, `recordings --json`, and `serve` processes killed
// with SIGKILL in the middle of a 64 MiB transfer, on either end, then restarted.

private let mebibyte = 1 << 20

/// Writes `count` random bytes to `path`.
private func writeRandomFile(_ path: String, count: Int) throws {
    let input = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
    defer { try? input.close() }
    try #require(FileManager.default.createFile(atPath: path, contents: nil))
    let output = try #require(FileHandle(forWritingAtPath: path))
    defer { try? output.close() }
    var written = 0
    while written < count {
        let piece = try #require(try input.read(upToCount: min(mebibyte, count - written)))
        try #require(!piece.isEmpty)
        try output.write(contentsOf: piece)
        written += piece.count
    }
}

/// What the system's `sha256sum` says of a file (nil when it cannot read it).
private func sha256sum(_ path: String) throws -> String? {
    let result = try Captured.run("/usr/bin/sha256sum", [path], timeout: 30)
    guard result.status == 0 else { return nil }
    return result.stdout.split(separator: " ").first.map(String.init)
}

/// The size of a file, or nil when there is none.
private func fileSize(_ path: String) -> Int? {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : nil
}

/// `lifesync recordings --json --db DB`, parsed.
private func recordings(_ db: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
    let result = try LifeSyncBinary.run(["recordings", "--json", "--db", db], timeout: 20)
    try #require(result.status == 0, "recordings --json: \(result.stderr)", sourceLocation: sourceLocation)
    return try #require(try parseJSON(result.stdout) as? [[String: Any]], "not a JSON array: \(result.stdout)", sourceLocation: sourceLocation)
}

/// `lifesync attach FILE --db DB`, which must succeed; the printed ID.
private func attach(_ file: String, db: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let result = try LifeSyncBinary.run(["attach", file, "--db", db], timeout: 60)
    try #require(result.status == 0, "attach failed: \(result.stderr)", sourceLocation: sourceLocation)
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The files a replica's recording folder holds (its `.incoming` folder apart), and those in `.incoming`.
private func storedFiles(_ db: String) -> (permanent: [String], incoming: [String]) {
    let folder = db + ".recordings"
    let permanent = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0 != ".incoming" }
    let incoming = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/.incoming")) ?? []
    return (permanent.sorted(), incoming.sorted())
}

/// The byte offset of the last "resuming ID from byte R" line in `log`.
private func resumedOffset(_ log: String, id: String) -> Int? {
    let marker = "resuming \(id) from byte "
    guard let line = log.split(separator: "\n").last(where: { $0.contains(marker) }),
          let range = line.range(of: marker) else { return nil }
    return Int(line[range.upperBound...].prefix { $0.isNumber })
}

@Suite(.serialized) struct RecordingProcessTests {
    // MARK: attach and recordings

    @Test(.timeLimit(.minutes(3)))
    func attachCopiesTheFileAndRecordingsListsItPending() throws {
        let sandbox = try Sandbox(role: "watch")
        let source = sandbox.file("memo.m4a")
        try writeRandomFile(source, count: 300_000)
        let expectedSHA = try #require(try sha256sum(source))
        let original = try #require(fileBytes(source))

        let id = try attach(source, db: sandbox.db)
        #expect(isIdentifier(id, role: "watch"), "attach printed \(id)")
        // The node keeps its own copy: the original is not needed afterwards.
        try FileManager.default.removeItem(atPath: source)

        let listed = try recordings(sandbox.db)
        try #require(listed.count == 1, "\(listed)")
        let recording = listed[0]
        #expect(recording["id"] as? String == id)
        #expect(recording["file_name"] as? String == "memo.m4a", "the user's file name is kept")
        #expect(integer(recording["size"]) == 300_000)
        #expect(recording["sha256"] as? String == expectedSHA)
        #expect(recording["media_type"] as? String == "audio/mp4")
        #expect(recording["state"] as? String == "pending")
        #expect(recording["origin"] as? String == sandbox.nodeID)
        #expect((recording["confirmed_by"] as? [Any])?.isEmpty == true)
        let path = try #require(recording["path"] as? String)
        #expect(path == sandbox.db + ".recordings/" + id + ".m4a")
        #expect(fileBytes(path) == original)
        #expect(try sha256sum(path) == expectedSHA)
        #expect(storedFiles(sandbox.db).incoming.isEmpty)

        // Another one: an unknown extension is kept, typed as bytes; the text listing agrees.
        let other = sandbox.file("blob.xyz")
        try writeRandomFile(other, count: 1_000)
        let otherID = try attach(other, db: sandbox.db)
        #expect(otherID != id)
        let both = try recordings(sandbox.db)
        let second = try #require(both.first { $0["id"] as? String == otherID })
        #expect(second["file_name"] as? String == "blob.xyz")
        #expect(second["path"] as? String == sandbox.db + ".recordings/" + otherID + ".xyz")
        // A name no peer could show safely is refused, nothing attached.
        let tabbed = sandbox.file("tab\there.m4a")
        try writeRandomFile(tabbed, count: 10)
        expectRefused(try sandbox.run(["attach", tabbed]), status: 1, mentioning: ["file_name", "control characters"])
        #expect(try recordings(sandbox.db).count == 2)
        #expect(second["media_type"] as? String == "application/octet-stream")
        #expect(second["sha256"] as? String == (try sha256sum(other)))
        let text = try sandbox.run(["recordings"])
        #expect(text.status == 0)
        #expect(text.stdout.contains(id) && text.stdout.contains("sha256 \(expectedSHA)") && text.stdout.contains("pending"))
    }

    /// `wait --for` a recording returns once its bytes are here, verified, not when its metadata
    /// arrived (which comes first): README's Recordings block lists the recording right after.
    @Test(.timeLimit(.minutes(3)))
    func waitForARecordingReturnsOnceItsBytesAreHere() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let watch = try group.node("watch", role: "watch")
        try phone.start()
        let source = NSTemporaryDirectory() + "wait-\(UUID().uuidString).m4a"
        defer { try? FileManager.default.removeItem(atPath: source) }
        try writeRandomFile(source, count: 6 << 20)
        let expected = try #require(try sha256sum(source))
        let id = try attach(source, db: watch.db)
        try watch.start(peers: [phone.address], listen: false)
        let waited = try LifeSyncBinary.run(["wait", "--for", id, "--db", phone.db, "--timeout", "40"], timeout: 50)
        #expect(waited.status == 0, "\(waited.stderr)\n\(phone.allOutput)")
        let listed = try #require(try recordings(phone.db).first { $0["id"] as? String == id })
        #expect(listed["state"] as? String == "synced", "\(listed)")
        let path = try #require(listed["path"] as? String)
        #expect(try sha256sum(path) == expected, "wait returned before the bytes were whole")
    }

    @Test(.timeLimit(.minutes(3)))
    func attachingAMissingFileFailsAndWritesNothing() throws {
        let sandbox = try Sandbox(role: "watch")
        for missing in [sandbox.file("no such memo.m4a"), sandbox.directory.path] {
            let result = try sandbox.run(["attach", missing])
            expectRefused(result, status: 1, mentioning: [missing])
        }
        #expect(try recordings(sandbox.db).isEmpty)
        let files = storedFiles(sandbox.db)
        #expect(files.permanent.isEmpty && files.incoming.isEmpty, "\(files)")
        #expect(try sandbox.sqlite("SELECT (SELECT count(*) FROM recordings) + (SELECT count(*) FROM recording_files)").lines == ["0"])
    }

    // MARK: serve

    /// `lifesync delete ID` of a recording on the phone while phone and mac serve: the mac, which
    /// got the bytes from the phone, removes its file when the tombstone arrives.
    @Test(.timeLimit(.minutes(3)))
    func deletingARecordingOnThePhoneRemovesTheMacsCopy() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        let source = group.directory.file("dictation.wav")
        try writeRandomFile(source, count: 200_000)
        let sha = try #require(try sha256sum(source))
        let id = try attach(source, db: phone.db)
        #expect(isIdentifier(id, role: "phone"))
        try phone.start()
        try mac.start(peers: [phone.address], listen: false)

        func macListing() -> [String: Any]? { (try? recordings(mac.db))?.first { $0["id"] as? String == id } }
        let macFile = mac.db + ".recordings/" + id + ".wav"
        let mirrored = eventually(timeout: 20, interval: 0.2) { macListing()?["state"] as? String == "synced" }
        try #require(mirrored, "the mac never confirmed holding it: \(macListing() ?? [:])\n\(phone.allOutput)\n\(mac.allOutput)")
        #expect(macListing()?["path"] as? String == macFile)
        #expect(macListing()?["media_type"] as? String == "audio/wav")
        #expect(try sha256sum(macFile) == sha)

        let deleted = try LifeSyncBinary.run(["delete", id, "--db", phone.db])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout == "deleted recording \(id)\n")
        #expect(fileSize(phone.db + ".recordings/" + id + ".wav") == nil)
        let gone = eventually(timeout: 20, interval: 0.2) { fileSize(macFile) == nil && macListing()?["state"] as? String == "deleted" }
        #expect(gone, "mac: \(macListing() ?? [:]), file \(fileSize(macFile).map(String.init) ?? "gone")\n\(mac.allOutput)")
        #expect(macListing()?["path"] is NSNull)
        let files = storedFiles(mac.db)
        #expect(files.permanent.isEmpty && files.incoming.isEmpty, "\(files)")
        // Deleting it again is refused: it is already gone.
        let again = try LifeSyncBinary.run(["delete", id, "--db", phone.db])
        #expect(again.status != 0)
    }

    /// `lifesync delete ID` on the receiving mac while the recording is still arriving from the
    /// phone. The delete wins everywhere: once things are quiet no bytes of it may remain on the
    /// mac, neither as a file nor as a temporary `.part`, and the phone drops its copy too.
    @Test(.timeLimit(.minutes(3)))
    func deletingARecordingOnTheReceiverMidTransferLeavesNoBytesOfIt() throws {
        let group = ServeGroup()
        defer { group.stopAll() }
        let phone = try group.node("phone", role: "phone")
        let mac = try group.node("mac", role: "mac")
        let source = group.directory.file("meeting.m4a")
        try writeRandomFile(source, count: 64 * mebibyte)
        let id = try attach(source, db: phone.db)
        let macFile = mac.db + ".recordings/" + id + ".m4a"
        let part = mac.db + ".recordings/.incoming/\(id).part"
        try phone.start()
        try mac.start(peers: [phone.address], listen: false)

        var arriving = false
        let deadline = Date().addingTimeInterval(30)
        for _ in 0..<1_000_000 where Date() < deadline {
            if let size = fileSize(part), size >= 8 * mebibyte { arriving = true; break }
            if fileSize(macFile) != nil { break }
            usleep(500)
        }
        try #require(arriving, "the mac never held 8 MiB of the transfer\n\(phone.allOutput)\n\(mac.allOutput)")
        // Frozen while the user deletes it, so the delete lands mid-transfer for certain.
        // (SIGSTOP returns before the process has stopped: wait for the stopped state.)
        let pid = try #require(mac.process?.pid)
        try #require(ProcessControl.stopProcess(pid), "the mac did not stop\n\(mac.allOutput)")
        var deleted = try LifeSyncBinary.run(["delete", id, "--db", mac.db], timeout: 20)
        for _ in 0..<3 where deleted.status != 0 && (deleted.stderr.contains("locked") || deleted.stderr.contains("busy")) {
            ProcessControl.continueProcess(pid)  // it held the write lock: let it finish that statement
            usleep(2_000)
            try #require(ProcessControl.stopProcess(pid), "the mac did not stop\n\(mac.allOutput)")
            deleted = try LifeSyncBinary.run(["delete", id, "--db", mac.db], timeout: 20)
        }
        ProcessControl.continueProcess(pid)
        try #require(deleted.status == 0, "delete failed: \(deleted.stderr)")
        #expect(fileSize(macFile) == nil, "the transfer finished before the delete; the test proves nothing")

        let phoneDropped = eventually(timeout: 20, interval: 0.1) { fileSize(phone.db + ".recordings/" + id + ".m4a") == nil }
        #expect(phoneDropped, "the delete did not reach the phone")
        let clean = eventually(timeout: 5, interval: 0.1) {
            let files = storedFiles(mac.db)
            return files.permanent.isEmpty && files.incoming.isEmpty
        }
        let listing = (try? recordings(mac.db))?.first { $0["id"] as? String == id }
        #expect(clean, "the mac keeps bytes of a recording its user deleted: \(storedFiles(mac.db)) (file \(fileSize(macFile).map(String.init) ?? "none"), part \(fileSize(part).map(String.init) ?? "none")); listing: \(listing ?? [:])")
        #expect(listing?["state"] as? String == "deleted")
        #expect(listing?["path"] is NSNull)
    }

    // MARK: serve, killed mid-transfer

    /// A watch with one 64 MiB recording and a phone, not yet serving.
    private struct Transfer {
        let group = ServeGroup()
        let watch: ServeNode
        let phone: ServeNode
        let id: String
        let fileName: String
        let sha: String

        init() throws {
            watch = try group.node("watch", role: "watch")
            phone = try group.node("phone", role: "phone")
            let source = group.directory.file("long walk.m4a")
            try writeRandomFile(source, count: 64 * mebibyte)
            sha = try #require(try sha256sum(source))
            id = try attach(source, db: watch.db)
            fileName = id + ".m4a"
        }

        var partFile: String { phone.db + ".recordings/.incoming/\(id).part" }
        var phoneFile: String { phone.db + ".recordings/" + fileName }
        var watchFile: String { watch.db + ".recordings/" + fileName }

        func startPhone(samePort: Bool = false) throws { try phone.start(samePort: samePort, extra: ["--fallback-ms", "2000"]) }
        func startWatch() throws { try watch.start(peers: [phone.address], listen: false, extra: ["--fallback-ms", "2000"]) }

        /// Waits (tightly: 64 MiB moves in about a second) until the phone's temporary file holds
        /// at least `bytes`; false if the transfer finished or stalled first.
        func waitForPart(atLeast bytes: Int, timeout: Double = 30) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            var rounds = 0
            while Date() < deadline && rounds < 10_000_000 {
                rounds += 1
                if let size = fileSize(partFile), size >= bytes { return true }
                if fileSize(phoneFile) != nil { return false }
                usleep(500)
            }
            return false
        }

        func watchState() -> String? { (try? recordings(watch.db))?.first { $0["id"] as? String == id }?["state"] as? String }

        var logs: String { "watch:\n\(watch.allOutput)\nphone:\n\(phone.allOutput)" }
    }

    @Test(.timeLimit(.minutes(2)))
    func killingTheReceiverMidTransferResumesFromItsLastWholeChunk() throws {
        let transfer = try Transfer()
        defer { transfer.group.stopAll() }
        try transfer.startPhone()
        try transfer.startWatch()
        try #require(transfer.waitForPart(atLeast: 8 * mebibyte), "the phone never held 8 MiB of the transfer\n\(transfer.logs)")
        let pid = try #require(transfer.phone.process?.pid)
        // Frozen first, so the size noted is the size it dies with. SIGSTOP returns before the
        // process has stopped (it could write another chunk meanwhile): wait for the stopped state.
        try #require(ProcessControl.stopProcess(pid), "the phone did not stop\n\(transfer.logs)")
        let held = try #require(fileSize(transfer.partFile))
        transfer.phone.kill9()
        #expect(!transfer.phone.isRunning)
        #expect(fileSize(transfer.partFile) == held)
        #expect(held >= 8 * mebibyte && held < 64 * mebibyte)
        #expect(fileSize(transfer.phoneFile) == nil, "the phone has a permanent file before the transfer finished")
        // Unconfirmed: the watch keeps its copy.
        #expect(try sha256sum(transfer.watchFile) == transfer.sha)
        #expect(transfer.watchState() == "pending")

        try transfer.startPhone(samePort: true)
        let synced = eventually(timeout: 60, interval: 0.2) { transfer.watchState()?.contains("synced") == true }
        try #require(synced, "no confirmation reached the watch (state \(transfer.watchState() ?? "-"))\n\(transfer.logs)")

        let resumed = try #require(resumedOffset(transfer.phone.stdout, id: transfer.id), "no resume logged\n\(transfer.logs)")
        #expect(resumed > 0 && resumed <= held, "resumed from \(resumed), the phone held \(held)")
        #expect(held - resumed < mebibyte, "resumed from \(resumed) with \(held) bytes held: more than one chunk sent again")
        #expect(resumed % mebibyte == 0)
        #expect(try sha256sum(transfer.phoneFile) == transfer.sha)
        #expect(fileSize(transfer.partFile) == nil)
        // Confirmed: the watch let go of its copy, and says so.
        #expect(eventually(timeout: 10) { fileSize(transfer.watchFile) == nil })
        #expect(transfer.watchState() == "synced (local copy removed)")
        let phoneListing = try #require(try recordings(transfer.phone.db).first { $0["id"] as? String == transfer.id })
        #expect(phoneListing["state"] as? String == "synced")
        #expect(phoneListing["sha256"] as? String == transfer.sha)
        #expect(phoneListing["path"] as? String == transfer.phoneFile)
    }

    @Test(.timeLimit(.minutes(2)))
    func killingTheSenderMidTransferCompletesAfterItRestarts() throws {
        let transfer = try Transfer()
        defer { transfer.group.stopAll() }
        try transfer.startPhone()
        try transfer.startWatch()
        try #require(transfer.waitForPart(atLeast: 8 * mebibyte), "the phone never held 8 MiB of the transfer\n\(transfer.logs)")
        transfer.watch.kill9()
        let held = try #require(fileSize(transfer.partFile))
        #expect(held < 64 * mebibyte)
        #expect(fileSize(transfer.phoneFile) == nil)
        // The watch died unconfirmed: its copy and its pending state survive the crash.
        #expect(try sha256sum(transfer.watchFile) == transfer.sha)
        #expect(transfer.watchState() == "pending")

        try transfer.startWatch()
        let synced = eventually(timeout: 60, interval: 0.2) { transfer.watchState()?.contains("synced") == true }
        try #require(synced, "no confirmation reached the watch (state \(transfer.watchState() ?? "-"))\n\(transfer.logs)")
        #expect(try sha256sum(transfer.phoneFile) == transfer.sha)
        #expect(fileSize(transfer.partFile) == nil)
        let resumed = try #require(resumedOffset(transfer.phone.stdout, id: transfer.id), "no resume logged\n\(transfer.logs)")
        #expect(resumed > 0 && resumed % mebibyte == 0)
        #expect(held - resumed < mebibyte, "resumed from \(resumed) although the phone held \(held) bytes")
        #expect(eventually(timeout: 10) { fileSize(transfer.watchFile) == nil })
        #expect(transfer.watchState() == "synced (local copy removed)")
    }
}
