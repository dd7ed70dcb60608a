import CCrypto

/// Streaming SHA-256 through OpenSSL's EVP interface (the low-level SHA256_* calls are
/// deprecated in OpenSSL 3).
///
/// ```swift
/// let hasher = SHA256()
/// hasher.update("abc".utf8)
/// hasher.finalize().hex   // "ba7816bf…"
/// ```
public final class SHA256 {
    private let context: OpaquePointer
    private var finished = false

    /// The algorithm, fetched from OpenSSL's providers once: `EVP_sha256()` fetches it again on
    /// every initialisation, under a lock, which cost more than hashing a short message (every
    /// write's digest in a sync, PROTOCOL.md §5.2.5).
    nonisolated(unsafe) private static let algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    public init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, SHA256.algorithm ?? EVP_sha256(), nil) == 1 else {
            fatalError("OpenSSL could not set up SHA-256; libcrypto is broken")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Starts over, for the next message, keeping the context: hashing many short messages
    /// (every write's digest in a batch) without a context allocated for each.
    public func reset() {
        finished = false
        let ok = EVP_DigestInit_ex(context, SHA256.algorithm ?? EVP_sha256(), nil)
        precondition(ok == 1, "EVP_DigestInit_ex failed")
    }

    public func update(_ buffer: UnsafeRawBufferPointer) {
        precondition(!finished, "SHA256 used after finalize()")
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let ok = EVP_DigestUpdate(context, base, buffer.count)
        precondition(ok == 1, "EVP_DigestUpdate failed")
    }

    public func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }

    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public func update<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    /// The digest of everything passed to `update`.
    public func finalize() -> Digest {
        precondition(!finished, "SHA256 finalized twice")
        finished = true
        return SHA256.final(context)
    }

    /// The digest of everything passed to `update` so far, leaving the hasher open for more: a
    /// recording chunk carries the digest of the file up to its end (PROTOCOL.md §5.9.3), so one
    /// pass over the bytes both checks every chunk and yields the whole-file hash.
    public func digestSoFar() -> Digest {
        precondition(!finished, "SHA256 used after finalize()")
        guard let copy = EVP_MD_CTX_new() else { fatalError("OpenSSL could not allocate a digest context") }
        defer { EVP_MD_CTX_free(copy) }
        precondition(EVP_MD_CTX_copy_ex(copy, context) == 1, "EVP_MD_CTX_copy_ex failed")
        return SHA256.final(copy)
    }

    /// Finishes `context`'s digest into a buffer on the stack.
    private static func final(_ context: OpaquePointer) -> Digest {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { out in
            var length: UInt32 = 0
            let ok = EVP_DigestFinal_ex(context, out.baseAddress, &length)
            precondition(ok == 1 && length == 32, "EVP_DigestFinal_ex failed")
            return Digest(UnsafeRawBufferPointer(out))
        }
    }

    /// The SHA-256 of `bytes` in one call.
    public static func hash(_ bytes: [UInt8]) -> Digest {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    public static func hash<S: Sequence>(_ bytes: S) -> Digest where S.Element == UInt8 {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// 32 bytes held inline, as four big-endian words: no heap storage, no reference counting (a
    /// sync makes two digests a write, the computed one and its seal's).
    public struct Digest: Hashable, Sendable, CustomStringConvertible {
        private let w0, w1, w2, w3: UInt64

        /// - Precondition: exactly 32 bytes.
        public init<C: Collection>(bytes: C) where C.Element == UInt8 {
            precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
            if let digest = bytes.withContiguousStorageIfAvailable({ Digest(UnsafeRawBufferPointer($0)) }) {
                self = digest
                return
            }
            self = Array(bytes).withUnsafeBytes { Digest($0) }
        }

        /// From 32 bytes in memory.
        init(_ raw: UnsafeRawBufferPointer) {
            precondition(raw.count == 32, "a SHA-256 digest is 32 bytes")
            w0 = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            w1 = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            w2 = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
            w3 = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }

        /// Parses 64 hex digits (either case); nil otherwise.
        public init?(hex: String) {
            guard let bytes = Hex.decode(hex), bytes.count == 32 else { return nil }
            self.init(bytes: bytes)
        }

        /// The 32 bytes, in order.
        public var bytes: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(32)
            append(to: &out)
            return out
        }

        /// Appends the 32 bytes to `out`, with no array of their own.
        func append(to out: inout [UInt8]) {
            withUnsafeBytes(of: (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)) { out.append(contentsOf: $0) }
        }

        /// Lowercase hex.
        public var hex: String { Hex.encode(bytes) }
        public var description: String { hex }
    }
}

package enum Hex {
    package static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses hex digits (whitespace ignored); nil on an odd count or a non-hex character.
    package static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var high: UInt8?
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case 0x30...0x39: value = byte - 0x30
            case 0x61...0x66: value = byte - 0x61 + 10
            case 0x41...0x46: value = byte - 0x41 + 10
            case 0x20, 0x0A, 0x0D, 0x09: continue
            default: return nil
            }
            if let h = high { out.append(h << 4 | value); high = nil } else { high = value }
        }
        return high == nil ? out : nil
    }
}
