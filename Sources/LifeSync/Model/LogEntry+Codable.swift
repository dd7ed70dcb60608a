/// The LifeLog document's models are `Codable`; so are ours, with the document's snake_case
/// keys (`recorded_at`, `device_id`, `scale_min`, `place_name`). The shape is not written twice:
/// encoding writes the `json` value (LogEntry+JSON.swift) and decoding reads a `JSONValue` and
/// hands it to the same validator every other way in uses, so a decoded entry obeys every rule
/// and unknown keys are refused. Decode with a decoder's default key strategy: one that rewrites
/// keys (`.convertFromSnakeCase`) turns `recorded_at` into an unknown `recordedAt`.
///
/// ```swift
/// let entry = try JSONDecoder().decode(LogEntry.self, from: data)   // all fields required, as stored
/// let data = try JSONEncoder().encode(entry)
/// ```
extension LogEntry: Codable {
    /// Decodes a complete entry (`validatedComplete`): nothing is defaulted.
    public init(from decoder: any Decoder) throws {
        self = try decodeValidated(decoder, path: "") { json, _ throws(ValidationError) in try LogEntry.validatedComplete(from: json) }
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension LogData: Codable {
    public init(from decoder: any Decoder) throws {
        self = try decodeValidated(decoder, path: "data", LogData.validated(from:path:))
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension Metric: Codable {
    public init(from decoder: any Decoder) throws {
        self = try decodeValidated(decoder, path: "metric", Metric.validated(from:path:))
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension Location: Codable {
    public init(from decoder: any Decoder) throws {
        self = try decodeValidated(decoder, path: "location", Location.validated(from:path:))
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

/// Reads the value as JSON and validates it; a broken rule becomes `DecodingError.dataCorrupted`
/// whose description names the field and whose underlying error is the `ValidationError`.
private func decodeValidated<T>(_ decoder: any Decoder, path: String,
                                _ validate: (JSONValue, String) throws(ValidationError) -> T) throws -> T {
    let json = try JSONValue(from: decoder)
    do {
        return try validate(json, path)
    } catch {
        throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.description,
                                                                underlyingError: error))
    }
}
