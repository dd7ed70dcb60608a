extension Chunk {
    /// A CHUNK frame (PROTOCOL.md §5.9.3) built in one buffer: `fill` gets the frame's own data
    /// region, reads the file straight into it and returns the digest the chunk carries. The same
    /// bytes as `Message.chunk(…).encoded()`, without a separate read buffer and a copy of every
    /// chunk into its frame.
    ///
    /// ```swift
    /// let frame = try Chunk.frame(recordingID: id, offset: 0, count: 8) { data in
    ///     try storage.read(name, offset: 0, into: data)   // exactly 8 bytes or it throws
    ///     hasher.update(UnsafeRawBufferPointer(data)); return hasher.digestSoFar().bytes
    /// }
    /// ```
    static func frame(recordingID: String, offset: UInt64, count: Int,
                      fill: (UnsafeMutableRawBufferPointer) throws -> [UInt8]) rethrows -> [UInt8] {
        precondition(count <= Message.Limits.maximumChunkBytes, "chunk larger than the protocol maximum")
        var header = ByteWriter(capacity: 64 + recordingID.utf8.count)
        header.u32(0)
        header.u8(MessageType.chunk.rawValue)
        header.string(recordingID)
        header.u64(offset)
        let digestStart = header.reserve(32)
        header.u32(UInt32(count))
        let head = header.finishFrame(trailing: count)
        let dataStart = head.count
        // The data region is never zero-filled first: `fill` writes every byte of it or throws.
        return try [UInt8](unsafeUninitializedCapacity: dataStart + count) { frame, initialized in
            let raw = UnsafeMutableRawBufferPointer(frame)
            head.withUnsafeBytes { raw.copyMemory(from: $0) }
            let digest = try fill(UnsafeMutableRawBufferPointer(rebasing: raw[dataStart...]))
            precondition(digest.count == 32, "a chunk digest is 32 bytes")
            UnsafeMutableRawBufferPointer(rebasing: raw[digestStart..<(digestStart + 32)]).copyBytes(from: digest)
            initialized = dataStart + count
        }
    }
}
