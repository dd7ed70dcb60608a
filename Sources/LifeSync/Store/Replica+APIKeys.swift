/// One key of the HTTP API as `lifesync keys list` shows it: never the key itself, which is
/// printed once when made and stored only as its SHA-256.
package struct APIKeyRecord: Equatable, Sendable {
    package var name: String
    /// The first hex digits of the key's SHA-256, to tell keys apart.
    package var hashPrefix: String
    package var createdAt: Timestamp
    package var lastUsed: Timestamp?
    /// How its client reads entries.
    package var presentation: EntryPresentation
    /// Whether it may create, list and revoke keys over HTTP (`keys create NAME --admin`).
    package var admin: Bool = false

    package var json: JSONValue {
        .object([("name", .string(name)), ("key_sha256_prefix", .string(hashPrefix)), ("created_at", .string(createdAt.iso8601)),
                 ("last_used", lastUsed.map { .string($0.iso8601) } ?? .null), ("presentation", .string(presentation.rawValue)),
                 ("admin", .bool(admin))])
    }
}

/// The HTTP API's bearer keys (table `api_keys`, the LifeLog document's). A key is `lsk_` and 64
/// hex digits of the replica's random source (256 bits): guessing one is hopeless, so a plain
/// SHA-256 (no salt, no stretching) is what stands in for it at rest.
extension Replica {
    static let apiKeyPrefix = "lsk_"

    /// Makes a key called `name` whose client reads entries in `presentation` (and, `admin`, may
    /// manage keys over HTTP), and returns it: the only time it is ever seen.
    package func createAPIKey(name: String, presentation: EntryPresentation = .lifeSync, admin: Bool = false) throws -> String {
        try Replica.validateKeyName(name)
        let key = Replica.apiKeyPrefix + (0..<4).map { _ in
            let value = random.nextUInt64()
            return Hex.encode((0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
        }.joined()
        try database.transaction {
            if try database.firstRow("SELECT 1 FROM api_keys WHERE name = ?", [.text(name)], { _ in true }) != nil {
                throw ReplicaError.invalid(ValidationError(field: "name", reason: "a key called \"\(name)\" exists; revoke it first or pick another name"))
            }
            try database.run("INSERT INTO api_keys (key_hash, name, created_at, presentation, admin) VALUES (?, ?, ?, ?, ?)",
                             [.text(SHA256.hash(Array(key.utf8)).hex), .text(name), .text(now.iso8601), .text(presentation.rawValue),
                              .integer(admin ? 1 : 0)])
        }
        return key
    }

    package func apiKeys() throws -> [APIKeyRecord] {
        try database.rows("SELECT name, key_hash, created_at, last_used, presentation, admin FROM api_keys ORDER BY name") { row in
            APIKeyRecord(name: row.string(0), hashPrefix: String(row.string(1).prefix(12)),
                         createdAt: try Timestamp(iso8601: row.string(2)),
                         lastUsed: row.isNull(3) ? nil : try Timestamp(iso8601: row.string(3)),
                         presentation: EntryPresentation(rawValue: row.string(4)) ?? .lifeSync, admin: row.int64(5) != 0)
        }
    }

    /// Changes how the client of the key called `name` reads entries, from its next request on
    /// (the key itself stays, so the app holding it needs no change).
    package func setPresentation(_ presentation: EntryPresentation, forAPIKey name: String) throws {
        guard try database.firstRow("UPDATE api_keys SET presentation = ? WHERE name = ? RETURNING name",
                                    [.text(presentation.rawValue), .text(name)], { $0.string(0) }) != nil else {
            throw ReplicaError.invalid(ValidationError(field: "name", reason: "no key called \"\(name)\" (lifesync keys list shows them)"))
        }
    }

    /// Removes the key called `name`; requests bearing it are refused from then on.
    public func revokeAPIKey(name: String) throws {
        guard try database.firstRow("DELETE FROM api_keys WHERE name = ? RETURNING name", [.text(name)], { $0.string(0) }) != nil else {
            throw ReplicaError.invalid(ValidationError(field: "name", reason: "no key called \"\(name)\" (lifesync keys list shows them)"))
        }
    }

    /// The name of the key `presented` is, its SHA-256 (hex, what the store keeps and a
    /// request's later checks use), and how its client reads entries; or nil. Its `last_used` is
    /// set to now, at most once a minute (a request is not a write transaction each).
    package func authenticateAPIKey(_ presented: String) throws -> (name: String, hash: String, presentation: EntryPresentation)? {
        guard presented.hasPrefix(Replica.apiKeyPrefix), presented.utf8.count <= 128 else { return nil }
        let hash = SHA256.hash(Array(presented.utf8)).hex
        guard let (name, lastUsed, presentation) = try database.firstRow(
            "SELECT name, last_used, presentation FROM api_keys WHERE key_hash = ?", [.text(hash)], {
                ($0.string(0), $0.isNull(1) ? nil : $0.string(1), EntryPresentation(rawValue: $0.string(2)) ?? .lifeSync)
            }) else { return nil }
        let now = self.now
        if lastUsed.flatMap({ try? Timestamp(iso8601: $0) }).map({ now.millisecondsSince1970 - $0.millisecondsSince1970 >= 60_000 }) ?? true {
            try database.run("UPDATE api_keys SET last_used = ? WHERE key_hash = ?", [.text(now.iso8601), .text(hash)])
        }
        return (name, hash, presentation)
    }

    /// Whether the key whose SHA-256 (hex) is `hash` may manage keys (nil: no such key).
    public func apiKeyIsAdmin(hash: String) throws -> Bool? {
        try database.firstRow("SELECT admin FROM api_keys WHERE key_hash = ?", [.text(hash)]) { $0.int64(0) != 0 }
    }

    /// The SHA-256 (hex) of every key this node holds: what media tokens are made with
    /// (`LifeLogAPI.mediaToken`), so revoking a key ends its tokens too.
    public func apiKeyHashes() throws -> [String] {
        try database.rows("SELECT key_hash FROM api_keys ORDER BY key_hash") { $0.string(0) }
    }

    static func validateKeyName(_ name: String) throws(ReplicaError) {
        guard !name.isEmpty, name.count <= 64, name.utf8.count <= 256,
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalid(ValidationError(field: "name", reason: "must be 1 to 64 characters without control characters"))
        }
    }
}
