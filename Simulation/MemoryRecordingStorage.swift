import LifeSync

/// Recording storage in memory, for the simulator and tests: the same contract as the folder on
/// disk, plus the faults a disk can have (a quota that runs out) and a log of every removal, so
/// the checker can prove nothing removed a recording it should not have.
public final class MemoryRecordingStorage: RecordingStorage {
    public private(set) var files: [String: [UInt8]] = [:]
    public private(set) var temporary: [String: [UInt8]] = [:]
    /// Every `remove` call, in order.
    public private(set) var removals: [String] = []
    /// Bytes the storage may hold in all; a write beyond fails like a full disk.
    public var quota: Int = .max
    /// Called before each removal, with the file name: the simulator's check that only allowed
    /// removals happen.
    public var onRemove: ((String) -> Void)?

    public init() {}

    public var used: Int { files.values.reduce(0) { $0 + $1.count } + temporary.values.reduce(0) { $0 + $1.count } }

    public func exists(_ fileName: String) -> Bool { files[fileName] != nil }

    public func read(_ fileName: String, offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let file = files[fileName] else { throw RecordingStorageError("no file \(fileName)") }
        let start = min(Int(offset), file.count)
        let piece = file[start..<min(start + buffer.count, file.count)]
        piece.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return piece.count
    }

    public func remove(_ fileName: String) throws {
        onRemove?(fileName)
        removals.append(fileName)
        files[fileName] = nil
    }

    public func temporarySize(_ id: String) -> UInt64 { UInt64(temporary[id]?.count ?? 0) }

    public func readTemporary(_ id: String, offset: UInt64, count: Int) throws -> [UInt8] {
        let file = temporary[id] ?? []
        let start = min(Int(offset), file.count)
        return Array(file[start..<min(start + count, file.count)])
    }

    public func writeTemporary(_ id: String, offset: UInt64, bytes: UnsafeRawBufferPointer) throws {
        // Taken out while it changes, so appending does not copy the whole file each time.
        var file = temporary.removeValue(forKey: id) ?? []
        guard used + Int(offset) + bytes.count <= quota else {
            temporary[id] = file
            throw RecordingStorageError("no space left on the device")
        }
        if file.count > Int(offset) { file.removeSubrange(Int(offset)...) }
        if file.count < Int(offset) { file += [UInt8](repeating: 0, count: Int(offset) - file.count) }
        file += bytes
        temporary[id] = file
    }

    public func syncTemporary(_ id: String) throws {}

    public func promoteTemporary(_ id: String, to fileName: String) throws {
        guard let file = temporary.removeValue(forKey: id) else { throw RecordingStorageError("no temporary file for \(id)") }
        files[fileName] = file
    }

    public func discardTemporary(_ id: String) { temporary[id] = nil }

    /// Stores a file directly (what `attach` does on disk).
    public func put(_ fileName: String, _ bytes: [UInt8]) { files[fileName] = bytes }
}
