// libFuzzer target `http`: the HTTP/1.1 request parser a node's HTTP API reads clients with.
//
// Input: a control byte, then the bytes a client sends on one connection. The control byte
// picks where the stream is cut in two (control / 256 of the way).
//
// Oracles (any of them traps):
//  - the events (requests, the failure status) differ between the stream fed whole, cut in
//    two, and byte by byte (a 100-continue wish may: it depends on whether the body was in);
//  - a request breaks a bound of the limits it was parsed under (body, header count);
//  - a request, written back out with a Content-Length, does not parse to the same request;
//  - `HTTPConnection` over the same stream traps, or answers a request it was not given.
//
// Compiled as one module with all of Sources/LifeSync and Sources/LifeSyncHTTP (see Tests/Fuzz/run.sh); `FuzzMain.swift` calls `fuzzHTTP`.

private let limits: HTTPLimits = {
    var limits = HTTPLimits()
    limits.requestLineBytes = 512
    limits.headBytes = 2048
    limits.headerCount = 16
    limits.bodyBytes = 4096
    limits.chunkLineBytes = 64
    return limits
}()

/// A summary of what the parser said, comparable across ways of feeding it.
private enum Said: Equatable {
    case request(HTTPRequest)
    case failed(Int)
}

private func feed(_ pieces: [ArraySlice<UInt8>]) -> [Said] {
    var parser = HTTPRequestParser(limits: limits)
    var said: [Said] = []
    for piece in pieces {
        parser.append(piece)
        events: for _ in 0..<10_000 {
            switch parser.next() {
            case .request(let request): said.append(.request(request))
            case .continueWanted: continue
            case .needMore: break events
            case .failed(let error):
                if said.last != .failed(error.status) { said.append(.failed(error.status)) }
                break events
            }
        }
    }
    return said
}

private func written(_ request: HTTPRequest) -> [UInt8] {
    var text = "\(request.method) \(request.target) HTTP/1.\(request.minorVersion)\r\n"
    for (name, value) in request.headers
    where !["content-length", "transfer-encoding", "expect"].contains(name.lowercased()) {
        text += "\(name): \(value)\r\n"
    }
    text += "Content-Length: \(request.body.count)\r\n\r\n"
    return Array(text.utf8) + request.body
}

func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = Int(data[0])
    let stream = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let whole = feed([stream[...]])
    let cut = stream.count * control / 256
    guard feed([stream[..<cut], stream[cut...]]) == whole else { fatalError("FUZZ: cut at \(cut) differs from whole") }
    guard feed(stream.indices.map { stream[$0...$0] }) == whole else { fatalError("FUZZ: byte by byte differs from whole") }
    let requests = whole.compactMap { said -> HTTPRequest? in if case .request(let request) = said { return request } else { return nil } }
    for request in requests {
        guard request.body.count <= limits.bodyBytes, request.headers.fields.count <= limits.headerCount else {
            fatalError("FUZZ: a request over the limits")
        }
        // Only header values that are UTF-8 survive String and back unchanged.
        guard request.headers.allSatisfy({ !$0.value.contains("\u{FFFD}") }) else { continue }
        var again = HTTPRequestParser(limits: HTTPLimits())
        again.append(written(request))
        guard case .request(let reparsed) = again.next(), reparsed.method == request.method, reparsed.path == request.path,
              reparsed.body == request.body, reparsed.keepAlive == request.keepAlive,
              reparsed.query.map(\.name) == request.query.map(\.name), reparsed.query.map(\.value) == request.query.map(\.value) else {
            fatalError("FUZZ: a request does not survive being written back out: \(request.target.prefix(80))")
        }
    }
    var connection = HTTPConnection(now: 0, limits: limits)
    var handled = 0
    var actions = connection.received(stream, now: 1)
    while !actions.isEmpty && handled < 10_000 {
        var next: [HTTPConnection.Action] = []
        for case .handle(let request) in actions {
            handled += 1
            guard handled <= requests.count, requests[handled - 1] == request else {
                fatalError("FUZZ: the connection handed over a request the parser did not give")
            }
            next = connection.respond(.json(200, .null), now: 2)
        }
        actions = next
    }
    _ = connection.tick(now: 1_000_000)
    return 0
}
