/// The protocol versions this build speaks.
package enum ProtocolVersion {
    /// Version 2: TLS 1.3 with pinned keys, `not_trusted`, signed recording metadata. A
    /// version-1 peer could not verify a recording's origin, so it is refused, not served.
    package static let minimum: UInt16 = 2
    package static let maximum: UInt16 = 2
}
