import LifeSync
import LifeSyncHTTP

/// One route of the API: its path under `/api/` (a `:name` segment takes any non-empty value,
/// handed to the handler in order) and what each method does there. The table is
/// `LifeLogAPI.routes`; a path no row matches is a 404, a method its row lacks a 405 naming the
/// row's methods (GET brings HEAD) in its message and its `Allow` header (RFC 9110 §15.5.6).
struct APIRoute: Sendable {
    typealias Handler = @Sendable (LifeLogAPI, inout APICall) throws -> HTTPResponse

    let path: [String]
    let methods: [(method: String, handler: Handler)]

    init(_ path: [String], _ methods: [(String, Handler)]) {
        self.path = path
        self.methods = methods.map { (method: $0.0, handler: $0.1) }
    }

    /// The values of the `:` segments if `segments` is this route's path, else nil.
    func captures(_ segments: [String]) -> [String]? {
        guard segments.count == path.count else { return nil }
        var captured: [String] = []
        for (pattern, segment) in zip(path, segments) {
            if pattern.hasPrefix(":") {
                guard !segment.isEmpty else { return nil }
                captured.append(segment)
            } else if pattern != segment {
                return nil
            }
        }
        return captured
    }

    /// The methods this route answers, as `Allow` lists them.
    var allowed: String { Self.allowed(methods.map(\.method)) }

    static func allowed(_ methods: [String]) -> String {
        methods.flatMap { $0 == "GET" ? ["GET", "HEAD"] : [$0] }.joined(separator: ", ")
    }

    /// The 405 for `request`: what is allowed, in words and in the header.
    static func notAllowed(_ request: HTTPRequest, allowed: String) -> HTTPResponse {
        var response = HTTPResponse.error(405, "\(request.method) is not allowed on \(request.path.prefix(200)); allowed: \(allowed)")
        response.headers.set("Allow", allowed)
        return response
    }
}

/// What a route's handler is given: the authenticated request, the key's hash (nil for a media
/// token) and how its client reads entries, the path's `:` values; it says whether it wrote.
struct APICall {
    var request: HTTPRequest
    let keyHash: String?
    let presentation: EntryPresentation
    let captures: [String]
    var wrote = false
}

extension LifeLogAPI {
    /// Every route under `/api/`, in the order they are tried (a literal segment before a `:`
    /// one in the same place: `entries/stats` before `entries/:id`).
    static let routes: [APIRoute] = [
        APIRoute(["media-token"], [("POST", { api, call in
            guard let keyHash = call.keyHash else { throw Unauthorized(message: "a media token is made only for a request bearing the key") }
            return try api.makeMediaToken(call.request, keyHash: keyHash)
        })]),
        APIRoute(["entries"], [("GET", { try $0.listEntries($1.request, $1.presentation) }),
                               ("POST", { try $0.postEntries($1.request, wrote: &$1.wrote) })]),
        APIRoute(["entries", "stats"], [("GET", { try $0.stats($1.request) })]),
        // The ID the client holds, by the rule its entry was created with (a bare UUID too).
        APIRoute(["entries", ":id"], [("GET", { try $0.getEntry(try $0.replica.entryID(addressedBy: $1.captures[0]), $1.request, $1.presentation) }),
                                      ("PUT", changeEntry), ("PATCH", changeEntry),
                                      ("DELETE", { try $0.deleteEntry(try $0.replica.entryID(addressedBy: $1.captures[0]), $1.request, wrote: &$1.wrote) })]),
        APIRoute(["recordings"], [("GET", { try $0.listRecordings($1.request) }),
                                  ("POST", { try $0.uploadRecording($1.request, wrote: &$1.wrote) })]),
        APIRoute(["recordings", ":id", "content"], [("GET", { try $0.recordingContent($1.captures[0], $1.request) })]),
        APIRoute(["conflicts"], [("GET", { try $0.listConflicts($1.request) })]),
        APIRoute(["conflicts", ":entry", "resolve"], [("POST", { try $0.resolveConflict($1.captures[0], $1.request, wrote: &$1.wrote) })]),
        APIRoute(["keys"], [("GET", { try $0.listKeys($1.request, keyHash: $1.keyHash) }),
                            ("POST", { try $0.createKey($1.request, keyHash: $1.keyHash) })]),
        APIRoute(["keys", ":name"], [("DELETE", { try $0.revokeKey($1.captures[0], $1.request, keyHash: $1.keyHash) })]),
        APIRoute(["changes"], [("GET", { try $0.listChanges($1.request) })]),
        APIRoute(["changes", "stream"], [("GET", { try $0.streamChanges($1.request) })]),
        APIRoute(["export"], [("GET", { try $0.export($1.request) })]),
        APIRoute(["status"], [("GET", { api, call in
            try LifeLogAPI.refuseParameters(call.request, allowed: [])
            return HTTPResponse.json(200, try api.status())
        })]),
    ]

    private static func changeEntry(_ api: LifeLogAPI, _ call: inout APICall) throws -> HTTPResponse {
        try api.changeEntry(try api.replica.entryID(addressedBy: call.captures[0]), call.request, call.presentation, wrote: &call.wrote)
    }
}
