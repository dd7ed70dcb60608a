/// `GET /api/changes` (the change feed, a page at a time) and `GET /api/changes/stream` (the
/// same items live, as Server-Sent Events).
import LifeSync
import LifeSyncHTTP

extension LifeLogAPI {
    func listChanges(_ request: HTTPRequest) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: ["since", "limit"])
        let cursor = try request.parameter("since").map(replica.cursor(parsing:))
        let limit = try Self.integer(request, "limit", default: 500, range: 1...Replica.maximumFeedPage)
        return .json(200, try replica.changes(since: cursor, limit: limit).json)
    }

    /// Resumes after the `Last-Event-ID` an EventSource sends when it reconnects, or else after
    /// `since`; from the start without either. The header wins: a browser reconnects to the
    /// stream's URL as first given, `since=` and all, and names the last event it got only in
    /// the header — taking `since=` would replay everything after it again.
    func streamChanges(_ request: HTTPRequest) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: ["since"])
        let lastEventID = request.headers["Last-Event-ID"].flatMap { $0.isEmpty ? nil : $0 }
        let resume = lastEventID ?? request.parameter("since")
        let cursor = try resume.map(replica.cursor(parsing:))
        var response = HTTPResponse(status: 200, streaming: .source(ChangeEventStream(replica: replica, after: cursor)))
        response.headers.add("Content-Type", "text/event-stream; charset=utf-8")
        response.headers.add("Cache-Control", "no-cache")
        return response
    }
}
