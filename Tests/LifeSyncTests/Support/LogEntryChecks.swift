import LifeSync
import Testing

// Validation helpers shared by the LogEntry tests: fixed IDs and times, and the validator
// called with test defaults.

let sampleID = "watch_550e8400-e29b-41d4-a716-446655440000"
let generatedID = "phone_0f8fad5b-d9cb-469f-a165-70867728950e"
let defaultTimestamp = Timestamp(millisecondsSince1970: 1_795_305_600_000)  // 2026-11-22T00:00:00Z
let defaultRecordedAt = Timestamp(millisecondsSince1970: 1_795_309_200_000)  // 2026-11-22T01:00:00Z

/// Counts how often the defaults had to make an ID.
final class IDMaker: @unchecked Sendable {
    var calls = 0
    let id: String
    init(_ id: String = generatedID) { self.id = id }
    func make() -> String { calls += 1; return id }
}

func defaults(timestamp: Timestamp? = defaultTimestamp, maker: IDMaker = IDMaker()) -> EntryDefaults {
    EntryDefaults(makeID: maker.make, recordedAt: defaultRecordedAt, timestamp: timestamp,
                  source: "phone", deviceId: "phone_8c1e6b3a-2f4d-4e5a-9b7c-1d2e3f4a5b6c")
}

func validate(_ json: JSONValue, defaults d: EntryDefaults = defaults()) throws -> LogEntry {
    try LogEntry.validated(from: json, defaults: d)
}

func validate(_ text: String, defaults d: EntryDefaults = defaults()) throws -> LogEntry {
    try LogEntry.validated(from: try JSONValue.parse(text), defaults: d)
}

/// The validation error for `json`, or nil (recording an issue) when it is accepted.
func validationError(_ json: JSONValue, defaults d: EntryDefaults = defaults(),
                             sourceLocation: SourceLocation = #_sourceLocation) -> ValidationError? {
    do {
        let entry = try LogEntry.validated(from: json, defaults: d)
        Issue.record("expected \(json.canonicalText) to be refused, got \(entry)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

func validationError(_ text: String, defaults d: EntryDefaults = defaults(),
                             sourceLocation: SourceLocation = #_sourceLocation) -> ValidationError? {
    guard let json = try? JSONValue.parse(text) else {
        Issue.record("test input is not JSON: \(text)", sourceLocation: sourceLocation)
        return nil
    }
    return validationError(json, defaults: d, sourceLocation: sourceLocation)
}

/// `{"data": {key: value}}`
func dataWith(_ key: String, _ value: JSONValue) -> JSONValue {
    .object([("data", .object([(key, value)]))])
}

func metric(_ members: [(String, JSONValue)]) -> JSONValue { dataWith("metric", .object(members)) }
func location(_ members: [(String, JSONValue)]) -> JSONValue { dataWith("location", .object(members)) }
