/// What kind of device a node plays. The role decides the sync policy (DESIGN.md, Sync):
/// the phone is the source of truth for recordings, the mac a full mirror, the watch a sender.
public enum Role: String, CaseIterable, Sendable, Codable {
    case watch
    case phone
    case mac

    /// Full replicas receive every entry; a watch only sends (unless configured to receive).
    public var isFullReplica: Bool { self != .watch }
}
