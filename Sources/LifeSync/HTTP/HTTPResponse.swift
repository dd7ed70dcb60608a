/// A response as a value, and its encoding. The body is always sent with a Content-Length
/// (bodies here are built whole), which is what lets a connection stay open after it.
public struct HTTPResponse: Equatable, Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        precondition((100...599).contains(status), "an HTTP status is three digits")
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON body, pretty enough for a person reading curl's output.
    public static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        var response = HTTPResponse(status: status, body: Array(value.prettyText.utf8) + [UInt8(ascii: "\n")])
        response.headers.set("Content-Type", "application/json; charset=utf-8")
        return response
    }

    /// `{"error": message}` with `status`.
    public static func error(_ status: Int, _ message: String) -> HTTPResponse {
        json(status, .object([("error", .string(message))]))
    }

    public static func error(_ error: HTTPError) -> HTTPResponse { self.error(error.status, error.message) }

    /// The bytes on the wire. `headOnly` leaves the body out (a HEAD request, RFC 9110 §9.3.2)
    /// but keeps its Content-Length; `keepAlive: false` says `Connection: close`.
    public func encoded(headOnly: Bool = false, keepAlive: Bool = true) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\n"
        for (name, value) in headers where name.lowercased() != "content-length" && name.lowercased() != "connection" {
            precondition(!name.utf8.contains { $0 <= 0x20 || $0 == UInt8(ascii: ":") } && !value.utf8.contains { $0 == 0x0D || $0 == 0x0A },
                         "a header this node writes has no line break and a token name")
            text += "\(name): \(value)\r\n"
        }
        // 1xx, 204 and 304 have no body and so no Content-Length (RFC 9110 §8.6).
        if status >= 200 && status != 204 && status != 304 { text += "Content-Length: \(body.count)\r\n" }
        if !keepAlive { text += "Connection: close\r\n" }
        text += "\r\n"
        var bytes = Array(text.utf8)
        if !headOnly { bytes += body }
        return bytes
    }

    /// `HTTP/1.1 100 Continue`: the go-ahead a client that sent `Expect: 100-continue` waits for.
    public static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    static func reason(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
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
