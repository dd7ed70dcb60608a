import Foundation
import Glibc
import LifeSync
import LifeSyncRuntime
import Testing
import TestSupport

/// The recordings folder as a hostile local user or a crash may leave it: symbolic links
/// planted under recording names are refused, not followed; temporary files of downloads that
/// can no longer resume are removed when a node starts, those that can are kept.
@Suite(.serialized) struct RecordingFolderTests {
    static func write(_ bytes: [UInt8], to path: String) {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func newID(_ role: Role = .watch) -> String { Identifier.make(role: role, random: SystemRandom()) }

    @Test func aSymbolicLinkNamedLikeARecordingIsRefusedNotFollowed() throws {
        let directory = TemporaryDirectory("lifesync-symlink")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let outside = directory.file("secret.txt")
        let secret = Array("not a recording: must never leave this machine".utf8)
        Self.write(secret, to: outside)

        // A permanent file name that is a link to a file outside the folder.
        let id = Self.newID()
        let fileName = id + ".m4a"
        #expect(symlink(outside, try storage.path(of: fileName)) == 0)
        var buffer = [UInt8](repeating: 0, count: 1024)
        #expect(throws: RecordingStorageError.self) {
            _ = try buffer.withUnsafeMutableBytes { try storage.read(fileName, offset: 0, into: $0) }
        }
        #expect(buffer.allSatisfy { $0 == 0 }, "bytes of the linked file were read")
        #expect(!storage.exists(fileName), "a link counts as a stored recording")

        // A temporary file that is a link: neither read, nor written through, nor measured.
        let partial = Self.newID()
        #expect(symlink(outside, directory.file("phone.sqlite.recordings/.incoming/\(partial).part")) == 0)
        #expect(throws: RecordingStorageError.self) { _ = try storage.readTemporary(partial, offset: 0, count: 16) }
        #expect(throws: RecordingStorageError.self) { try storage.writeTemporary(partial, offset: 0, bytes: [1, 2, 3]) }
        #expect(throws: RecordingStorageError.self) { try storage.syncTemporary(partial) }
        #expect(storage.temporarySize(partial) == 0)
        #expect(FileManager.default.contents(atPath: outside).map(Array.init) == secret, "the linked file was written")
    }

    @Test func plainRecordingFilesStillReadAndWrite() throws {
        let directory = TemporaryDirectory("lifesync-plain")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let id = Self.newID()
        try storage.writeTemporary(id, offset: 0, bytes: [1, 2, 3, 4])
        try storage.syncTemporary(id)
        #expect(storage.temporarySize(id) == 4)
        #expect(try storage.readTemporary(id, offset: 1, count: 8) == [2, 3, 4])
        try storage.promoteTemporary(id, to: id + ".bin")
        #expect(storage.exists(id + ".bin"))
        var buffer = [UInt8](repeating: 0, count: 8)
        let got = try buffer.withUnsafeMutableBytes { try storage.read(id + ".bin", offset: 0, into: $0) }
        #expect(Array(buffer.prefix(got)) == [1, 2, 3, 4])
    }

    @Test(.timeLimit(.minutes(3)))
    func aStartingNodeRemovesOrphanedTemporaryFilesAndKeepsResumableOnes() throws {
        let cluster = LoopbackCluster()
        let phone = try cluster.create("phone", role: .phone)
        let incoming = cluster.path("phone") + ".recordings/.incoming"
        _ = try FileRecordingStorage(replicaPath: cluster.path("phone"))  // creates the folder

        // Resumable: its recording is partially received.
        let partial = Self.newID()
        try phone.setRecordingFile(id: partial, state: .partial, sha256: SHA256.Digest(bytes: [UInt8](repeating: 0xab, count: 32)), received: 4)
        Self.write([1, 2, 3, 4], to: "\(incoming)/\(partial).part")
        // Orphans: a recording no transfer is pending for, one already present, a name that is no
        // recording ID, and a link.
        let unknown = Self.newID(), present = Self.newID(), linked = Self.newID()
        try phone.setRecordingFile(id: present, state: .present, sha256: SHA256.Digest(bytes: [UInt8](repeating: 0xcd, count: 32)), received: 4)
        Self.write([9], to: "\(incoming)/\(unknown).part")
        Self.write([9], to: "\(incoming)/\(present).part")
        Self.write([9], to: "\(incoming)/not-an-id.part")
        let outside = cluster.directory.file("outside.bin")
        Self.write([7, 7], to: outside)
        #expect(symlink(outside, "\(incoming)/\(linked).part") == 0)
        // Being written by an import (`lifesync attach`), which holds a lock on it: kept.
        let importing = Self.newID()
        let importFD = open("\(incoming)/\(importing).part", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        #expect(importFD >= 0)
        defer { close(importFD) }
        #expect(flock(importFD, LOCK_EX) == 0)
        // Not a temporary file: not ours to judge.
        Self.write([5], to: "\(incoming)/README")

        try cluster.start("phone")
        for name in ["\(unknown).part", "\(present).part", "not-an-id.part", "\(linked).part"] {
            #expect(!Self.exists("\(incoming)/\(name)"), "\(name) survived the start")
        }
        #expect(Self.exists("\(incoming)/\(partial).part"), "a resumable download was removed")
        #expect(FileManager.default.contents(atPath: "\(incoming)/\(partial).part").map(Array.init) == [1, 2, 3, 4])
        #expect(Self.exists("\(incoming)/\(importing).part"), "an import in progress lost its file")
        #expect(Self.exists("\(incoming)/README"))
        #expect(FileManager.default.contents(atPath: outside).map(Array.init) == [7, 7], "the link's target was touched")
        #expect(cluster.log("phone").contains { $0.contains("removed 4 orphaned temporary file(s)") }, "\(cluster.log("phone"))")
        cluster.stop("phone")
    }
}
