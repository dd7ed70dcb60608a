/// The running digest at the end of every `chunkSize` bytes (and at the end of a shorter last
/// piece), taken while a file is hashed once; stops collecting past `maximum`. What `attach`
/// keeps for a sender (`RecordingStorage.chunkDigests`).
///
///     var digests = ChunkDigestCollector(chunkSize: 1 << 20)
///     digests.update(hasher, with: bytes)           // as often as the file is read
///     digests.finished(with: hasher.finalize())     // one digest per chunk
package struct ChunkDigestCollector {
    package let chunkSize: UInt32
    package let maximum: Int
    private(set) var digests: [SHA256.Digest] = []
    private(set) var overflowed = false
    private var intoChunk: UInt64 = 0

    package init(chunkSize: UInt32, maximum: Int = .max) {
        precondition(chunkSize > 0, "a chunk holds something")
        self.chunkSize = chunkSize
        self.maximum = maximum
    }

    /// Feeds `bytes` to `hasher`, noting its digest at each chunk boundary they cross.
    package mutating func update(_ hasher: SHA256, with bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while !rest.isEmpty {
            let take = min(rest.count, Int(UInt64(chunkSize) - intoChunk))
            hasher.update(UnsafeRawBufferPointer(rebasing: rest[..<take]))
            intoChunk += UInt64(take)
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if intoChunk == UInt64(chunkSize) {
                intoChunk = 0
                if digests.count < maximum { digests.append(hasher.digestSoFar()) } else { overflowed = true }
            }
        }
        precondition(intoChunk < UInt64(chunkSize), "a boundary reached is noted")
    }

    /// The digests of the whole file, whose digest is `final`; nil past `maximum`.
    package func finished(with final: SHA256.Digest) -> [SHA256.Digest]? {
        guard !overflowed else { return nil }
        if intoChunk == 0 { return digests }
        return digests.count < maximum ? digests + [final] : nil
    }
}
