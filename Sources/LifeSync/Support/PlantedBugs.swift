/// Deliberate defects for the simulator's planted-bug tests (issue: a checker that cannot fail
/// is a defect). Each one breaks one invariant; tests assert the simulator notices.
package struct PlantedBugs: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Acknowledge and advance the replica vector before the batch's rows are committed.
    package static let ackBeforeCommit = PlantedBugs(rawValue: 1 << 0)
    /// A relay forwards only the changes it originated, dropping its peers' changes.
    package static let relayDropsForeignChanges = PlantedBugs(rawValue: 1 << 1)
    /// Local writes are stamped from the wall clock alone, not above the version they replace.
    package static let stampIgnoresCausality = PlantedBugs(rawValue: 1 << 2)
    /// A watch removes a recording before the phone confirmed it.
    package static let watchRemovesBeforeConfirmation = PlantedBugs(rawValue: 1 << 3)
    /// A sender deletes a recording everywhere (a replicated tombstone, its file removed) when a
    /// receiver's FAILURE says `deleted`: a peer's word taken as a user delete.
    package static let trustsFailureDeleted = PlantedBugs(rawValue: 1 << 4)
    /// A PONG carries the PING's nonce plus one. For the conformance runner's proof that it can
    /// fail (`LIFESYNC_PLANTED_BUGS`, test-only), as are the two below.
    package static let pongWrongNonce = PlantedBugs(rawValue: 1 << 5)
    /// At equal HLCs and vector weights the smaller origin wins the merge, not the greater.
    package static let reversedOriginTieBreak = PlantedBugs(rawValue: 1 << 6)
    /// A frame of an unknown type is refused as `malformed` instead of `unknown_type`.
    package static let unknownTypeAsMalformed = PlantedBugs(rawValue: 1 << 7)
    /// Every CHUNK sent carries a running digest with its last byte flipped.
    package static let wrongChunkDigest = PlantedBugs(rawValue: 1 << 8)
    /// A receiver forgets the verified prefix of an interrupted transfer and ACCEPTs from 0.
    package static let resumeFromZero = PlantedBugs(rawValue: 1 << 9)
    /// A merge keeps only an entry's latest write, dropping the earlier writes that still win a
    /// field: a concurrent edit of another field is lost where it met the later one.
    package static let dropsFieldWinners = PlantedBugs(rawValue: 1 << 10)
    /// A receiver stores a change whatever seals came with it: a peer's write under another
    /// node's origin is taken as that node's.
    package static let ignoresSeals = PlantedBugs(rawValue: 1 << 11)
}
