import LifeSync
import Testing

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

    /// The same for whole entries, compact and pretty at the depths an export writes them (an
    /// export is the tree's bytes; empty tags and data objects included).
    @Test func directEntryJSONMatchesTheTree() {
        let random = SeededRandom(seed: 6)
        var entries = (0..<600).map { _ in EntryGenerator(random).entry() }
        entries[0].data = LogData()
        entries[1].data.tags = []
        for entry in entries {
            for (pretty, indent) in [(false, 0), (true, 0), (true, 1), (true, 3)] {
                var direct: [UInt8] = [], tree: [UInt8] = []
                entry.writeJSON(to: &direct, pretty: pretty, indent: indent)
                entry.json.write(to: &tree, pretty: pretty, indent: indent)
                #expect(direct == tree, "\(String(decoding: tree, as: UTF8.self))")
            }
        }
    }
}
