extension RecordingStorage {
    /// Whether the stored copy of `recording` is exactly the bytes it was attached with (its
    /// size and SHA-256), read in 1 MiB pieces; false when it cannot be read.
    package func holdsIntact(_ recording: Recording) -> Bool {
        let hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < recording.size {
            guard let got = try? buffer.withUnsafeMutableBytes({ try read(recording.storageName, offset: offset, into: $0) }), got > 0 else { return false }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            offset += UInt64(got)
        }
        return offset == recording.size && hasher.finalize() == recording.sha256
    }
}
