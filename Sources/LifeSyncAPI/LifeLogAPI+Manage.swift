/// What the dashboard manages through the API, by the same Replica functions the command line
/// calls (one home for each rule): API keys (`GET`/`POST /api/keys`, `DELETE /api/keys/NAME`,
/// as `lifesync keys`) and a conflict's resolution (`POST /api/conflicts/ENTRY/resolve`, as
/// `lifesync conflicts resolve`).
///
/// Keys are managed only with an admin key (`lifesync keys create NAME --admin`): a key handed
/// to an app or a script reads and writes the journal but cannot make itself more keys or
/// revoke the user's. The command line needs no key: whoever can open the replica file owns it.
/// Resolving a conflict is a write like `PUT /api/entries/ID`, so any key may.
import LifeSync
import LifeSyncHTTP

extension LifeLogAPI {
    /// Keys are for an admin key only (the table of routes has checked the method first).
    private func requireAdmin(_ keyHash: String?) throws {
        guard let keyHash, try replica.apiKeyIsAdmin(hash: keyHash) == true else {
            throw HTTPError(403, "managing keys needs an admin key (lifesync keys create NAME --admin); this key is not one")
        }
    }

    /// `GET /api/keys`: every key's name, presentation and rights (never the key).
    func listKeys(_ request: HTTPRequest, keyHash: String?) throws -> HTTPResponse {
        try requireAdmin(keyHash)
        try Self.refuseParameters(request, allowed: [])
        return .json(200, .array(try replica.apiKeys().map(\.json)))
    }

    /// `POST /api/keys` with `{"name", "presentation"?, "admin"?}`: the new key, shown once.
    func createKey(_ request: HTTPRequest, keyHash: String?) throws -> HTTPResponse {
        try requireAdmin(keyHash)
        try Self.refuseParameters(request, allowed: [])
        let body = try Self.object(request, allowed: ["name", "presentation", "admin"])
        guard let name = body["name"]?.stringValue else { throw HTTPError(400, "name: a string is required (the key's name)") }
        var presentation = EntryPresentation.lifeSync
        if let value = body["presentation"] {
            guard let form = value.stringValue.flatMap(EntryPresentation.init(rawValue:)) else {
                throw HTTPError(400, "presentation: expected one of \(EntryPresentation.names)")
            }
            presentation = form
        }
        var admin = false
        if let value = body["admin"] {
            guard case .bool(let flag) = value else { throw HTTPError(400, "admin: expected true or false, got \(value.typeName)") }
            admin = flag
        }
        let key = try replica.createAPIKey(name: name, presentation: presentation, admin: admin)
        return .json(201, .object([("name", .string(name)), ("key", .string(key)), ("admin", .bool(admin)),
                                   ("presentation", .string(presentation.rawValue))]))
    }

    /// `DELETE /api/keys/NAME`.
    func revokeKey(_ name: String, _ request: HTTPRequest, keyHash: String?) throws -> HTTPResponse {
        try requireAdmin(keyHash)
        try Self.refuseParameters(request, allowed: [])
        try replica.revokeAPIKey(name: name)
        return .json(200, .object([("revoked", .string(name))]))
    }

    /// `POST /api/conflicts/ENTRY/resolve` with `{"keep": "winner"|"loser", "field"?, "loser"?}`.
    func resolveConflict(_ entryID: String, _ request: HTTPRequest, wrote: inout Bool) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: [])
        let body = try Self.object(request, allowed: ["keep", "field", "loser"])
        let keepText = body["keep"]?.stringValue ?? ConflictSide.winner.rawValue
        guard let keep = ConflictSide(rawValue: keepText) else { throw HTTPError(400, "keep: expected winner or loser, got '\(keepText.prefix(40))'") }
        func text(_ name: String) throws(HTTPError) -> String? {
            guard let value = body[name], value != .null else { return nil }
            guard let string = value.stringValue else { throw HTTPError(400, "\(name): expected a string, got \(value.typeName)") }
            return string
        }
        let stamp = try replica.resolveConflict(entryID: entryID, keep: keep, field: try text("field"), loserOrigin: try text("loser"))
        wrote = true
        return .json(200, .object([("entry_id", .string(entryID)), ("kept", .string(keep.rawValue)),
                                   ("field", try text("field").map(JSONValue.string) ?? .null), ("hlc", .string(stamp.hlc.description)),
                                   ("entry", try replica.storedVersion(id: entryID)?.place == .live ? try replica.entry(id: entryID).json : .null)]))
    }

    /// The request's body: a JSON object whose members are all in `allowed` (an unknown one is
    /// refused, as an unknown query parameter is).
    static func object(_ request: HTTPRequest, allowed: Set<String>) throws -> JSONValue {
        let body = try JSONValue.parse(bytes: request.body)
        guard case .object(let members) = body else { throw HTTPError(400, "the body must be a JSON object") }
        if let unknown = members.first(where: { !allowed.contains($0.0) }) {
            throw HTTPError(400, "\(unknown.0.prefix(40)): unknown field; known: \(allowed.sorted().joined(separator: ", "))")
        }
        return body
    }
}
