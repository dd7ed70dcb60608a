/// Media types for common recording extensions, both ways: `lifesync attach` guesses a file's
/// type from its extension, an HTTP upload names its file from its Content-Type.
extension Recording {
    static let mediaTypes: [(ext: String, type: String)] = [
        ("m4a", "audio/mp4"), ("mp4", "video/mp4"), ("mp3", "audio/mpeg"), ("wav", "audio/wav"), ("aac", "audio/aac"),
        ("caf", "audio/x-caf"), ("ogg", "audio/ogg"), ("opus", "audio/opus"), ("flac", "audio/flac"), ("webm", "audio/webm"),
        ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("png", "image/png"), ("heic", "image/heic"), ("txt", "text/plain"),
        ("json", "application/json"),
    ]

    /// The media type for an extension (`m4a` → `audio/mp4`), or `application/octet-stream`.
    package static func mediaType(forExtension ext: String) -> String {
        mediaTypes.first { $0.ext == ext.lowercased() }?.type ?? "application/octet-stream"
    }

    /// The extension for a media type (`audio/mp4` → `m4a`; parameters ignored), or `bin`.
    package static func fileExtension(forMediaType type: String) -> String {
        let bare = type.split(separator: ";").first.map { $0.withoutOptionalWhitespace.lowercased() } ?? ""
        return mediaTypes.first { $0.type == bare }?.ext ?? "bin"
    }

    /// What is wrong with `type` as a recording's media type, or nil: `type/subtype`, at most
    /// 128 bytes, printable ASCII (it is sent back as a header line).
    package static func mediaTypeProblem(_ type: String) -> String? {
        guard !type.isEmpty, type.utf8.count <= 128, type.contains("/"), type.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F || $0 == 0x20 }) else {
            return "expected a media type like audio/mp4, got '\(type.prefix(60))'"
        }
        return nil
    }
}
