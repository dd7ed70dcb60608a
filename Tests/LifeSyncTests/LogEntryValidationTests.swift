import LifeSync
import Testing

@Suite struct LogEntryFieldRuleTests {
    /// One refused input per rule, with the field its error must name.
    @Test(arguments: [
        // Unknown fields, at every level, even when null; in `data`, names that cannot be an
        // extra member, and typos of the document's four.
        (#"{"catgory": "mood"}"#, "catgory"),
        (#"{"bogus": null}"#, "bogus"),
        (#"{"data": {"txt": "x"}}"#, "data.txt"),
        (#"{"data": {"Tags": ["x"]}}"#, "data.Tags"),
        (#"{"data": {"image-url": "x"}}"#, "data.image-url"),
        (#"{"data": {"_private": 1}}"#, "data._private"),
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
