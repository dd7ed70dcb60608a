extension Message {
    /// Every bound on what a peer may send, in one place (PROTOCOL.md §3.1). Each is checked
    /// before the arithmetic or allocation it protects; a value past one is refused with the
    /// error code the spec names, and nothing of the frame is kept.
    package enum Limits {
        /// Changes in one BATCH.
        package static let maximumChangesPerBatch = 10_000
        /// One change's content: the canonical JSON of an entry or recording. The same number
        /// bounds what validation accepts on every way in (`EntryLimits.encodedBytes`), so
        /// nothing a node stores is refused by its peers.
        package static let maximumEntryBytes = EntryLimits.encodedBytes
        package static let maximumChunkBytes = 4 * 1024 * 1024
        /// ERROR/FAILURE messages, OFFER file names and media types.
        package static let maximumStringBytes = 1024
        /// Sequence numbers (changes, version vectors, `through`): 2^53 − 1, so every one is
        /// exact as a JSON number too (status output, the HTTP API). A node writing a million
        /// changes a second would take 285 years to get there.
        package static let maximumSequence: UInt64 = (1 << 53) - 1
        /// Origins in one vector (HELLO, CAUGHT_UP, SYNC_REQUEST, a change's `vv`, `through`) and
        /// in one BATCH's origin table. A replica never knows more origins than this either
        /// (`maximumReplicaOrigins`), so its HELLO always fits. A personal mesh has a handful of
        /// devices and a new incarnation only after a restore: 4,096 is generous.
        package static let maximumOrigins = 4_096
        /// Origins a replica keeps: a batch that would make it know more is refused
        /// (`limit_exceeded`), so what it stores it can always send on.
        package static let maximumReplicaOrigins = maximumOrigins
        /// The longest frame before the peer's HELLO: a HELLO with a full vector is under 200 KiB,
        /// and a peer nobody has heard from yet cannot make us buffer 8 MiB.
        package static let maximumHandshakeFrameLength = 1024 * 1024
        /// The longest first frame from a peer whose key is not trusted: it is read only to note
        /// what the key claims to be (a HELLO with a vector of some hundred origins fits), so a
        /// crowd of strangers cannot make us buffer a megabyte each.
        package static let maximumUntrustedFrameLength = 64 * 1024
        /// Seals in one BATCH (PROTOCOL.md §5.2.5): at most one per origin the table can name.
        package static let maximumSealsPerBatch = maximumOrigins
        /// Members of all the seals of one BATCH together: a relay forwards whole seals, each at
        /// most what its origin sent in one batch, and stops adding changes before this.
        package static let maximumSealMembersPerBatch = 65_536
        /// Probes per origin in a HISTORY (PROTOCOL.md §5.10): the sender's dense top and
        /// log-spaced ones below fit well within it.
        package static let maximumHistoryProbesPerOrigin = 256
        /// Probes of all the origins of one HISTORY together.
        package static let maximumHistoryProbes = 65_536
        /// Recordings one WANT names (PROTOCOL.md §5.9.9), and WANTs a receiver sends in one
        /// session: what a sender keeps of them is bounded by their product.
        package static let maximumWantedRecordings = 1_024
        package static let maximumWantsPerSession = 16
    }
}
