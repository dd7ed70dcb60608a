/// `GET /api/export?format=json|csv`: what `lifesync export` writes, with `GET /api/entries`'s
/// filters, streamed a page of entries at a time as the client reads.
import LifeSyncHTTP

extension LifeLogAPI {
    func export(_ request: HTTPRequest) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: Self.filterParameters.union(["format"]))
        let name = request.parameter("format") ?? "json"
        guard let format = ExportFormat(rawValue: name) else { throw HTTPError(400, "format: expected json or csv, got '\(name.prefix(40))'") }
        let source = EntryExportSource(replica: replica, filter: try Self.filter(request), format: format)
        var response = HTTPResponse(status: 200, streaming: .source(source))
        response.headers.add("Content-Type", format.mediaType)
        response.headers.add("Content-Disposition", "attachment; filename=\"lifelog-export.\(format.rawValue)\"")
        return response
    }
}
