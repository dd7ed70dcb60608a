import Foundation
import LifeSync
import Testing

/// `LogEntry` is `Codable` as the LifeLog document's is, with its snake_case keys, and decoding
/// validates exactly as every other way in.
@Suite struct LogEntryCodableTests {
    static let document = """
        {"id": "watch_550e8400-e29b-41d4-a716-446655440000",
         "timestamp": "2026-11-22T08:30:00.000Z", "recorded_at": "2026-11-22T08:30:02.000Z",
         "source": "watch", "device_id": "watch_7c9e6679-7425-40de-944b-e07fc1f90ae7", "category": "mood",
         "data": {"text": "slept well",
                  "metric": {"name": "mood", "value": 7, "unit": "points", "scale_min": 1, "scale_max": 10},
                  "location": {"latitude": 52.52, "longitude": 13.40, "accuracy": 10, "altitude": 34, "place_name": "Berlin"},
                  "tags": ["morning"]}}
        """

    @Test func decodesTheDocumentsJSONAsTheValidatorReadsIt() throws {
        let decoded = try JSONDecoder().decode(LogEntry.self, from: Data(Self.document.utf8))
        #expect(decoded == (try LogEntry.validatedComplete(from: try JSONValue.parse(Self.document))))
        #expect(decoded.recordedAt.iso8601 == "2026-11-22T08:30:02.000Z")
        #expect(decoded.data.metric?.scaleMax == 10)
        #expect(decoded.data.location?.placeName == "Berlin")
    }

    @Test func roundTripsThroughJSONEncoderWithSnakeCaseKeys() throws {
        let entry = try JSONDecoder().decode(LogEntry.self, from: Data(Self.document.utf8))
        let encoded = try JSONEncoder().encode(entry)
        let text = String(decoding: encoded, as: UTF8.self)
        for key in ["\"recorded_at\"", "\"device_id\"", "\"scale_min\"", "\"scale_max\"", "\"place_name\""] {
            #expect(text.contains(key), "\(key) missing from \(text)")
        }
        #expect(!text.contains("recordedAt") && !text.contains("placeName"))
        #expect(try JSONDecoder().decode(LogEntry.self, from: encoded) == entry)
        // A minimal entry omits absent members rather than writing null.
        let bare = LogEntry(id: entry.id, timestamp: entry.timestamp, recordedAt: entry.recordedAt, source: "watch", deviceId: "watch_x")
        let bareText = String(decoding: try JSONEncoder().encode(bare), as: UTF8.self)
        #expect(!bareText.contains("null") && !bareText.contains("category"))
        #expect(try JSONDecoder().decode(LogEntry.self, from: Data(bareText.utf8)) == bare)
    }

    @Test func thePartsAreCodableToo() throws {
        struct Day: Codable, Equatable { var entries: [LogEntry]; var metric: Metric; var place: Location? }
        let entry = try JSONDecoder().decode(LogEntry.self, from: Data(Self.document.utf8))
        let day = Day(entries: [entry, entry], metric: Metric(name: "energy", value: 3, scaleMin: 1, scaleMax: 5),
                      place: Location(latitude: -33.9, longitude: 151.2, placeName: "Sydney"))
        #expect(try JSONDecoder().decode(Day.self, from: try JSONEncoder().encode(day)) == day)
        let data = try JSONDecoder().decode(LogData.self, from: Data(#"{"text": "hi", "tags": ["a", "b"]}"#.utf8))
        #expect(data == LogData(text: "hi", tags: ["a", "b"]))
    }

    /// A broken rule is a `DecodingError.dataCorrupted` naming the field, the `ValidationError`
    /// beneath it: the same refusal `validatedComplete` gives.
    @Test(arguments: [
        (#"{"data": {"metric": {"name": "mood", "value": 11, "scale_min": 1, "scale_max": 10}}}"#, "data.metric.value"),
        (#"{"data": {"txt": "typo"}}"#, "data.txt"),
        (#"{"catgory": "mood"}"#, "catgory"),
        (#"{"timestamp": "yesterday"}"#, "timestamp"),
        (#"{"recorded_at": null}"#, "recorded_at"),
        (#"{"id": "WATCH_550e8400-e29b-41d4-a716-446655440000"}"#, "id"),
    ])
    func refusesWhatTheValidatorRefuses(change: String, field: String) throws {
        var json = try JSONValue.parse(Self.document)
        guard case .object(var members) = json, case .object(let patch) = try JSONValue.parse(change) else { Issue.record(); return }
        for (key, value) in patch {
            if case .object(let inner) = value, key == "data", case .object(var data)? = json["data"] {
                for (k, v) in inner { data.removeAll { $0.0 == k }; data.append((k, v)) }
                members.removeAll { $0.0 == "data" }
                members.append(("data", .object(data)))
            } else {
                members.removeAll { $0.0 == key }
                members.append((key, value))
            }
        }
        json = .object(members)
        let expected = #expect(throws: ValidationError.self) { try LogEntry.validatedComplete(from: json) }
        #expect(expected?.field == field)
        do {
            _ = try JSONDecoder().decode(LogEntry.self, from: Data(json.canonicalText.utf8))
            Issue.record("decoded \(change)")
        } catch DecodingError.dataCorrupted(let context) {
            let underlying = try #require(context.underlyingError as? ValidationError)
            #expect(underlying == expected)
            #expect(context.debugDescription.hasPrefix(field + ":"))
        }
    }

    @Test func aMetricOutsideItsScaleIsRefusedOnItsOwnToo() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Metric.self, from: Data(#"{"name": "mood", "value": 0, "scale_min": 1}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Location.self, from: Data(#"{"latitude": 91, "longitude": 0}"#.utf8))
        }
    }
}
