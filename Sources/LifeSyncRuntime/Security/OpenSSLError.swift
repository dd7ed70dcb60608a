import CSSL

/// A failure inside OpenSSL, with what we were doing and what OpenSSL's error queue said.
public struct OpenSSLError: Error, Equatable, CustomStringConvertible {
    /// What failed, in our words ("signing the certificate").
    public let operation: String
    /// OpenSSL's own reasons, oldest first (may be empty).
    public let reasons: [String]

    public var description: String {
        reasons.isEmpty ? operation : "\(operation): \(reasons.joined(separator: "; "))"
    }

    /// Drains this thread's OpenSSL error queue into an error (at most 8 reasons are kept).
    static func drain(_ operation: String) -> OpenSSLError {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            guard reasons.count < 8 else { continue }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(cBuffer: buffer))
        }
        return OpenSSLError(operation: operation, reasons: reasons)
    }

    /// Fails with the queue's reasons unless `ok`.
    static func check(_ ok: Bool, _ operation: @autoclosure () -> String) throws {
        if !ok { throw drain(operation()) }
    }
}
