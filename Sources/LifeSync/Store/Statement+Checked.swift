extension Statement {
    /// A counter column (a sequence, a size, a byte count) read back within `0…maximum`. A file
    /// edited by hand or damaged on disk can hold anything: out of range is `ReplicaError.damaged`,
    /// never a trap on the conversion.
    ///
    /// ```swift
    /// let seq = try row.counter(1, upTo: Message.Limits.maximumSequence, "replica_vector.seq")
    /// ```
    func counter(_ column: Int32, upTo maximum: UInt64, _ what: @autoclosure () -> String) throws -> UInt64 {
        let value = int64(column)
        guard value >= 0, UInt64(value) <= maximum else {
            throw ReplicaError.damaged("\(what()) holds \(value), outside 0…\(maximum)")
        }
        return UInt64(value)
    }

    /// A SHA-256 column, stored as 64 hex digits.
    func digest(_ column: Int32, _ what: @autoclosure () -> String) throws -> SHA256.Digest {
        let text = string(column)
        guard let digest = SHA256.Digest(hex: text) else { throw ReplicaError.damaged("\(what()) holds \"\(text.prefix(80))\", not a SHA-256") }
        return digest
    }

    /// An HLC column, within `0…HLCTimestamp.maximum`.
    func hlc(_ column: Int32, _ what: @autoclosure () -> String) throws -> HLCTimestamp {
        HLCTimestamp(rawValue: Int64(try counter(column, upTo: UInt64(HLCTimestamp.maximum.rawValue), what())))
    }
}
