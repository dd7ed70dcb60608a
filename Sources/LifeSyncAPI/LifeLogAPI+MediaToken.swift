/// Browsers cannot put an Authorization header on `EventSource` or `<audio src>`, so the
/// dashboard asks for a media token (`POST /api/media-token`, with the key) and puts that in
/// those URLs as `?token=`. Why not the key itself in the URL: URLs end up in history, logs and
/// Referer headers. A token is safe to leak that way because it is
/// - scoped: taken only on GET/HEAD of `/api/changes/stream` and `/api/recordings/:id/content`
///   (read-only; never a write, never the entry list or keys),
/// - short-lived: `mediaTokenLifetime`, and
/// - tied to its key: an HMAC under the key's stored hash, so revoking the key ends its tokens.
/// It is `lsm_<expiry ms>_<HMAC-SHA-256(key hash, "media:<expiry ms>")>`; nothing is stored.
import LifeSync
import LifeSyncHTTP

extension LifeLogAPI {
    /// Ms a media token is taken for after it was made.
    package static let mediaTokenLifetime: Int64 = 3_600_000

    static let mediaTokenPrefix = "lsm_"

    /// Whether `?token=` may stand in for the key on this request.
    static func takesMediaToken(_ request: HTTPRequest, segments: [String]) -> Bool {
        guard request.method == "GET" || request.method == "HEAD" else { return false }
        return segments == ["api", "changes", "stream"]
            || (segments.count == 4 && segments[0] == "api" && segments[1] == "recordings" && !segments[2].isEmpty && segments[3] == "content")
    }

    static func mediaToken(keyHash: String, expires: Int64) -> String {
        let mac = SHA256.hmac(key: Array(keyHash.utf8), message: Array("media:\(expires)".utf8))
        return mediaTokenPrefix + "\(expires)_" + mac.hex
    }

    /// `POST /api/media-token`: a token for the key this request bears.
    func makeMediaToken(_ request: HTTPRequest, keyHash: String) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: [])
        let expires = replica.now.millisecondsSince1970 + Self.mediaTokenLifetime
        return .json(201, .object([("token", .string(Self.mediaToken(keyHash: keyHash, expires: expires))),
                                   ("expires_at", .string(Timestamp(millisecondsSince1970: expires).iso8601)),
                                   ("valid_on", .array([.string("GET /api/changes/stream"), .string("GET /api/recordings/:id/content")]))]))
    }

    /// Whether `token` is one this node made, unexpired, under a key it still holds.
    func mediaTokenIsValid(_ token: String) throws -> Bool {
        // lsm_ + at most 15 digits + _ + 64 hex digits: anything longer is no token of ours.
        guard token.hasPrefix(Self.mediaTokenPrefix), token.utf8.count <= 4 + 15 + 1 + 64 else { return false }
        let parts = token.dropFirst(Self.mediaTokenPrefix.count).split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count <= 15, parts[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let expires = Int64(parts[0]) else { return false }
        let now = replica.now.millisecondsSince1970
        guard expires > now, expires - now <= Self.mediaTokenLifetime else { return false }
        return try replica.apiKeyHashes().contains { Self.constantTimeEqual(Self.mediaToken(keyHash: $0, expires: expires), token) }
    }

    /// Equal strings, compared without an early exit (no timing hint how much of a guess is right).
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
