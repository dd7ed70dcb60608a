import LifeSync

/// A response as a value, and its encoding. A whole body goes with a Content-Length; a streamed
/// one (`HTTPBody`) with its length when known, else chunked — either way the connection can
/// stay open after it.
package struct HTTPResponse: Equatable {
    package var status: Int
    package var headers: HTTPHeaders
    package var body: HTTPBody

    package init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.init(status: status, headers: headers, streaming: .bytes(body))
    }

    package init(status: Int, headers: HTTPHeaders = HTTPHeaders(), streaming body: HTTPBody) {
        precondition((100...599).contains(status), "an HTTP status is three digits")
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON body, pretty enough for a person reading curl's output.
    package static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        var response = HTTPResponse(status: status, body: Array(value.prettyText.utf8) + [UInt8(ascii: "\n")])
        response.headers.set("Content-Type", "application/json; charset=utf-8")
        return response
    }

    /// `{"error": message}` with `status`.
    package static func error(_ status: Int, _ message: String) -> HTTPResponse {
        json(status, .object([("error", .string(message))]))
    }

    package static func error(_ error: HTTPError) -> HTTPResponse { self.error(error.status, error.message) }

    /// How the body's end is marked on the wire.
    enum Framing: Equatable, Sendable {
        case length(UInt64)
        case chunked
        /// HTTP/1.0 has no chunks: the body ends when the connection closes.
        case untilClose
        /// 1xx, 204 and 304 have no body and so no Content-Length (RFC 9110 §8.6).
        case none
    }

    /// Whether this status carries a body at all.
    var hasBody: Bool { status >= 200 && status != 204 && status != 304 }

    func framing(http11: Bool) -> Framing {
        guard hasBody else { return .none }
        if let length = body.knownLength { return .length(length) }
        return http11 ? .chunked : .untilClose
    }

    /// The bytes on the wire of a whole body. `headOnly` leaves the body out (a HEAD request,
    /// RFC 9110 §9.3.2) but keeps its Content-Length; `keepAlive: false` says `Connection: close`;
    /// `date` is the `Date` header's value (`Timestamp.httpDate`), nil for none.
    package func encoded(headOnly: Bool = false, keepAlive: Bool = true, date: String? = nil) -> [UInt8] {
        guard case .bytes(let bytes) = body else { preconditionFailure("a streamed body is sent through HTTPConnection") }
        var out = head(framing: framing(http11: true), keepAlive: keepAlive, date: date)
        if !headOnly && hasBody { out += bytes }
        return out
    }

    /// The status line, `Date` (when the runtime gave one: this code reads no clock), the
    /// headers, the framing's header, and the connection's fate: `Connection: close`, or for an
    /// HTTP/1.0 client that asked to keep the connection `Connection: keep-alive` (without it,
    /// such a client waits for the close that ends a 1.0 response: `ab -k` would).
    func head(framing: Framing, keepAlive: Bool, http10: Bool = false, date: String? = nil) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\n"
        if let date { text += "Date: \(date)\r\n" }
        for (name, value) in headers {
            let lower = name.lowercased()
            guard lower != "content-length" && lower != "connection" && lower != "transfer-encoding" && (date == nil || lower != "date") else { continue }
            precondition(!name.utf8.contains { $0 <= 0x20 || $0 == UInt8(ascii: ":") } && !value.utf8.contains { $0 == 0x0D || $0 == 0x0A },
                         "a header this node writes has no line break and a token name")
            text += "\(name): \(value)\r\n"
        }
        switch framing {
        case .length(let length): text += "Content-Length: \(length)\r\n"
        case .chunked: text += "Transfer-Encoding: chunked\r\n"
        case .untilClose, .none: break
        }
        if !keepAlive { text += "Connection: close\r\n" } else if http10 { text += "Connection: keep-alive\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// One chunk of a chunked body (an empty piece would end the body, so it is never framed).
    static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        precondition(!bytes.isEmpty, "an empty chunk is the end of the body")
        return Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [0x0D, 0x0A]
    }

    /// The last chunk, with no trailers.
    static let lastChunk = Array("0\r\n\r\n".utf8)

    /// `HTTP/1.1 100 Continue`: the go-ahead a client that sent `Expect: 100-continue` waits for.
    package static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    static func reason(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 206: return "Partial Content"
        case 201: return "Created"
        case 204: return "No Content"
        case 207: return "Multi-Status"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 417: return "Expectation Failed"
        case 422: return "Unprocessable Content"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return status < 400 ? "OK" : status < 500 ? "Client Error" : "Server Error"
        }
    }
}
