/// `GET /api/recordings/:id/content`: a recording's bytes from this node's copy, whole or one
/// byte range (RFC 9110 §14), for players that seek. The response names the file and range;
/// the runtime reads it in bounded pieces.
import LifeSyncHTTP

extension LifeLogAPI {
    func recordingContent(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: [])
        guard let (recording, deleted) = try replica.recording(id: id), !deleted else { throw HTTPError(404, "no recording with id \(id.prefix(100))") }
        guard let storage = recordingStorage, try replica.recordingFile(id: id)?.state == .present,
              storage.exists(recording.storageName) else {
            throw HTTPError(404, "recording \(id.prefix(100)) is known, but its file is not held on this node")
        }
        let size = recording.size
        var response: HTTPResponse
        switch Self.byteRange(request.headers["Range"], size: size) {
        case .whole:
            response = HTTPResponse(status: 200, streaming: .file(name: recording.storageName, offset: 0, length: size))
        case .part(let first, let last):
            response = HTTPResponse(status: 206, streaming: .file(name: recording.storageName, offset: first, length: last - first + 1))
            response.headers.add("Content-Range", "bytes \(first)-\(last)/\(size)")
        case .unsatisfiable:
            response = .error(416, "the range \(request.headers["Range"]?.prefix(60) ?? "") is not within the recording's \(size) bytes")
            response.headers.add("Content-Range", "bytes */\(size)")
            return response
        }
        // The media type came from the recording's origin: anything that could break a header
        // line is not sent as one.
        let printable = recording.mediaType.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        response.headers.add("Content-Type", printable ? recording.mediaType : "application/octet-stream")
        response.headers.add("Accept-Ranges", "bytes")
        return response
    }

    enum ByteRange: Equatable {
        case whole
        /// Inclusive, within the file.
        case part(first: UInt64, last: UInt64)
        case unsatisfiable
    }

    /// One `bytes=` range of `Range`. A header this does not understand, or several ranges, is
    /// ignored and the whole file sent, as RFC 9110 §14.2 allows.
    static func byteRange(_ header: String?, size: UInt64) -> ByteRange {
        guard let header, header.hasPrefix("bytes="), header.utf8.count <= 100 else { return .whole }
        let spec = header.dropFirst("bytes=".count)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        // At most 18 digits: every value fits in UInt64 before any arithmetic.
        func number(_ text: Substring) -> UInt64? {
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return UInt64(text)
        }
        if parts[0].isEmpty {
            guard let suffix = number(parts[1]) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(first: size - min(suffix, size), last: size - 1)
        }
        guard let first = number(parts[0]) else { return .whole }
        let last: UInt64
        if parts[1].isEmpty {
            last = size &- 1
        } else {
            guard let given = number(parts[1]), given >= first else { return .whole }
            last = min(given, size &- 1)
        }
        guard first < size else { return .unsatisfiable }
        return .part(first: first, last: last)
    }
}
