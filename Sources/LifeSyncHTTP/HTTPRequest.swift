/// One complete request as the parser hands it over: the target already split into a decoded
/// path and decoded query parameters, the body de-chunked.
package struct HTTPRequest: Equatable, Sendable {
    package var method: String
    /// The request target as sent (`/api/entries?limit=5`).
    package var target: String
    /// The percent-decoded path (`/api/entries`).
    package var path: String
    /// The percent-decoded query parameters in order; `+` means a space, as browsers send forms.
    package var query: [(name: String, value: String)]
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    package var minorVersion: Int
    package var headers: HTTPHeaders
    package var body: [UInt8]
    /// Whether the connection stays open after the response (HTTP/1.1 unless `Connection:
    /// close`; HTTP/1.0 only with `Connection: keep-alive`).
    package var keepAlive: Bool

    package init(method: String, target: String, minorVersion: Int = 1, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
                keepAlive: Bool = true) throws(HTTPError) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
        (path, query) = try HTTPRequest.split(target: target)
    }

    package static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.minorVersion == b.minorVersion && a.headers == b.headers
            && a.body == b.body && a.keepAlive == b.keepAlive
    }

    /// The last value of query parameter `name`, or nil.
    package func parameter(_ name: String) -> String? {
        query.last { $0.name == name }?.value
    }

    /// Origin form (`/path?query`), the absolute form a proxy would send
    /// (`http://host/path?query`: the path is what counts), or `*` (OPTIONS only).
    static func split(target: String) throws(HTTPError) -> (path: String, query: [(name: String, value: String)]) {
        var rest = Substring(target)
        if target == "*" { return ("*", []) }
        for scheme in ["http://", "https://"] where rest.lowercased().hasPrefix(scheme) {
            rest = rest.dropFirst(scheme.count)
            rest = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
        }
        guard rest.first == "/" else { throw HTTPError(400, "the request target must start with '/', got \"\(target.prefix(80))\"") }
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = try percentDecoded(parts[0], plusIsSpace: false, what: "the path")
        var query: [(String, String)] = []
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") where !pair.isEmpty {
                let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = try percentDecoded(nameValue[0], plusIsSpace: true, what: "a query parameter name")
                let value = nameValue.count == 2
                    ? try percentDecoded(nameValue[1], plusIsSpace: true, what: "query parameter '\(name.prefix(40))'") : ""
                query.append((name, value))
            }
        }
        return (path, query)
    }

    /// `%XX` escapes to bytes, read as UTF-8; a broken escape or broken UTF-8 is refused.
    static func percentDecoded(_ text: Substring, plusIsSpace: Bool, what: String) throws(HTTPError) -> String {
        guard text.contains("%") || (plusIsSpace && text.contains("+")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw HTTPError(400, "\(what) has a '%' not followed by two hex digits")
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else { throw HTTPError(400, "\(what) is not UTF-8 once decoded") }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
