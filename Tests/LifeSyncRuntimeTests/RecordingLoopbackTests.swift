import Foundation
import Glibc
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// Recordings between real nodes on loopback (NodeThread, FileRecordingStorage beside each
/// replica file): watch → phone → mac, byte for byte, the watch copy let go only after the
/// phone's confirmation, and a user delete that reaches every replica's files.
@Suite(.serialized) struct RecordingLoopbackTests {
    static let size = 64 << 20

    /// Writes `count` random bytes to `path`, 1 MiB at a time.
    static func writeRandomFile(_ path: String, count: Int) throws {
        let input = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? input.close() }
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let output = try #require(FileHandle(forWritingAtPath: path))
        defer { try? output.close() }
        var written = 0
        while written < count {
            let piece = try #require(try input.read(upToCount: min(1 << 20, count - written)))
            try #require(!piece.isEmpty)
            try output.write(contentsOf: piece)
            written += piece.count
        }
    }

    /// The SHA-256 of a file's bytes, or nil when it cannot be read.
    static func sha256(ofFile path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let hasher = SHA256()
        while true {
            let read: Data?
            do { read = try handle.read(upToCount: 1 << 20) } catch { return nil }
            guard let piece = read, !piece.isEmpty else { break }  // nil or empty: the end
            piece.withUnsafeBytes { hasher.update($0) }
        }
        return hasher.finalize().hex
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func status(_ replica: Replica, _ id: String) -> RecordingStatus? {
        (try? replica.recordingStatuses())?.first { $0.recording.id == id }
    }

    @Test(.timeLimit(.minutes(2)))
    func aWatchRecordingReachesTheMacThroughThePhoneAndADeleteOnThePhoneReachesTheMac() throws {
        let cluster = LoopbackCluster()
        try cluster.create("watch", role: .watch)
        let phoneID = try cluster.create("phone", role: .phone).identity.nodeID
        let macID = try cluster.create("mac", role: .mac).identity.nodeID

        // Attach on the watch as `lifesync attach` does: copy into storage, hashing, then register.
        let source = cluster.directory.file("voice memo.m4a")
        try Self.writeRandomFile(source, count: Self.size)
        let sourceSHA = try #require(Self.sha256(ofFile: source))
        let watch = try cluster.open("watch")
        let watchStorage = try FileRecordingStorage(replicaPath: cluster.path("watch"))
        let id = Identifier.make(role: .watch, random: SystemRandom())
        let fileName = id + "." + Recording.fileExtension(for: source)
        let (size, sha) = try watchStorage.importFile(from: source, as: fileName, id: id)
        #expect(size == UInt64(Self.size))
        #expect(sha.hex == sourceSHA)
        try watch.addRecording(Recording(id: id, fileName: fileName, size: size, sha256: sha, mediaType: "audio/mp4", entryID: nil,
                                         originNode: watch.identity.nodeID, createdAt: watch.now),
                              signedBy: NodeKey.loadOrCreate(path: NodeKey.path(forReplica: cluster.path("watch")), nodeID: watch.identity.nodeID))
        let watchFile = try watchStorage.path(of: fileName)
        let phoneFile = cluster.path("phone") + ".recordings/" + fileName
        let macFile = cluster.path("mac") + ".recordings/" + fileName
        #expect(Self.exists(watchFile))

        try cluster.start("phone")
        try cluster.start("mac", listen: nil, peers: [cluster.address("phone")])
        try cluster.start("watch", listen: nil, peers: [cluster.address("phone")])

        // Sample while it moves: whenever the watch copy is gone, the phone's confirmation is
        // already recorded and the phone's verified file is in place (LifeAdmin §1.1).
        var samples = 0, samplesWithWatchCopy = 0, removalsSeenEarly: [String] = []
        let deadline = Date().addingTimeInterval(90)
        var done = false
        while Date() < deadline && samples < 20_000 {
            samples += 1
            let watchHas = Self.exists(watchFile)
            let confirmed = (try? watch.confirmations(id: id)) ?? []
            let phoneHas = Self.exists(phoneFile)
            if watchHas {
                samplesWithWatchCopy += 1
            } else {
                if !confirmed.contains(where: { $0.nodeID == phoneID && $0.sha256 == sha }) {
                    removalsSeenEarly.append("watch copy gone with confirmations \(confirmed.map(\.nodeID))")
                }
                if !phoneHas { removalsSeenEarly.append("watch copy gone while the phone has no file") }
            }
            if !watchHas && Self.exists(macFile) { done = true; break }
            usleep(20_000)
        }
        let logs = "phone:\n\(cluster.log("phone").joined(separator: "\n"))\nwatch:\n\(cluster.log("watch").joined(separator: "\n"))\nmac:\n\(cluster.log("mac").joined(separator: "\n"))"
        try #require(done, "not delivered within the deadline (\(samples) samples)\n\(logs)")
        #expect(samplesWithWatchCopy > 0)
        #expect(removalsSeenEarly.isEmpty, "\(removalsSeenEarly.prefix(3))")

        // Byte-identical on the phone and the mac; nothing left half-written.
        #expect(Self.sha256(ofFile: phoneFile) == sourceSHA)
        #expect(Self.sha256(ofFile: macFile) == sourceSHA)
        for name in ["phone", "mac"] {
            let incoming = (try? FileManager.default.contentsOfDirectory(atPath: cluster.path(name) + ".recordings/.incoming")) ?? []
            #expect(incoming.isEmpty, "\(name) left \(incoming)")
        }
        let phone = try cluster.open("phone"), mac = try cluster.open("mac")
        #expect(waitUntil(timeout: 10) {
            Self.status(watch, id)?.state == "synced (local copy removed)" && Self.status(phone, id)?.state == "synced"
                && Self.status(mac, id)?.state == "synced"
        }, "watch \(Self.status(watch, id)?.state ?? "-"), phone \(Self.status(phone, id)?.state ?? "-"), mac \(Self.status(mac, id)?.state ?? "-")")
        #expect(Self.status(mac, id)?.recording.sha256.hex == sourceSHA)
        #expect(Self.status(mac, id)?.recording.size == UInt64(Self.size))
        #expect(Self.status(mac, id)?.recording.originNode == watch.identity.nodeID)
        #expect(try watch.confirmations(id: id).map(\.nodeID) == [phoneID], "only the phone confirms to the watch")
        #expect(try phone.confirmations(id: id).map(\.nodeID).contains(macID))
        #expect(cluster.log("watch").contains { $0.contains("removed the watch copy of \(id)") })
        #expect(cluster.log("phone").contains { $0.contains("received \(id) (\(Self.size) bytes)") })

        // A user delete on the phone (`lifesync delete ID`): a tombstone that replicates, and the
        // mac removes its file when it arrives.
        let phoneStorage = try FileRecordingStorage(replicaPath: cluster.path("phone"))
        let deleted = try phone.deleteRecording(id: id)
        #expect(deleted == fileName)
        if phoneStorage.exists(deleted) {
            try phoneStorage.remove(deleted)
            if let file = try phone.recordingFile(id: id) {
                try phone.setRecordingFile(id: id, state: .removed, sha256: file.sha256, received: 0)
            }
        }
        #expect(!Self.exists(phoneFile))
        let gone = waitUntil(timeout: 20) { !Self.exists(macFile) && Self.status(mac, id)?.deleted == true }
        #expect(gone, "mac file present: \(Self.exists(macFile)), mac state \(Self.status(mac, id)?.state ?? "-")\n\(logs)")
        #expect(Self.status(mac, id)?.state == "deleted")
        #expect(try mac.recordingFile(id: id)?.state == .removed)
        #expect(Self.status(phone, id)?.state == "deleted")
        // Deleted: offered to nobody again; the watch has nothing to send back.
        #expect(try mac.recordingsToOffer(peerNodeID: phoneID).isEmpty)
        #expect(!Self.exists(watchFile))
        cluster.stop("watch")
        cluster.stop("mac")
        cluster.stop("phone")
    }
}
