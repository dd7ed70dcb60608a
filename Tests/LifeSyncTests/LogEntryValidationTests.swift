import LifeSync
import Testing

private let sampleID = "watch_550e8400-e29b-41d4-a716-446655440000"
private let generatedID = "phone_0f8fad5b-d9cb-469f-a165-70867728950e"
private let defaultTimestamp = Timestamp(millisecondsSince1970: 1_795_305_600_000)  // 2026-11-22T00:00:00Z
private let defaultRecordedAt = Timestamp(millisecondsSince1970: 1_795_309_200_000)  // 2026-11-22T01:00:00Z

/// Counts how often the defaults had to make an ID.
private final class IDMaker: @unchecked Sendable {
    var calls = 0
    let id: String
    init(_ id: String = generatedID) { self.id = id }
    func make() -> String { calls += 1; return id }
}

private func defaults(timestamp: Timestamp? = defaultTimestamp, maker: IDMaker = IDMaker()) -> EntryDefaults {
    EntryDefaults(makeID: maker.make, recordedAt: defaultRecordedAt, timestamp: timestamp,
                  source: "phone", deviceId: "phone_8c1e6b3a-2f4d-4e5a-9b7c-1d2e3f4a5b6c")
}

private func validate(_ json: JSONValue, defaults d: EntryDefaults = defaults()) throws -> LogEntry {
    try LogEntry.validated(from: json, defaults: d)
}

private func validate(_ text: String, defaults d: EntryDefaults = defaults()) throws -> LogEntry {
    try LogEntry.validated(from: try JSONValue.parse(text), defaults: d)
}

