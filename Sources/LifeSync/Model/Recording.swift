/// A recording (a voice note, a file) as the replicas know it. The metadata replicates like an
/// entry; the bytes follow by chunked transfer with SHA-256 acknowledgement (LifeAdmin §1.1).
///
/// ```json
/// {"id": "watch_550e…", "file_name": "voice note.m4a", "size": 48213, "sha256": "9f86…",
///  "media_type": "audio/mp4", "entry_id": null, "origin_node": "watch_1b4e…", "created_at": "…"}
/// ```
package struct Recording: Equatable, Sendable {
    package var id: String
    /// The name the user's file had when it was attached (its base name; older recordings
    /// carry `{id}.{ext}` here). Shown, never used as a path: see `storageName`.
    package var fileName: String
    package var size: UInt64
    /// Lowercase hex SHA-256 of the whole file.
    package var sha256: SHA256.Digest
    package var mediaType: String
    /// The entry this recording belongs to, if any.
    package var entryID: String?
    /// The node that attached it.
    package var originNode: String
    package var createdAt: Timestamp
    /// The origin's public key (DER SPKI) and its signature over the signed fields
    /// (`RecordingSignature`); nil only in rows stored before protocol version 2.
    package var originKey: [UInt8]?
    package var signature: [UInt8]?
    /// The lengths those two always have (`RecordingSignature` makes and checks them): a DER
    /// SubjectPublicKeyInfo of a P-256 key with an uncompressed point; r then s, 32 bytes each.
    package static let originKeyLength = 91
    package static let signatureLength = 64

    package init(id: String, fileName: String, size: UInt64, sha256: SHA256.Digest, mediaType: String, entryID: String?,
                originNode: String, createdAt: Timestamp, originKey: [UInt8]? = nil, signature: [UInt8]? = nil) {
        self.id = id
        self.fileName = fileName
        self.size = size
        self.sha256 = sha256
        self.mediaType = mediaType
        self.entryID = entryID
        self.originNode = originNode
        self.createdAt = createdAt
        self.originKey = originKey
        self.signature = signature
    }

    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(id)), ("file_name", .string(fileName)), ("size", .number(Double(size))),
            ("sha256", .string(sha256.hex)), ("media_type", .string(mediaType)), ("origin_node", .string(originNode)),
            ("created_at", .string(createdAt.iso8601)),
        ]
        if let entryID { members.append(("entry_id", .string(entryID))) }
        if let originKey { members.append(("origin_key", .string(Hex.encode(originKey)))) }
        if let signature { members.append(("signature", .string(Hex.encode(signature)))) }
        return .object(members)
    }

    /// The largest file a recording may be (2^53 bytes keeps the size exact in JSON).
    static let maximumSize: Double = 9_007_199_254_740_992

    /// Validates recording metadata from a peer or the store; every rule names its field.
    package static func validated(from json: JSONValue) throws(ValidationError) -> Recording {
        var fields = try FieldReader(json, path: "")
        guard let id = try fields.optionalString("id") else { throw ValidationError(field: "id", reason: "is required") }
        guard Identifier.isValid(id) else { throw ValidationError(field: "id", reason: "must be {role}_{uuid-v4} in lowercase") }
        guard let fileName = try fields.optionalString("file_name") else { throw ValidationError(field: "file_name", reason: "is required") }
        if let problem = Recording.fileNameProblem(fileName) { throw ValidationError(field: "file_name", reason: problem) }
        guard let size = try fields.optionalNumber("size"), size >= 0, size == size.rounded(), size < maximumSize else {
            throw ValidationError(field: "size", reason: "must be a whole number of bytes")
        }
        guard let text = try fields.optionalString("sha256"), text.utf8.count == 64,
              text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }), let sha = SHA256.Digest(hex: text) else {
            throw ValidationError(field: "sha256", reason: "must be 64 lowercase hex digits")
        }
        guard let mediaType = try fields.optionalString("media_type"), !mediaType.isEmpty, mediaType.count <= 128 else {
            throw ValidationError(field: "media_type", reason: "must be a media type such as audio/mp4 (≤ 128 characters)")
        }
        let entryID = try fields.optionalString("entry_id")
        if let entryID { try LogEntry.validateEntryID(entryID, field: "entry_id") }
        guard let origin = try fields.optionalString("origin_node"), Identifier.isValid(origin) else {
            throw ValidationError(field: "origin_node", reason: "must be a node ID {role}_{uuid-v4}")
        }
        guard let created = try fields.optionalTimestamp("created_at") else { throw ValidationError(field: "created_at", reason: "is required") }
        let key = try strictHex(fields.optionalString("origin_key"), field: "origin_key", bytes: Recording.originKeyLength,
                                meaning: "the origin's P-256 public key (DER SubjectPublicKeyInfo)")
        let signature = try strictHex(fields.optionalString("signature"), field: "signature", bytes: Recording.signatureLength,
                                      meaning: "the origin's ECDSA signature (r || s)")
        try fields.refuseUnknown()
        return Recording(id: id, fileName: fileName, size: UInt64(size), sha256: sha, mediaType: mediaType, entryID: entryID,
                         originNode: origin, createdAt: created, originKey: key, signature: signature)
    }

    /// Exactly `bytes` bytes as lowercase hex: one spelling per value, so the canonical JSON a
    /// relay sends on is the one the origin made.
    static func strictHex(_ text: String?, field: String, bytes: Int, meaning: String) throws(ValidationError) -> [UInt8] {
        guard let text else { throw ValidationError(field: field, reason: "is required (protocol version 2 signs recordings)") }
        guard text.utf8.count == 2 * bytes, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
              let decoded = Hex.decode(text) else {
            throw ValidationError(field: field, reason: "must be \(2 * bytes) lowercase hex digits: \(meaning)")
        }
        return decoded
    }

    /// The longest `file_name`, in bytes of UTF-8 (a file name's limit on common file systems).
    package static let maximumFileNameBytes = 255

    /// What is wrong with `name` as a recording's `file_name`, or nil: a base name (no '/'),
    /// without NUL or other control characters, not "." or "..", 1…255 bytes of UTF-8.
    package static func fileNameProblem(_ name: String) -> String? {
        let shown = "\"\(name.unicodeScalars.prefix(80).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined())\""
        if name.isEmpty || name == "." || name == ".." { return "must be a file's name, got \(shown)" }
        if name.utf8.count > maximumFileNameBytes { return "must be at most \(maximumFileNameBytes) bytes of UTF-8, got \(name.utf8.count)" }
        if name.contains("/") { return "must be a base name without '/', got \(shown)" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return "must not contain NUL or control characters, got \(shown)" }
        return nil
    }

    /// `{id}.{ext}`, the extension from `file_name` (1–10 lowercase letters or digits, else
    /// "bin"): the only name the file ever has in storage, whatever name a peer sends (the ID
    /// is checked on every way in, and storage refuses any name that is not one plain component).
    package static func storageName(id: String, fileName: String) -> String { id + "." + fileExtension(for: fileName) }

    package var storageName: String { Recording.storageName(id: id, fileName: fileName) }

    /// The extension for a user's file name: its lowercase letters and digits, else "bin".
    package static func fileExtension(for path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "bin" }
        let ext = String(path[path.index(after: dot)...]).lowercased().filter { ($0.isLetter || $0.isNumber) && $0.isASCII }
        return ext.isEmpty ? "bin" : String(ext.prefix(10))
    }
}
