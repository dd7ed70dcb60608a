/// The head and the chunked framing, read in place from the parser's buffer.
extension HTTPRequestParser {
    private static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")

    /// The index of the next CRLF at or after `start`, or nil.
    /// The next line from `start`: where its content ends and where the line after it begins.
    /// A bare LF ends a line as CRLF does, in a chunked body as in the head (RFC 9112 §2.2).
    private func findLineEnd(from start: Int) -> (end: Int, next: Int)? {
        guard start < buffer.count, let lf = buffer[start...].firstIndex(of: Self.lf) else { return nil }
        return (lf > start && buffer[lf - 1] == Self.cr ? lf - 1 : lf, lf + 1)
    }

    /// Parses a complete head, or returns nil while it is incomplete and within the bounds.
    mutating func parseHead() throws(HTTPError) -> Head? {
        // Empty lines before a request line are ignored (RFC 9112 §2.2: some clients send a CRLF
        // after a POST body).
        while consumed < buffer.count, buffer[consumed] == Self.cr || buffer[consumed] == Self.lf {
            if buffer[consumed] == Self.cr {
                // What follows a CR decides; until it is in, nothing is consumed (so the outcome
                // does not depend on how the bytes were split).
                guard consumed + 1 < buffer.count else { return nil }
                guard buffer[consumed + 1] == Self.lf else { throw HTTPError(400, "a bare CR before the request line") }
                consumed += 1
            }
            consumed += 1
        }
        scanned = max(scanned, consumed)
        // The head ends at its first empty line. A bare LF ends a line as CRLF does (RFC 9112
        // §2.2 lets a recipient take it, and clients typed by hand send it): without that, such
        // a request waited for a CRLF CRLF that never came. A CR is taken only before an LF.
        var end: Int?  // just past the empty line
        var i = max(consumed, scanned - 2)
        while i + 1 < buffer.count {
            if buffer[i] == Self.lf {
                if buffer[i + 1] == Self.lf { end = i + 2; break }
                if buffer[i + 1] == Self.cr && i + 2 < buffer.count && buffer[i + 2] == Self.lf { end = i + 3; break }
            }
            i += 1
        }
        let firstLineEnd = buffer[consumed..<(end ?? buffer.count)].firstIndex(of: Self.lf) ?? buffer.count
        if firstLineEnd - consumed > limits.requestLineBytes {
            throw HTTPError(413, "the request line is longer than \(limits.requestLineBytes) bytes")
        }
        guard let end else {
            if buffer.count - consumed > limits.headBytes {
                throw HTTPError(413, "the request head is longer than \(limits.headBytes) bytes")
            }
            scanned = buffer.count
            return nil
        }
        guard end - consumed <= limits.headBytes else {
            throw HTTPError(413, "the request head is longer than \(limits.headBytes) bytes")
        }
        var lines: [ArraySlice<UInt8>] = []
        var start = consumed
        while let lineEnd = buffer[start..<end].firstIndex(of: Self.lf) {
            var line = buffer[start..<lineEnd]
            if line.last == Self.cr { line = line.dropLast() }
            start = lineEnd + 1
            if line.isEmpty { break }  // the empty line that ends the head
            lines.append(line)
        }
        consumed = end
        scanned = consumed
        precondition(!lines.isEmpty, "a head found after a non-empty byte has a request line")
        for line in lines where line.contains(Self.cr) {
            throw HTTPError(400, "a bare CR inside the head; lines end with CRLF (or LF)")
        }
        var head = try Self.requestLine(lines[0])
        guard lines.count - 1 <= limits.headerCount else {
            throw HTTPError(413, "more than \(limits.headerCount) header fields")
        }
        for line in lines.dropFirst() {
            let field = try Self.headerField(line)
            head.headers.add(field.name, field.value)
        }
        try Self.interpret(&head)
        return head
    }

