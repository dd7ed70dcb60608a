import Foundation
import Glibc
import LifeSync
@testable import LifeSyncRuntime
import Testing
import TestSupport

/// The temporary file of an incoming recording: chunks queued to disk and flushed as they go,
/// and the file always exactly the bytes written once the writer drains.
@Suite struct TemporaryFileWriterTests {
    /// Varied bytes (nothing along the way can take a run of zeros for a hole).
    static func pattern(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ $0 >> 9) }
    }

    @Test func theFileHoldsExactlyWhatWasWrittenThroughTheQueue() throws {
        let directory = TemporaryDirectory("lifesync-writer")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let id = Identifier.make(role: .watch, random: SystemRandom())
        let chunk = 256 * 1024
        var expected: [UInt8] = []
        for n in 0..<9 {  // more chunks than the queue holds, so writes wait for free buffers
            let bytes = Self.pattern(chunk, seed: UInt8(n))
            try storage.writeTemporary(id, offset: UInt64(expected.count), bytes: bytes)
            expected += bytes
        }
        #expect(storage.temporarySize(id) == UInt64(expected.count), "the size counts every queued chunk once drained")
        let tail = Self.pattern(1000, seed: 99)  // a last chunk of no block size
        try storage.writeTemporary(id, offset: UInt64(expected.count), bytes: tail)
        expected += tail
        try storage.syncTemporary(id)
        #expect(try storage.readTemporary(id, offset: 0, count: expected.count + 10) == expected)
        try storage.promoteTemporary(id, to: id + ".m4a")
        let stored = try #require(FileManager.default.contents(atPath: try storage.path(of: id + ".m4a")))
        #expect(Array(stored) == expected)
    }

    /// The writer flushes as it goes, every `flushEvery` bytes, not only when asked to sync; a
    /// writer that never reaches the mark flushes nothing before `sync`.
    @Test(arguments: [false, true])
    func writesAreFlushedAsTheyGo(onTmpfs: Bool) throws {
        let directory = onTmpfs ? TemporaryDirectory("lifesync-writer", in: "/dev/shm") : TemporaryDirectory("lifesync-writer")
        let chunk = 64 * 1024, chunks = 12
        let often = try TemporaryFileWriter(path: directory.file("often.part"), flushEvery: UInt64(2 * chunk))
        let never = try TemporaryFileWriter(path: directory.file("never.part"), flushEvery: UInt64(100 * chunk))
        for n in 0..<chunks {
            let bytes = Self.pattern(chunk, seed: UInt8(n))
            try bytes.withUnsafeBytes { try often.write(at: UInt64(n * chunk), $0) }
            try bytes.withUnsafeBytes { try never.write(at: UInt64(n * chunk), $0) }
        }
        try often.drain()
        try never.drain()
        #expect(often.flushedThrough >= UInt64(2 * chunk) && often.flushedThrough <= UInt64(chunks * chunk), "flushed while writing")
        #expect(often.flushedThrough % UInt64(chunk) == 0, "a flush covers whole chunks written before it")
        #expect(never.flushedThrough == 0)
        if !onTmpfs && Self.isDiskFileSystem(directory.path) {
            // Flushed pages are let go (tmpfs keeps its pages whatever is asked); the unflushed stay.
            let flushedPages = Int(often.flushedThrough / 4096)
            let resident = Self.residentPages(directory.file("often.part"))
            #expect(resident.prefix(flushedPages).allSatisfy { !$0 }, "the flushed pages stayed in the page cache")
            #expect(Self.residentPages(directory.file("never.part")).allSatisfy { $0 }, "unflushed pages went")
        }
        try never.sync()
        #expect(never.flushedThrough == UInt64(chunks * chunk))
        // A write at an earlier offset drops what followed: nothing beyond the file counts as flushed.
        try Self.pattern(chunk, seed: 77).withUnsafeBytes { try often.write(at: 0, $0) }
        try often.drain()
        #expect(often.flushedThrough <= UInt64(chunk))
        try often.sync()
        #expect(often.flushedThrough == UInt64(chunk))
    }

    /// Whether `path` is on ext4, xfs or btrfs, whose page cache lets clean pages go on request:
    /// the type of the longest mount point above it in /proc/self/mounts.
    static func isDiskFileSystem(_ path: String) -> Bool {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return false }
        var best: (point: String, type: String) = ("", "")
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1])
            let covers = point == "/" || path == point || path.hasPrefix(point + "/")
            if covers && point.count >= best.point.count { best = (point, String(fields[2])) }
        }
        return ["ext4", "xfs", "btrfs"].contains(best.type)
    }

    /// Which pages of `path` are in the page cache (mincore over a read-only mapping).
    static func residentPages(_ path: String) -> [Bool] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return [] }
        let length = Int(info.st_size)
        guard let map = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else { return [] }
        defer { munmap(map, length) }
        var resident = [UInt8](repeating: 0, count: (length + 4095) / 4096)
        guard mincore(map, length, &resident) == 0 else { return [] }
        return resident.map { $0 & 1 == 1 }
    }

    @Test func aWriteAtAnEarlierOffsetDropsWhatFollowedIt() throws {
        let directory = TemporaryDirectory("lifesync-writer")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let id = Identifier.make(role: .watch, random: SystemRandom())
        let chunk = 64 * 1024
        for n in 0..<4 { try storage.writeTemporary(id, offset: UInt64(n * chunk), bytes: Self.pattern(chunk, seed: UInt8(n))) }
        // A resume from the end of chunk 1: chunks 2 and 3 go, a new chunk 2 takes their place.
        let replacement = Self.pattern(chunk, seed: 42)
        try storage.writeTemporary(id, offset: UInt64(2 * chunk), bytes: replacement)
        try storage.syncTemporary(id)
        #expect(storage.temporarySize(id) == UInt64(3 * chunk))
        let expected = Self.pattern(chunk, seed: 0) + Self.pattern(chunk, seed: 1) + replacement
        #expect(try storage.readTemporary(id, offset: 0, count: 4 * chunk) == expected)
    }

    @Test func oddChunkSizesOnDiskAndOnTmpfsStillGetEveryByte() throws {
        let local = TemporaryDirectory("lifesync-writer")
        var folders = [local.path]
        var template = Array("/dev/shm/lifesync-writer-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        let inMemory = made ? String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        defer { if let inMemory { try? FileManager.default.removeItem(atPath: inMemory) } }
        if let inMemory { folders.append(inMemory) }
        for folder in folders {
            let storage = try FileRecordingStorage(replicaPath: folder + "/phone.sqlite")
            let id = Identifier.make(role: .phone, random: SystemRandom())
            var expected: [UInt8] = []
            for (n, size) in [1000, 4096, 4096, 12_288, 777, 8192].enumerated() {
                let bytes = Self.pattern(size, seed: UInt8(n))
                try storage.writeTemporary(id, offset: UInt64(expected.count), bytes: bytes)
                expected += bytes
            }
            try storage.syncTemporary(id)
            #expect(try storage.readTemporary(id, offset: 0, count: expected.count) == expected, "in \(folder)")
        }
    }

    @Test func aDiscardedTransferLeavesNoFileAndItsQueuedWritesLandNowhere() throws {
        let directory = TemporaryDirectory("lifesync-writer")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let id = Identifier.make(role: .watch, random: SystemRandom())
        for n in 0..<6 { try storage.writeTemporary(id, offset: UInt64(n * 65536), bytes: Self.pattern(65536, seed: UInt8(n))) }
        storage.discardTemporary(id)
        #expect(storage.temporarySize(id) == 0)
        #expect(!FileManager.default.fileExists(atPath: try storage.temporaryPath(id)))
        // A new transfer of the same recording starts from an empty file.
        try storage.writeTemporary(id, offset: 0, bytes: [7, 8, 9])
        #expect(try storage.readTemporary(id, offset: 0, count: 10) == [7, 8, 9])
    }

    @Test func moreTransfersAtOnceThanOpenWritersStillGetEveryByte() throws {
        let directory = TemporaryDirectory("lifesync-writer")
        let storage = try FileRecordingStorage(replicaPath: directory.file("phone.sqlite"))
        let ids = (0..<(FileRecordingStorage.maximumWriters + 3)).map { _ in Identifier.make(role: .watch, random: SystemRandom()) }
        let chunk = 64 * 1024
        // Round robin, so each ID's writer has been closed by the time its next chunk comes.
        for round in 0..<3 {
            for (n, id) in ids.enumerated() {
                try storage.writeTemporary(id, offset: UInt64(round * chunk), bytes: Self.pattern(chunk, seed: UInt8(n * 3 + round)))
            }
        }
        for (n, id) in ids.enumerated() {
            try storage.syncTemporary(id)
            let expected = (0..<3).flatMap { Self.pattern(chunk, seed: UInt8(n * 3 + $0)) }
            #expect(try storage.readTemporary(id, offset: 0, count: 4 * chunk) == expected)
        }
    }

    @Test func aWriteThatFailsIsReportedWithThePathAndTheSystemsReason() throws {
        // /dev/full refuses every write with ENOSPC.
        let writer = try TemporaryFileWriter(path: "/dev/full")
        let bytes = Self.pattern(4096, seed: 1)
        let error = #expect(throws: RecordingStorageError.self) {
            try bytes.withUnsafeBytes { try writer.write(at: 0, $0) }
            try writer.drain()  // had the write been queued, the failure shows here
        }
        #expect(error?.description.contains("/dev/full") == true)
        #expect(error?.description.contains(String(cString: strerror(ENOSPC))) == true)
    }
}
