/// A protocol violation found while decoding, with the error code the spec assigns to it
/// (PROTOCOL.md §6). The session answers it with an ERROR frame and closes the connection.
public struct WireError: Error, Equatable, Sendable, CustomStringConvertible {
    package var code: ErrorCode
    public var message: String

    package init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code) (\(code.rawValue)): \(message)" }
}

/// The error codes of an ERROR frame.
package enum ErrorCode: UInt16, Sendable, CustomStringConvertible {
    /// The frame or payload does not follow the encoding.
    case malformed = 1
    /// A length prefix above the maximum frame size.
    case frameTooLarge = 2
    /// A message type this version does not define.
    case unknownType = 3
    /// The first frame was not a HELLO with the right magic.
    case badHandshake = 4
    /// No protocol version in common.
    case versionUnsupported = 5
    /// A message that is not allowed in the current state (e.g. a BATCH before HELLO).
    case unexpectedMessage = 6
    /// A change in a batch failed validation; nothing of the batch was applied.
    case invalidChange = 7
    /// The peer claims a node ID or incarnation that belongs to another node, or to us.
    case identityConflict = 8
    /// The peer sent nothing for longer than the idle timeout.
    case idleTimeout = 9
    /// The receiver could not store what it received (disk full, I/O error).
    case storageFailure = 10
    /// The node is shutting down.
    case shuttingDown = 11
    /// Any other failure.
    case internalError = 12
    /// The two nodes already have a connection; this one is redundant and closes.
    case duplicateConnection = 13
    /// Storing what the peer sent would pass one of the receiver's bounds (PROTOCOL.md §3.1):
    /// refused whole, nothing stored.
    case limitExceeded = 14
    /// The peer's key is not in the receiver's trust store, or it is another node's key than
    /// the HELLO names (PROTOCOL.md §7.2). Nothing was sent but this ERROR.
    case notTrusted = 15
    /// A change that its origin did not make: not sealed, sealed by a key that is not its
    /// origin's, or other than the seal says (PROTOCOL.md §5.2.5). Nothing of the batch is kept.
    case forgedChange = 16

    package var description: String {
        switch self {
        case .malformed: return "malformed"
        case .frameTooLarge: return "frame_too_large"
        case .unknownType: return "unknown_type"
        case .badHandshake: return "bad_handshake"
        case .versionUnsupported: return "version_unsupported"
        case .unexpectedMessage: return "unexpected_message"
        case .invalidChange: return "invalid_change"
        case .identityConflict: return "identity_conflict"
        case .idleTimeout: return "idle_timeout"
        case .storageFailure: return "storage_failure"
        case .shuttingDown: return "shutting_down"
        case .internalError: return "internal_error"
        case .duplicateConnection: return "duplicate_connection"
        case .limitExceeded: return "limit_exceeded"
        case .notTrusted: return "not_trusted"
        case .forgedChange: return "forged_change"
        }
    }
}
