/// The LifeLog document's HTTP API over a replica: a request goes in, a response comes out.
/// It knows nothing of sockets (the runtime's HTTP server feeds it); it reads and writes the
/// replica like `lifesync` commands do, so a write over HTTP is a local write that replicates.
///
/// Every `/api/*` route needs `Authorization: Bearer <key>` (`lifesync keys create`); every
/// response carries CORS headers as the document's Hono app sets them (`cors()` defaults) and
/// exposes the headers a page's script reads (`ETag`…), and any OPTIONS request is a preflight
/// answered 204 before authentication.
///
/// ```swift
/// let api = LifeLogAPI(replica: replica)
/// let (response, wrote) = api.handle(request)
/// if wrote { nodeCore.localWrite(now: now) }   // push to peers after the debounce
/// ```
import LifeSync
import LifeSyncHTTP

package final class LifeLogAPI {
    package let replica: Replica
    /// The running node, for live peers and pending counts in `/api/status` (nil: a replica
    /// served without sync, as in tests).
    package let node: NodeCore?
    /// The running node's counters for `GET /metrics` (nil: only the replica's gauges).
    package var metrics: (() -> NodeMetrics)?
    /// Recording files on disk, for `/api/recordings` (nil: uploads are refused, no paths shown).
    package var recordingUploads: RecordingUploads?
    /// The most entries one `GET /api/entries` returns, and one POST takes.
    package static let maximumLimit = 1_000
    package static let maximumBatch = 10_000

    /// Where the node keeps recording files (nil: none here, so no recording content is served).
    package var recordingStorage: RecordingStorage? { node?.storage }

    package init(replica: Replica, node: NodeCore? = nil) {
        self.replica = replica
        self.node = node
    }

    /// The response to `request`, and whether entries were written (the caller tells the node).
    package func handle(_ request: HTTPRequest) -> (response: HTTPResponse, wroteEntries: Bool) {
        var wrote = false
        var response: HTTPResponse
        if request.method == "OPTIONS" {
            response = preflight(request)
        } else {
            do {
                response = try route(request, wrote: &wrote)
            } catch let error as HTTPError {
                response = .error(error)
            } catch {
                response = Self.response(for: error)
            }
        }
        response.headers.set("Access-Control-Allow-Origin", "*")
        if request.method != "OPTIONS" { response.headers.set("Access-Control-Expose-Headers", Self.exposedHeaders) }
        return (response, wrote)
    }

    /// The response headers a cross-origin script may read beyond the CORS-safelisted ones
    /// (Content-Type, Content-Length, Cache-Control…): the entry's version for If-Match, when
    /// to retry, why a key was refused, a range's place, a download's name, the server's time.
    static let exposedHeaders = "ETag, Retry-After, WWW-Authenticate, Content-Range, Accept-Ranges, Content-Disposition, Date"

    /// Hono's `cors()` preflight: every method it allows, the headers the browser asked for.
    private func preflight(_ request: HTTPRequest) -> HTTPResponse {
        var response = HTTPResponse(status: 204)
        response.headers.add("Access-Control-Allow-Methods", "GET,HEAD,PUT,POST,DELETE,PATCH")
        if let asked = request.headers["Access-Control-Request-Headers"] {
            response.headers.add("Access-Control-Allow-Headers", asked)
            response.headers.add("Vary", "Access-Control-Request-Headers")
        }
        return response
    }

    private func route(_ incoming: HTTPRequest, wrote: inout Bool) throws -> HTTPResponse {
        let segments = incoming.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        let method = incoming.method == "HEAD" ? "GET" : incoming.method
        switch segments {
        case let path where path.first == "dashboard" && path.count <= 2:
            // The files hold no data: the page asks for the key and every call it makes needs it.
            guard method == "GET" else { return APIRoute.notAllowed(incoming, allowed: APIRoute.allowed(["GET"])) }
            try Self.refuseParameters(incoming, allowed: [])
            guard let file = Self.dashboardFile(path.count == 2 ? path[1] : "") else {
                throw HTTPError(404, "no dashboard file \(incoming.path.prefix(200))")
            }
            return file
        case ["metrics"]:
            guard method == "GET" else { return APIRoute.notAllowed(incoming, allowed: APIRoute.allowed(["GET"])) }
            _ = try authenticate(incoming, segments: segments)
            try Self.refuseParameters(incoming, allowed: [])
            return try metricsText()
        default:
            break
        }
        guard segments.first == "api" else { throw HTTPError(404, "no route \(incoming.path.prefix(200)); the API is under /api/ (and /dashboard, /metrics)") }
        let (request, keyHash, presentation) = try authenticate(incoming, segments: segments)
        let inAPI = Array(segments.dropFirst())
        for route in Self.routes {
            guard let captures = route.captures(inAPI) else { continue }
            guard let handler = route.methods.first(where: { $0.method == method })?.handler else {
                return APIRoute.notAllowed(request, allowed: route.allowed)
            }
            var call = APICall(request: request, keyHash: keyHash, presentation: presentation, captures: captures)
            let response = try handler(self, &call)
            wrote = call.wrote
            return response
        }
        throw HTTPError(404, "no route \(request.path.prefix(200))")
    }

    /// The one place a request proves who it is: `Authorization: Bearer <key>` naming a key
    /// this node holds, or — only on the two routes browsers must reach without headers
    /// (`takesMediaToken`) — a media token as `?token=` (see LifeLogAPI+MediaToken). Returns the
    /// request without its token parameter (the routes know nothing of it) and the hash of the
    /// key presented and how its client reads entries (nil and the default for a token).
    private func authenticate(_ request: HTTPRequest, segments: [String]) throws -> (HTTPRequest, keyHash: String?, EntryPresentation) {
        guard let header = request.headers["Authorization"] else {
            if let token = request.parameter("token") {
                guard Self.takesMediaToken(request, segments: segments) else {
                    throw Self.unauthorized("?token= is taken only on GET of /api/changes/stream and /api/recordings/ID/content; send Authorization: Bearer <key>")
                }
                guard try mediaTokenIsValid(token) else {
                    throw Self.unauthorized("the token is expired, not one of this node's, or its key was revoked; make another with POST /api/media-token")
                }
                var request = request
                request.query.removeAll { $0.name == "token" }
                return (request, nil, .lifeSync)
            }
            throw Self.unauthorized("missing Authorization: Bearer <key> (make a key with: lifesync keys create NAME)")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw Self.unauthorized("the Authorization header must be Bearer <key>") }
        let key = parts[1].withoutOptionalWhitespace
        guard let (_, hash, presentation) = try replica.authenticateAPIKey(key) else {
            throw Self.unauthorized("the key is not valid on this node (unknown or revoked)")
        }
        return (request, hash, presentation)
    }

    struct Unauthorized: Error { var message: String }

    static func unauthorized(_ message: String) -> Unauthorized { Unauthorized(message: message) }

    /// A query parameter this route does not know is refused, as an unknown JSON field is: a
    /// typo (`?categroy=`) must not silently widen a query.
    static func refuseParameters(_ request: HTTPRequest, allowed: Set<String>) throws(HTTPError) {
        if let unknown = request.query.first(where: { !allowed.contains($0.name) }) {
            let known = allowed.isEmpty ? "this route takes none" : "known: " + allowed.sorted().joined(separator: ", ")
            throw HTTPError(400, "unknown query parameter '\(unknown.name.prefix(40))' (\(known))")
        }
    }

    /// The answer to a refusal from the store or the validator: the same words as the CLI's.
    static func response(for error: Error) -> HTTPResponse {
        switch error {
        case let error as Unauthorized:
            var response = HTTPResponse.error(401, error.message)
            response.headers.add("WWW-Authenticate", "Bearer")
            return response
        case let error as PreconditionFailed:
            return .error(412, error.message)
        case let error as CursorRefused:
            return .error(400, "since: \(error.description)")
        case ReplicaError.notFound(let id):
            return .error(404, "no entry with id \(id)")
        case ReplicaError.invalid(let validation):
            return invalid(validation)
        case let validation as ValidationError:
            return invalid(validation)
        case let parse as JSONParseError:
            return .error(400, "the body is not JSON: \(parse)")
        default:
            return .error(500, "\(error)")
        }
    }

    static func invalid(_ error: ValidationError) -> HTTPResponse {
        .json(400, .object([("error", .string(error.description)), ("field", .string(error.field)), ("reason", .string(error.reason))]))
    }
}