    private static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(b)
        }
    }

    private static func printable(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix(60).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// `METHOD SP target SP HTTP/1.x`
    private static func requestLine(_ line: ArraySlice<UInt8>) throws(HTTPError) -> Head {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw HTTPError(400, "the request line must be METHOD SP TARGET SP HTTP/1.1, got \"\(printable(line))\"")
        }
        guard parts[0].allSatisfy(isTokenByte) else { throw HTTPError(400, "the method \"\(printable(parts[0]))\" is not a token") }
        guard parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPError(400, "the request target has a character that must be percent-encoded")
        }
        let version = Array(parts[2])
        let prefix = Array("HTTP/".utf8)
        guard version.count == 8, Array(version[0..<5]) == prefix, version[6] == UInt8(ascii: "."),
              (0x30...0x39).contains(version[5]), (0x30...0x39).contains(version[7]) else {
            throw HTTPError(400, "the request line must end in HTTP/1.1, got \"\(printable(parts[2]))\"")
        }
        guard version[5] == UInt8(ascii: "1"), version[7] <= UInt8(ascii: "1") else {
            throw HTTPError(505, "HTTP/\(Character(Unicode.Scalar(version[5]))).\(Character(Unicode.Scalar(version[7]))) is not supported; use HTTP/1.1")
        }
        return Head(method: String(decoding: parts[0], as: UTF8.self), target: String(decoding: parts[1], as: UTF8.self),
                    minorVersion: Int(version[7] - 0x30), headers: HTTPHeaders(), keepAlive: true, wantsContinue: false)
    }

    /// `name: OWS value OWS`
    private static func headerField(_ line: ArraySlice<UInt8>) throws(HTTPError) -> (name: String, value: String) {
        if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            throw HTTPError(400, "a header line starts with whitespace (obsolete line folding is not accepted)")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            throw HTTPError(400, "the header line \"\(printable(line))\" has no name and colon")
        }
        let name = line[..<colon]
        guard name.allSatisfy(isTokenByte) else {
            throw HTTPError(400, "the header name \"\(printable(name))\" is not a token (no spaces before the colon)")
        }
        var value = line[(colon + 1)...]
        while let b = value.first, b == 0x20 || b == 0x09 { value = value.dropFirst() }
        while let b = value.last, b == 0x20 || b == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }) else {
            throw HTTPError(400, "the header \(printable(name)) has a control character in its value")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// Host, Connection and Expect.
    private static func interpret(_ head: inout Head) throws(HTTPError) {
        let hosts = head.headers.values("Host")
        if head.minorVersion == 1 && hosts.count != 1 {
            throw HTTPError(400, hosts.isEmpty ? "an HTTP/1.1 request needs a Host header" : "more than one Host header")
        }
        let connection = head.headers.tokens("Connection").map { $0.lowercased() }
        head.keepAlive = head.minorVersion == 1 ? !connection.contains("close") : connection.contains("keep-alive")
        if let expect = head.headers["Expect"] {
            guard expect.lowercased() == "100-continue" else { throw HTTPError(417, "Expect: \(expect.prefix(40)) is not supported") }
            head.wantsContinue = head.minorVersion == 1
        }
    }

    /// Reads as much of a chunked body as has arrived; true once the last chunk and the
    /// trailers are in (trailer fields are read and dropped).
    mutating func parseChunks(_ body: inout [UInt8], _ step: inout ChunkStep) throws(HTTPError) -> Bool {
        while true {
            switch step {
            case .sizeLine:
                guard let (lineEnd, next) = findLineEnd(from: consumed) else {
                    // The line and its CR may be in, waiting for the LF: only more than that is over.
                    if buffer.count - consumed > limits.chunkLineBytes + 1 { throw HTTPError(413, "a chunk-size line is longer than \(limits.chunkLineBytes) bytes") }
                    return false
                }
                guard lineEnd - consumed <= limits.chunkLineBytes else { throw HTTPError(413, "a chunk-size line is longer than \(limits.chunkLineBytes) bytes") }
                let line = buffer[consumed..<lineEnd]
                guard !line.contains(Self.cr) else { throw HTTPError(400, "a bare CR in a chunk-size line; lines end with CRLF (or LF)") }
                let digits = line.prefix { b in b != UInt8(ascii: ";") && b != 0x20 && b != 0x09 }
                guard !digits.isEmpty, digits.count <= 15, let size = Int(String(decoding: digits, as: UTF8.self), radix: 16),
                      digits.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }) else {
                    throw HTTPError(400, "a chunk size must be hex digits, got \"\(Self.printable(line))\"")
                }
                guard size <= bodyBound - body.count else {
                    throw HTTPError(413, "the chunked body is over \(bodyBound) bytes; at most that is accepted\(bodyBoundNamed)")
                }
                consumed = next
                step = size == 0 ? .trailers(bytes: 0) : .data(remaining: size)
            case .data(let remaining):
                let take = min(remaining, buffer.count - consumed)
                guard take > 0 else { return false }
                body.append(contentsOf: buffer[consumed..<(consumed + take)])
                consumed += take
                step = take == remaining ? .dataEnd : .data(remaining: remaining - take)
            case .dataEnd:
                guard buffer.count > consumed else { return false }
                if buffer[consumed] == Self.cr {
                    guard buffer.count - consumed >= 2 else { return false }
                    guard buffer[consumed + 1] == Self.lf else {
                        throw HTTPError(400, "a chunk's data is not followed by CRLF (the chunk size is wrong)")
                    }
                    consumed += 1
                } else if buffer[consumed] != Self.lf {
                    throw HTTPError(400, "a chunk's data is not followed by CRLF (the chunk size is wrong)")
                }
                consumed += 1
                step = .sizeLine
            case .trailers(let bytes):
                guard let (lineEnd, next) = findLineEnd(from: consumed) else {
                    if bytes + buffer.count - consumed > limits.headBytes { throw HTTPError(413, "the trailer fields are longer than \(limits.headBytes) bytes") }
                    return false
                }
                let length = lineEnd - consumed
                guard bytes + length + 2 <= limits.headBytes else { throw HTTPError(413, "the trailer fields are longer than \(limits.headBytes) bytes") }
                guard !buffer[consumed..<lineEnd].contains(Self.cr) else { throw HTTPError(400, "a bare CR in a trailer field") }
                consumed = next
                if length == 0 { return true }
                step = .trailers(bytes: bytes + length + 2)
            }
        }
    }
}