/// The validation error for `json`, or nil (recording an issue) when it is accepted.
private func validationError(_ json: JSONValue, defaults d: EntryDefaults = defaults(),
                             sourceLocation: SourceLocation = #_sourceLocation) -> ValidationError? {
    do {
        let entry = try LogEntry.validated(from: json, defaults: d)
        Issue.record("expected \(json.canonicalText) to be refused, got \(entry)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

private func validationError(_ text: String, defaults d: EntryDefaults = defaults(),
                             sourceLocation: SourceLocation = #_sourceLocation) -> ValidationError? {
    guard let json = try? JSONValue.parse(text) else {
        Issue.record("test input is not JSON: \(text)", sourceLocation: sourceLocation)
        return nil
    }
    return validationError(json, defaults: d, sourceLocation: sourceLocation)
}

/// `{"data": {key: value}}`
private func dataWith(_ key: String, _ value: JSONValue) -> JSONValue {
    .object([("data", .object([(key, value)]))])
}

private func metric(_ members: [(String, JSONValue)]) -> JSONValue { dataWith("metric", .object(members)) }
private func location(_ members: [(String, JSONValue)]) -> JSONValue { dataWith("location", .object(members)) }

@Suite struct LogEntryFieldRuleTests {
    /// One refused input per rule, with the field its error must name.
    @Test(arguments: [
        // Unknown fields, at every level, even when null.
        (#"{"catgory": "mood"}"#, "catgory"),
        (#"{"bogus": null}"#, "bogus"),
        (#"{"data": {"txt": "x"}}"#, "data.txt"),
        (#"{"data": {"bogus": null}}"#, "data.bogus"),
        (#"{"data": {"metric": {"name": "m", "value": 1, "units": "kg"}}}"#, "data.metric.units"),
        (#"{"data": {"metric": {"name": "m", "value": 1, "bogus": null}}}"#, "data.metric.bogus"),
        (#"{"data": {"location": {"latitude": 0, "longitude": 0, "lat": 1}}}"#, "data.location.lat"),
        // Not an object at all.
        (#"[]"#, ""),
        (#""entry""#, ""),
        (#"null"#, ""),
        // id
        (#"{"id": "WATCH_550e8400-e29b-41d4-a716-446655440000"}"#, "id"),
        (#"{"id": "watch_550E8400-E29B-41D4-A716-446655440000"}"#, "id"),
        (#"{"id": "watch_550e8400-e29b-41d4-a716-44665544000A"}"#, "id"),
        (#"{"id": "watch-550e8400-e29b-41d4-a716-446655440000"}"#, "id"),
        (#"{"id": "_550e8400-e29b-41d4-a716-446655440000"}"#, "id"),
        (#"{"id": "dr-afts_550e8400-e29b-41d4-a716-446655440000"}"#, "id"),
        (#"{"id": "abcdefghijklmnopq_550e8400-e29b-41d4-a716-446655440000"}"#, "id"),
        (#"{"id": "watch_550e8400-e29b-11d4-a716-446655440000"}"#, "id"),
        (#"{"id": "watch_550e8400-e29b-41d4-c716-446655440000"}"#, "id"),
        (#"{"id": "watch_550e8400e29b41d4a716446655440000"}"#, "id"),
        (#"{"id": "watch_550e8400-e29b-41d4-a716-446655440000 "}"#, "id"),
        (#"{"id": "watch_"}"#, "id"),
        (#"{"id": "watch_\u0301550e8400-e29b-41d4-a716-446655440000"}"#, "id"),  // a mark joined to the '_'
        (#"{"id": ""}"#, "id"),
        (#"{"id": 7}"#, "id"),
        // timestamp and recorded_at
        (#"{"timestamp": "2026-11-22T08:30:00"}"#, "timestamp"),
        (#"{"timestamp": "2026-02-30T08:30:00Z"}"#, "timestamp"),
        (#"{"timestamp": 1795305600000}"#, "timestamp"),
        (#"{"recorded_at": "yesterday"}"#, "recorded_at"),
        (#"{"recorded_at": true}"#, "recorded_at"),
        // source, device_id
        (#"{"source": ""}"#, "source"),
        (#"{"source": 1}"#, "source"),
        (#"{"device_id": ""}"#, "device_id"),
        (#"{"device_id": {}}"#, "device_id"),
        // category
        (#"{"category": ""}"#, "category"),
        (#"{"category": ["mood"]}"#, "category"),
        // data
        (#"{"data": "text"}"#, "data"),
        (#"{"data": []}"#, "data"),
        (#"{"data": {"text": 5}}"#, "data.text"),
        // metric
        (#"{"data": {"metric": 7}}"#, "data.metric"),
        (#"{"data": {"metric": {"value": 7}}}"#, "data.metric.name"),
        (#"{"data": {"metric": {"name": "", "value": 7}}}"#, "data.metric.name"),
        (#"{"data": {"metric": {"name": " \t ", "value": 7}}}"#, "data.metric.name"),
        (#"{"data": {"metric": {"name": 3, "value": 7}}}"#, "data.metric.name"),
        (#"{"data": {"metric": {"name": "mood"}}}"#, "data.metric.value"),
        (#"{"data": {"metric": {"name": "mood", "value": null}}}"#, "data.metric.value"),
        (#"{"data": {"metric": {"name": "mood", "value": "7"}}}"#, "data.metric.value"),
        (#"{"data": {"metric": {"name": "mood", "value": 11, "scale_min": 1, "scale_max": 10}}}"#, "data.metric.value"),
        (#"{"data": {"metric": {"name": "mood", "value": 0.999, "scale_min": 1, "scale_max": 10}}}"#, "data.metric.value"),
        (#"{"data": {"metric": {"name": "mood", "value": -1, "scale_min": 0}}}"#, "data.metric.value"),
        (#"{"data": {"metric": {"name": "mood", "value": 101, "scale_max": 100}}}"#, "data.metric.value"),
        (#"{"data": {"metric": {"name": "mood", "value": 5, "scale_min": 10, "scale_max": 1}}}"#, "data.metric.scale_min"),
        (#"{"data": {"metric": {"name": "mood", "value": 5, "scale_min": "1"}}}"#, "data.metric.scale_min"),
        (#"{"data": {"metric": {"name": "mood", "value": 5, "scale_max": [10]}}}"#, "data.metric.scale_max"),
        (#"{"data": {"metric": {"name": "mood", "value": 5, "unit": ""}}}"#, "data.metric.unit"),
        (#"{"data": {"metric": {"name": "mood", "value": 5, "unit": 5}}}"#, "data.metric.unit"),
        // location
        (#"{"data": {"location": [52.5, 13.4]}}"#, "data.location"),
        (#"{"data": {"location": {"latitude": 90.5, "longitude": 0}}}"#, "data.location.latitude"),
        (#"{"data": {"location": {"latitude": -90.0001, "longitude": 0}}}"#, "data.location.latitude"),
        (#"{"data": {"location": {"longitude": 0}}}"#, "data.location.latitude"),
        (#"{"data": {"location": {"latitude": "52.5", "longitude": 13.4}}}"#, "data.location.latitude"),
        (#"{"data": {"location": {"latitude": 0}}}"#, "data.location.longitude"),
        (#"{"data": {"location": {"latitude": 0, "longitude": 180.0001}}}"#, "data.location.longitude"),
        (#"{"data": {"location": {"latitude": 0, "longitude": -181}}}"#, "data.location.longitude"),
        (#"{"data": {"location": {"latitude": 0, "longitude": 0, "accuracy": -0.5}}}"#, "data.location.accuracy"),
        (#"{"data": {"location": {"latitude": 0, "longitude": 0, "accuracy": "5m"}}}"#, "data.location.accuracy"),
        (#"{"data": {"location": {"latitude": 0, "longitude": 0, "altitude": "high"}}}"#, "data.location.altitude"),
        (#"{"data": {"location": {"latitude": 0, "longitude": 0, "place_name": ""}}}"#, "data.location.place_name"),
        // tags
        (#"{"data": {"tags": "a"}}"#, "data.tags"),
        (#"{"data": {"tags": {"a": 1}}}"#, "data.tags"),
        (#"{"data": {"tags": ["a", 1]}}"#, "data.tags[1]"),
        (#"{"data": {"tags": ["a", ""]}}"#, "data.tags[1]"),
        (#"{"data": {"tags": ["a", "   "]}}"#, "data.tags[1]"),
        (#"{"data": {"tags": [null]}}"#, "data.tags[0]"),
        (#"{"data": {"tags": ["a", "b", ["c"]]}}"#, "data.tags[2]"),
    ])
    func refusedInputNamesTheField(text: String, field: String) {
        let error = validationError(text)
        #expect(error?.field == field, "\(text) → \(String(describing: error))")
        #expect(error?.reason.isEmpty == false)
    }

    @Test func nonFiniteNumbersAreRefused() {
        for bad in [Double.nan, .infinity, -.infinity] {
            let value = metric([("name", .string("m")), ("value", .number(bad))])
            #expect(validationError(value)?.field == "data.metric.value", "\(bad)")
            let lat = location([("latitude", .number(bad)), ("longitude", .number(0))])
            #expect(validationError(lat)?.field == "data.location.latitude", "\(bad)")
            let lon = location([("latitude", .number(0)), ("longitude", .number(bad))])
            #expect(validationError(lon)?.field == "data.location.longitude", "\(bad)")
            let acc = location([("latitude", .number(0)), ("longitude", .number(0)), ("accuracy", .number(bad))])
            #expect(validationError(acc)?.field == "data.location.accuracy", "\(bad)")
            let alt = location([("latitude", .number(0)), ("longitude", .number(0)), ("altitude", .number(bad))])
            #expect(validationError(alt)?.field == "data.location.altitude", "\(bad)")
            let min = metric([("name", .string("m")), ("value", .number(1)), ("scale_min", .number(bad))])
            #expect(validationError(min)?.field == "data.metric.scale_min", "\(bad)")
        }
    }

    @Test func errorDescriptionNamesFieldAndReason() {
        let error = validationError(#"{"catgory": "mood"}"#)
        #expect(error?.description == "catgory: unknown field")
        let whole = validationError("[]")
        #expect(whole?.field == "")
        #expect(whole?.description == whole?.reason)
        #expect(whole?.reason.contains("object") == true)
    }
}

@Suite struct LogEntryIdentifierTests {
    @Test func absentIDIsGenerated() throws {
        let maker = IDMaker()
        let entry = try validate(#"{"category": "mood"}"#, defaults: defaults(maker: maker))
        #expect(entry.id == generatedID)
        #expect(maker.calls == 1)
    }

    @Test func nullIDIsGenerated() throws {
        let maker = IDMaker()
        let entry = try validate(#"{"id": null}"#, defaults: defaults(maker: maker))
        #expect(entry.id == generatedID)
        #expect(maker.calls == 1)
    }

    @Test func givenIDIsKeptAndNoneIsGenerated() throws {
        let maker = IDMaker()
        let entry = try validate(#"{"id": "watch_550e8400-e29b-41d4-a716-446655440000"}"#, defaults: defaults(maker: maker))
        #expect(entry.id == sampleID)
        #expect(maker.calls == 0)
    }

    @Test(arguments: [
        "drafts_550e8400-e29b-41d4-a716-446655440000",
        "shortcut_550e8400-e29b-41d4-b716-446655440000",
        "mac_550e8400-e29b-41d4-8716-446655440000",
        "x9_550e8400-e29b-41d4-9716-446655440000",
        "abcdefghijklmnop_550e8400-e29b-41d4-a716-446655440000",  // 16-letter prefix, the longest allowed
    ])
    func otherLowercasePrefixesAreAccepted(id: String) throws {
        let entry = try validate(.object([("id", .string(id))]))
        #expect(entry.id == id)
    }

    @Test func aGeneratedIDIsValidatedToo() {
        let error = validationError(.object([]), defaults: defaults(maker: IDMaker("not-an-id")))
        #expect(error?.field == "id")
    }

    @Test func identifiersMadeByTheLibraryPass() throws {
        let random = SeededRandom(seed: 3)
        for role in Role.allCases {
            for _ in 0..<50 {
                let id = Identifier.make(role: role, random: random)
                #expect(try validate(.object([("id", .string(id))])).id == id)
            }
        }
    }
}

@Suite struct LogEntryDefaultsTests {
    @Test func absentFieldsComeFromTheDefaults() throws {
        let entry = try validate("{}")
        #expect(entry.timestamp == defaultTimestamp)
        #expect(entry.recordedAt == defaultRecordedAt)
        #expect(entry.source == "phone")
        #expect(entry.deviceId == "phone_8c1e6b3a-2f4d-4e5a-9b7c-1d2e3f4a5b6c")
        #expect(entry.category == nil)
        #expect(entry.data == LogData())
    }

    @Test func timestampIsRequiredWhenThereIsNoDefault() {
        let error = validationError(#"{"category": "mood"}"#, defaults: defaults(timestamp: nil))
        #expect(error?.field == "timestamp")
        #expect(error?.reason == "is required")
        let nullError = validationError(#"{"timestamp": null}"#, defaults: defaults(timestamp: nil))
        #expect(nullError?.field == "timestamp")
    }

    @Test func givenTimesAreUsedAndNormalised() throws {
        let entry = try validate(#"{"timestamp": "2026-11-22T09:30:00+01:00", "recorded_at": "2026-11-22T10:00:00.25Z"}"#,
                                 defaults: defaults(timestamp: nil))
        #expect(entry.timestamp.iso8601 == "2026-11-22T08:30:00.000Z")
        #expect(entry.recordedAt.iso8601 == "2026-11-22T10:00:00.250Z")
    }

    @Test func recordedAtDefaultsEvenWhenTimestampIsGiven() throws {
        let entry = try validate(#"{"timestamp": "2020-01-01T00:00:00Z"}"#)
        #expect(entry.timestamp.iso8601 == "2020-01-01T00:00:00.000Z")
        #expect(entry.recordedAt == defaultRecordedAt)
    }

    @Test func nullIsTreatedAsAbsentEverywhere() throws {
        let entry = try validate("""
            {"id": null, "timestamp": null, "recorded_at": null, "source": null, "device_id": null, "category": null,
             "data": {"text": null, "tags": null, "location": null,
                      "metric": {"name": "mood", "value": 3, "unit": null, "scale_min": null, "scale_max": null}}}
            """)
        #expect(entry.id == generatedID)
        #expect(entry.timestamp == defaultTimestamp)
        #expect(entry.recordedAt == defaultRecordedAt)
        #expect(entry.source == "phone")
        #expect(entry.category == nil)
        #expect(entry.data == LogData(metric: Metric(name: "mood", value: 3)))
        #expect(try validate(#"{"data": null}"#).data == LogData())
        let loc = try validate(#"{"data": {"location": {"latitude": 1, "longitude": 2, "accuracy": null, "altitude": null, "place_name": null}}}"#)
        #expect(loc.data.location == Location(latitude: 1, longitude: 2))
    }

    @Test func fullEntryIsReadFieldByField() throws {
        let entry = try validate("""
            {"id": "watch_550e8400-e29b-41d4-a716-446655440000", "timestamp": "2026-11-22T08:30:00Z",
             "recorded_at": "2026-11-22T08:31:00Z", "source": "watch", "device_id": "watch_dev",
             "category": "mood",
             "data": {"text": "Feeling good", "tags": ["morning", "run"],
                      "metric": {"name": "mood", "value": 7, "unit": "points", "scale_min": 1, "scale_max": 10},
                      "location": {"latitude": 52.5, "longitude": 13.4, "accuracy": 5, "altitude": -12.5, "place_name": "Berlin"}}}
            """)
        #expect(entry == LogEntry(
            id: sampleID, timestamp: try Timestamp(iso8601: "2026-11-22T08:30:00Z"),
            recordedAt: try Timestamp(iso8601: "2026-11-22T08:31:00Z"), source: "watch", deviceId: "watch_dev",
            category: "mood",
            data: LogData(text: "Feeling good",
                          metric: Metric(name: "mood", value: 7, unit: "points", scaleMin: 1, scaleMax: 10),
                          location: Location(latitude: 52.5, longitude: 13.4, accuracy: 5, altitude: -12.5, placeName: "Berlin"),
                          tags: ["morning", "run"])))
    }
}

@Suite struct LogEntryLimitTests {
    @Test func categoryUpTo64CharactersIsAccepted() throws {
        let ascii = String(repeating: "c", count: 64)
        #expect(try validate(.object([("category", .string(ascii))])).category == ascii)
        // Characters, not bytes: 64 two-byte characters are fine.
        let accented = String(repeating: "é", count: 64)
        #expect(try validate(.object([("category", .string(accented))])).category == accented)
        let emoji = String(repeating: "👍🏽", count: 64)
        #expect(try validate(.object([("category", .string(emoji))])).category == emoji)
    }

    @Test func category65CharactersIsRefused() {
        #expect(validationError(.object([("category", .string(String(repeating: "c", count: 65)))]))?.field == "category")
        #expect(validationError(.object([("category", .string(String(repeating: "é", count: 65)))]))?.field == "category")
    }

    @Test func textUpTo64KiBIsAccepted() throws {
        let text = String(repeating: "a", count: 65_536)
        #expect(try validate(dataWith("text", .string(text))).data.text == text)
        let empty = try validate(dataWith("text", .string("")))
        #expect(empty.data.text == "")
    }

    @Test func textIsMeasuredInBytes() {
        #expect(validationError(dataWith("text", .string(String(repeating: "a", count: 65_537))))?.field == "data.text")
        // 32 769 characters, but 65 538 bytes in UTF-8.
        let wide = String(repeating: "é", count: 32_769)
        #expect(wide.count < 65_536 && wide.utf8.count > 65_536)
        #expect(validationError(dataWith("text", .string(wide)))?.field == "data.text")
    }

    @Test func shortStringsAreLimitedTo256Characters() throws {
        let ok = String(repeating: "s", count: 256), long = String(repeating: "s", count: 257)
        #expect(try validate(.object([("source", .string(ok))])).source == ok)
        #expect(validationError(.object([("source", .string(long))]))?.field == "source")
        #expect(validationError(.object([("device_id", .string(long))]))?.field == "device_id")
        #expect(validationError(dataWith("tags", .array([.string(long)])))?.field == "data.tags[0]")
        #expect(validationError(metric([("name", .string(long)), ("value", .number(1))]))?.field == "data.metric.name")
        #expect(validationError(metric([("name", .string("m")), ("value", .number(1)), ("unit", .string(long))]))?.field == "data.metric.unit")
        #expect(validationError(location([("latitude", .number(0)), ("longitude", .number(0)), ("place_name", .string(long))]))?.field
                == "data.location.place_name")
    }

    @Test func upTo64TagsAreAccepted() throws {
        let tags = (0..<64).map { "t\($0)" }
        #expect(try validate(dataWith("tags", .array(tags.map(JSONValue.string)))).data.tags == tags)
        #expect(try validate(dataWith("tags", .array([]))).data.tags == [])
    }

    @Test func sixtyFiveTagsAreRefused() {
        let tags = (0..<65).map { JSONValue.string("t\($0)") }
        #expect(validationError(dataWith("tags", .array(tags)))?.field == "data.tags")
    }

    @Test func tagsKeepTheirSpellingAndOrder() throws {
        let entry = try validate(#"{"data": {"tags": [" Padded ", "b", "a", "b"]}}"#)
        #expect(entry.data.tags == [" Padded ", "b", "a", "b"])
    }

    @Test func metricBoundsAreInclusive() throws {
        for value in [1.0, 5.5, 10.0] {
            let m = try validate(metric([("name", .string("mood")), ("value", .number(value)),
                                         ("scale_min", .number(1)), ("scale_max", .number(10))])).data.metric
            #expect(m == Metric(name: "mood", value: value, scaleMin: 1, scaleMax: 10))
        }
        let equal = try validate(metric([("name", .string("m")), ("value", .number(3)), ("scale_min", .number(3)), ("scale_max", .number(3))]))
        #expect(equal.data.metric?.value == 3)
        let negative = try validate(metric([("name", .string("t")), ("value", .number(-40)), ("scale_min", .number(-50))]))
        #expect(negative.data.metric?.scaleMin == -50)
        let unbounded = try validate(metric([("name", .string("steps")), ("value", .number(1e9))]))
        #expect(unbounded.data.metric?.value == 1e9)
    }

    @Test func coordinateBoundsAreInclusive() throws {
        for (lat, lon) in [(90.0, 180.0), (-90.0, -180.0), (0.0, 0.0), (52.52, 13.405)] {
            let loc = try validate(location([("latitude", .number(lat)), ("longitude", .number(lon))])).data.location
            #expect(loc == Location(latitude: lat, longitude: lon))
        }
    }

    @Test func accuracyZeroAndNegativeAltitudeAreAccepted() throws {
        let loc = try validate(location([("latitude", .number(31.5)), ("longitude", .number(35.5)),
                                         ("accuracy", .number(0)), ("altitude", .number(-430))])).data.location
        #expect(loc?.accuracy == 0)
        #expect(loc?.altitude == -430)
    }
}

@Suite struct LogEntryRoundTripTests {
    private static let full = LogEntry(
        id: sampleID, timestamp: Timestamp(millisecondsSince1970: 1_795_336_245_678),
        recordedAt: Timestamp(millisecondsSince1970: 1_795_336_300_000), source: "watch",
        deviceId: "watch_11111111-2222-4333-8444-555555555555", category: "mood",
        data: LogData(text: "Line one\nline \"two\" — ünïcode 😀",
                      metric: Metric(name: "mood", value: 7.25, unit: "points", scaleMin: 1, scaleMax: 10),
                      location: Location(latitude: -33.8688, longitude: 151.2093, accuracy: 12.5, altitude: 58, placeName: "Sydney"),
                      tags: ["morning", "outside"]))

    @Test func fullEntryRoundTripsThroughJSON() throws {
        let entry = Self.full
        #expect(try validate(entry.json, defaults: defaults(timestamp: nil)) == entry)
        // … and through its canonical text.
        let text = entry.json.canonicalText
        #expect(try validate(text, defaults: defaults(timestamp: nil)) == entry)
    }

    @Test func minimalEntryRoundTripsAndOmitsAbsentMembers() throws {
        let entry = LogEntry(id: sampleID, timestamp: Timestamp(millisecondsSince1970: -1), recordedAt: Timestamp(millisecondsSince1970: 0),
                             source: "drafts", deviceId: "d")
        let json = entry.json
        #expect(json["category"] == nil)
        #expect(json["data"] == .object([]))
        #expect(json.canonicalText == #"{"data":{},"device_id":"d","id":"watch_550e8400-e29b-41d4-a716-446655440000","recorded_at":"1970-01-01T00:00:00.000Z","source":"drafts","timestamp":"1969-12-31T23:59:59.999Z"}"#)
        #expect(try validate(json, defaults: defaults(timestamp: nil)) == entry)
    }

    @Test func jsonUsesSnakeCaseNames() {
        let json = Self.full.json
        #expect(json["recorded_at"] != nil)
        #expect(json["device_id"] != nil)
        #expect(json["data"]?["metric"]?["scale_min"] == .number(1))
        #expect(json["data"]?["metric"]?["scale_max"] == .number(10))
        #expect(json["data"]?["location"]?["place_name"] == .string("Sydney"))
    }

    @Test func randomEntriesRoundTrip() throws {
        let random = SeededRandom(seed: 77)
        func maybe<T>(_ make: () -> T) -> T? { random.next(below: 2) == 0 ? make() : nil }
        func word() -> String { ["walk", "Mood", "café", "😀 ok", "a b", "x\ty"][Int(random.next(below: 6))] }
        for _ in 0..<200 {
            let low = Double(random.next(below: 5))
            let entry = LogEntry(
                id: Identifier.make(role: Role.allCases[Int(random.next(below: 3))], random: random),
                timestamp: Timestamp(millisecondsSince1970: Int64(random.next(below: 4_000_000_000_000)) - 1_000_000_000_000),
                recordedAt: Timestamp(millisecondsSince1970: Int64(random.next(below: 4_000_000_000_000))),
                source: word(), deviceId: word(), category: maybe(word),
                data: LogData(text: maybe(word),
                              metric: maybe { Metric(name: word(), value: low + random.nextUnit(), unit: maybe(word),
                                                     scaleMin: maybe { low }, scaleMax: maybe { low + 1 }) },
                              location: maybe { Location(latitude: random.nextUnit() * 180 - 90, longitude: random.nextUnit() * 360 - 180,
                                                         accuracy: maybe { random.nextUnit() * 100 }, altitude: maybe { random.nextUnit() * 9000 - 500 },
                                                         placeName: maybe(word)) },
                              tags: maybe { (0..<Int(random.next(below: 4))).map { _ in word() } }))
            let back = try validate(try JSONValue.parse(entry.json.canonicalText), defaults: defaults(timestamp: nil))
            #expect(back == entry)
        }
    }
}

@Suite struct CanonicalDataTests {
    /// The direct writer must produce exactly the canonical text of the JSON tree, or replicas
    /// that store through different paths would disagree.
    @Test func directCanonicalJSONMatchesTheTree() {
        let random = SeededRandom(seed: 5)
        for i in 0..<500 {
            var data = LogData()
            if random.next(below: 2) == 0 { data.text = ["plain", "with \"quotes\" and \\ and \n", "ünïcödé ☕", ""][Int(random.next(below: 4))] + "\(i)" }
            if random.next(below: 2) == 0 {
                data.metric = Metric(name: "m\(i)", value: Double(random.next(below: 100)) / 7, unit: random.next(below: 2) == 0 ? "kg" : nil,
                                     scaleMin: random.next(below: 2) == 0 ? 0 : nil, scaleMax: random.next(below: 2) == 0 ? 100 : nil)
            }
            if random.next(below: 2) == 0 {
                data.location = Location(latitude: random.nextUnit() * 180 - 90, longitude: random.nextUnit() * 360 - 180,
                                         accuracy: random.next(below: 2) == 0 ? 5.5 : nil, altitude: random.next(below: 2) == 0 ? -3 : nil,
                                         placeName: random.next(below: 2) == 0 ? "Café \"Zur Post\"" : nil)
            }
            if random.next(below: 2) == 0 { data.tags = (0..<Int(random.next(below: 4))).map { "t\($0)" } }
            #expect(data.canonicalJSON == data.json.canonicalText)
        }
    }
}
