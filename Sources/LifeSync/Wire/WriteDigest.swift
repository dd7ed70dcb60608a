/// The SHA-256 that names one write in its origin's seal (PROTOCOL.md §5.2.5): everything a
/// change record says of the write, with origins as names rather than a batch's table indexes
/// and the content in canonical form, so every replica computes the same digest for the same
/// write whoever relays it and however a sender spelled its JSON.
///
/// The hashed bytes: the domain `lifesync-write-v2` and a zero byte; `kind` (u8); `flags` and
/// the mask as the change record carries them (`FieldMask.writeFlags`); `id` and `origin` (str16); `seq` and `hlc` (u64); the version vector as a
/// u16 count and (origin str16, seq u64) pairs in ascending origin order; the content as
/// `bytes32`, canonical JSON (§5.2.2, §5.9.6), empty for a delete.
package enum WriteDigest {
    static let domain = Array("lifesync-write-v2".utf8) + [0]

    /// The digest of a write whose content is `canonicalContent` (empty for a delete).
    /// `hasher`, when given, is reset and used: a caller hashing many writes reuses one.
    package static func of(kind: ChangeKind, stamp: VersionStamp, id: String, fields: FieldMask,
                          canonicalContent: ArraySlice<UInt8>, hasher reused: SHA256? = nil) -> SHA256.Digest {
        var writer = ByteWriter(capacity: domain.count + 104 + stamp.vector.entries.count * 46)
        writer.raw(domain)
        writer.u8(kind.rawValue)
        fields.writeFlags(deleted: stamp.deleted, to: &writer)
        writer.string(id)
        writer.string(stamp.origin)
        writer.u64(stamp.sequence)
        writer.u64(UInt64(bitPattern: stamp.hlc.rawValue))
        writer.u16(UInt16(clamping: stamp.vector.entries.count))
        for entry in stamp.vector.entries {
            writer.string(entry.origin)
            writer.u64(entry.sequence)
        }
        writer.u32(UInt32(canonicalContent.count))
        // The content is hashed where it lies, not copied after the header.
        let hasher = reused ?? SHA256()
        if reused != nil { hasher.reset() }
        hasher.update(writer.bytes)
        hasher.update(canonicalContent)
        return hasher.finalize()
    }
}

extension EncodedChange {
    /// This write's digest. The payload a replica sends is canonical already.
    package var digest: SHA256.Digest { digest(hasher: nil) }

    package func digest(hasher: SHA256?) -> SHA256.Digest {
        WriteDigest.of(kind: kind, stamp: stamp, id: id, fields: fields, canonicalContent: payload[...], hasher: hasher)
    }
}

extension Change {
    /// This write's digest, over its content in canonical form.
    package var digest: SHA256.Digest {
        WriteDigest.of(kind: kind, stamp: stamp, id: id, fields: fields, canonicalContent: payload[...])
    }
}
