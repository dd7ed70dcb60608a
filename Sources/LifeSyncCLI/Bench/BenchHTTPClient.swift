import Glibc
import LifeSync

/// A blocking HTTP/1.1 client on one keep-alive connection to 127.0.0.1, for the HTTP
/// benchmark: it sends a request and reads exactly one response (Content-Length or chunked).
/// Every read is bounded by a receive timeout, so a server that stops answering ends the bench
/// with an error instead of hanging it.
final class BenchHTTPClient {
    struct Failure: Error, CustomStringConvertible { var description: String }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// The most a response may hold: the bench's largest answer is a page of 1,000 entries.
    static let maximumResponse = 64 << 20

    init(port: UInt16, timeoutSeconds: Int = 30) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            throw Failure(description: "cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Sends one request and returns the status and body of its response.
    func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> (status: Int, body: [UInt8]) {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        try send(Array((head + "\r\n").utf8) + body)
        let headEnd = try readUntilHeadEnd()
        let headText = String(decoding: buffer[start..<headEnd], as: UTF8.self)
        start = headEnd + 4
        let lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line '\(lines.first ?? "")'") }
        var length: Int?, chunked = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased(), value = line[line.index(after: colon)...].trimmingSpaces
            if name == "content-length" { length = Int(value) }
            if name == "transfer-encoding" && value.lowercased().contains("chunked") { chunked = true }
        }
        let content: [UInt8]
        if chunked {
            content = try readChunked()
        } else {
            let count = length ?? 0
            guard count <= Self.maximumResponse else { throw Failure(description: "a response of \(count) bytes is over the bench's bound") }
            try fill(to: start + count)
            content = Array(buffer[start..<start + count])
            start += count
        }
        compact()
        return (status, content)
    }

    private func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            sent += n
        }
    }

    /// Reads more bytes into the buffer; throws at end of stream or on the timeout.
    private func readMore() throws {
        guard buffer.count - start < Self.maximumResponse else { throw Failure(description: "a response is over the bench's bound") }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw Failure(description: n == 0 ? "the server closed the connection" : "recv failed: errno \(errno)") }
        buffer += chunk[0..<n]
    }

    private func fill(to end: Int) throws {
        while buffer.count < end { try readMore() }
    }

    /// The index of the `\r\n\r\n` ending the response head.
    private func readUntilHeadEnd() throws -> Int {
        var from = start
        while true {
            if buffer.count >= 4 {
                var i = max(from, start)
                while i + 3 < buffer.count {
                    if buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 { return i }
                    i += 1
                }
                from = max(start, buffer.count - 3)
            }
            try readMore()
        }
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer[start...].indices.first(where: { buffer[$0] == 10 }) {
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                start = end + 1
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            try readMore()
        }
    }

    private func readChunked() throws -> [UInt8] {
        var content: [UInt8] = []
        while true {
            let sizeText = try readLine().split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingSpaces, radix: 16), size >= 0, content.count + size <= Self.maximumResponse else {
                throw Failure(description: "bad chunk size '\(sizeText.prefix(20))'")
            }
            if size == 0 {
                while try !readLine().isEmpty {}  // trailers
                return content
            }
            try fill(to: start + size + 2)
            content += buffer[start..<start + size]
            start += size + 2
        }
    }

    private func compact() {
        if start > 0 { buffer.removeFirst(start); start = 0 }
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
