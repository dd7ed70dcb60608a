// What the LifeLog document leaves undefined, and what Swift on Linux lacks; nothing more.
//
// - Linux keeps URLSession, URLRequest and HTTPURLResponse in FoundationNetworking. The document's
//   files import Foundation only (LogEntry.swift not even that: the document shows its model
//   without its imports), so both are exported to every file of the client from here.
// - `APIError`, `JSONEncoder.iso8601` and `JSONDecoder.iso8601` are used by APIClient and defined
//   nowhere in the document: an error case, and plain ISO 8601 date coders (the strategy Apple's
//   JSONDecoder calls `.iso8601`, which takes whole seconds).
@_exported import Foundation
@_exported import FoundationNetworking

enum APIError: Error {
    case requestFailed
}

extension JSONEncoder {
    static var iso8601: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    static var iso8601: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
