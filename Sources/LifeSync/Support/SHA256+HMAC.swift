extension SHA256 {
    /// HMAC-SHA-256 (RFC 2104): a keyed digest that, unlike `hash(key + message)`, cannot be
    /// extended to a longer message by whoever sees one digest.
    public static func hmac(key: [UInt8], message: [UInt8]) -> Digest {
        let blockSize = 64
        var block = key.count > blockSize ? hash(key).bytes : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = hash(block.map { $0 ^ 0x36 } + message)
        return hash(block.map { $0 ^ 0x5c } + inner.bytes)
    }
}
