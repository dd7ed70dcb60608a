/// `GET /api/recordings` (what `lifesync recordings --json` shows) and `POST /api/recordings`
/// (an upload, stored as `lifesync attach` stores a file), and `GET /api/conflicts` (what
/// `lifesync conflicts --json` shows).
import LifeSync
import LifeSyncHTTP

extension LifeLogAPI {
    /// The upload bound when the node is not told otherwise: the Cafe document's 10 MB.
    package static let defaultMaximumUpload = 10_000_000
    /// The route whose body `HTTPLimits.bodyBytesByRoute` bounds separately.
    package static let uploadRoute = "POST /api/recordings"

    func listRecordings(_ request: HTTPRequest) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: [])
        // Served: this API runs inside the node, so a partial file is a live download.
        return .json(200, .array(try replica.recordingStatuses().map { status in
            status.json(served: true, path: recordingUploads?.path(of: status.recording.storageName))
        }))
    }

    /// The raw body is the recording; Content-Type its media type; `?entry=ID` the entry it
    /// belongs to and `?file_name=NAME` its name (default `recording.{ext}` from the type).
    /// The body's bound was enforced before it was read (`uploadRoute`).
    func uploadRecording(_ request: HTTPRequest, wrote: inout Bool) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: ["entry", "file_name"])
        guard let uploads = recordingUploads else { throw HTTPError(503, "this node keeps no recording files (an in-memory replica)") }
        guard let contentType = request.headers["Content-Type"]?.split(separator: ";").first?.withoutOptionalWhitespace.lowercased(),
              contentType != "application/x-www-form-urlencoded", contentType != "multipart/form-data" else {
            throw HTTPError(415, "send the recording as the raw body with its media type as Content-Type (e.g. -H 'Content-Type: audio/mp4' "
                                 + "--data-binary @memo.m4a); form encodings are not taken")
        }
        if let problem = Recording.mediaTypeProblem(contentType) { throw HTTPError(415, "Content-Type: \(problem)") }
        guard !request.body.isEmpty else { throw HTTPError(400, "the body is empty; it is the recording's bytes") }
        let fileName = request.parameter("file_name") ?? "recording." + Recording.fileExtension(forMediaType: contentType)
        if let problem = Recording.fileNameProblem(fileName) { throw HTTPError(400, "file_name: \(problem)") }
        let entryID = request.parameter("entry")
        if let entryID { _ = try replica.entry(id: entryID) }
        let recording = try uploads.attach(bytes: request.body, fileName: fileName, mediaType: contentType, entryID: entryID)
        wrote = true
        guard let status = try replica.recordingStatuses().first(where: { $0.recording.id == recording.id }) else {
            preconditionFailure("a recording just attached is listed")
        }
        return .json(201, status.json(served: true, path: uploads.path(of: recording.storageName)))
    }

    func listConflicts(_ request: HTTPRequest) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: [])
        let devices = try replica.devices()
        return .json(200, .array(try replica.conflicts().map { $0.json(device: { devices[$0] }) }))
    }
}
