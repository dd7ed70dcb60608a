/// `GET/PUT/PATCH/DELETE /api/entries/:id`, with an ETag per stored version and If-Match, so
/// two clients editing one entry cannot overwrite each other unseen (412 for the second).
import LifeSync
import LifeSyncHTTP

extension LifeLogAPI {
    /// Why a conditional write was refused: the entry changed since the client read it.
    struct PreconditionFailed: Error { var message: String }

    /// A strong ETag naming the stored version (its origin and sequence), not the content.
    static func etag(_ stamp: VersionStamp) -> String {
        "\"" + SHA256.hash(Array("\(stamp.origin):\(stamp.sequence)".utf8)).hex.prefix(32) + "\""
    }

    /// Whether an `If-Match` / `If-None-Match` list names `etag` (`*` names any).
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").map { $0.withoutOptionalWhitespace }.contains { $0 == "*" || $0 == etag }
    }

    func getEntry(_ id: String, _ request: HTTPRequest, _ presentation: EntryPresentation) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: [])
        let entry = try replica.entry(id: id)
        guard let stamp = try replica.versionStamp(id: id) else { throw ReplicaError.notFound(id: id) }
        let etag = Self.etag(stamp)
        if let wanted = request.headers["If-None-Match"], Self.matches(wanted, etag) {
            var response = HTTPResponse(status: 304)
            response.headers.add("ETag", etag)
            return response
        }
        var response = HTTPResponse.json(200, presentation.json(entry))
        response.headers.add("ETag", etag)
        return response
    }

    /// PUT replaces the entry whole; PATCH applies a merge patch (RFC 7396), as `lifesync update`.
    func changeEntry(_ id: String, _ request: HTTPRequest, _ presentation: EntryPresentation, wrote: inout Bool) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: [])
        // The LifeLog app's camelCase names, as POST takes them (LogEntry+LifeLogInput.swift).
        var body = try LogEntry.lifeLogSpellingsNormalised(JSONValue.parse(bytes: request.body))
        if case .object(var members) = body {
            // The ID the client holds for this entry (the app's bare UUID) is the entry's own ID.
            if let index = members.firstIndex(where: { $0.0 == "id" }), case .string(let given) = members[index].1,
               given != id, try replica.entryID(addressedBy: given) == id {
                members[index].1 = .string(id)
            }
            // The app's "uploaded" flag describes its copy, not the entry: dropped, as POST drops it.
            members.removeAll { $0.0 == "synced" && ($0.1 == .bool(true) || $0.1 == .bool(false)) }
            body = .object(members)
        }
        if presentation == .lifeLogApp { body = try keepingMilliseconds(body, of: replica.entry(id: id)) }
        let check = condition(request)
        let entry: LogEntry
        if request.method == "PUT" {
            guard case .object = body else { throw HTTPError(400, "the body must be an entry (a JSON object)") }
            entry = try replica.replace(id: id, with: body, check: check)
        } else {
            entry = try replica.update(id: id, patch: body, check: check)
        }
        wrote = true
        var response = HTTPResponse.json(200, presentation.json(entry))
        if let stamp = try replica.versionStamp(id: id) { response.headers.add("ETag", Self.etag(stamp)) }
        return response
    }

    /// A time a `lifelog-app` client sends back as it read it (whole seconds, EntryPresentation)
    /// is the stored time, milliseconds included: reading and writing an entry back unchanged
    /// must not move it.
    private func keepingMilliseconds(_ body: JSONValue, of stored: LogEntry) -> JSONValue {
        guard case .object(var members) = body else { return body }
        for (field, time) in [("timestamp", stored.timestamp), ("recorded_at", stored.recordedAt)] {
            guard let index = members.firstIndex(where: { $0.0 == field }), case .string(let sent) = members[index].1,
                  let parsed = try? Timestamp(iso8601: sent), let read = try? Timestamp(iso8601: EntryPresentation.wholeSeconds(time)),
                  parsed == read else { continue }
            members[index].1 = .string(time.iso8601)
        }
        return .object(members)
    }

    /// A tombstone that replicates, as `lifesync delete`.
    func deleteEntry(_ id: String, _ request: HTTPRequest, wrote: inout Bool) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: [])
        try replica.delete(id: id, check: condition(request))
        wrote = true
        return .json(200, .object([("id", .string(id)), ("deleted", .bool(true))]))
    }

    /// The If-Match test, run on the stored version inside the write's transaction.
    private func condition(_ request: HTTPRequest) -> (VersionStamp) throws -> Void {
        guard let wanted = request.headers["If-Match"] else { return { _ in } }
        return { stamp in
            let current = Self.etag(stamp)
            guard Self.matches(wanted, current) else {
                throw PreconditionFailed(message: "If-Match \(wanted.prefix(100)) does not match the entry's current version \(current); GET it again")
            }
        }
    }

    /// The node as `/api/status` shows it: identity, counts, vector, and the live peers.
    func status() throws -> JSONValue {
        let identity = replica.identity
        let origins = try replica.knownOrigins()
        var members: [(String, JSONValue)] = [
            ("node_id", .string(identity.nodeID)),
            ("name", try replica.ownName().map(JSONValue.string) ?? .null),
            ("role", .string(identity.role.rawValue)),
            ("incarnation", .string(identity.incarnation)),
            ("entries", .number(Double(try replica.liveEntryCount()))),
            ("tombstones", .number(Double(try replica.tombstoneCount()))),
            ("vector", .object(origins.filter { $0.sequence > 0 }.map { ($0.origin, .number(Double($0.sequence))) })),
            // Where the change stream starts for a page that has just read what it shows.
            ("change_cursor", .string(ChangeCursor(sequence: try replica.latestChangeSequence(), tag: replica.feedTag).description)),
        ]
        if let node {
            members.append(("pending", .number(Double(node.pendingCount))))
            members.append(("peers", .array(try node.peerStatuses.map { peer in
                guard case .object(var fields) = peer.json else { return peer.json }
                fields.insert(("name", try replica.peerName(for: peer.nodeID).map(JSONValue.string) ?? .null), at: 1)
                return .object(fields)
            })))
        }
        return .object(members)
    }
}
