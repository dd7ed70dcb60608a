@testable import LifeSync
import Testing

private func millis(_ text: String) throws -> Int64 {
    try Timestamp(iso8601: text).millisecondsSince1970
}

/// The format error for `text`, or nil (recording an issue) when it parses.
private func formatError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Timestamp.FormatError? {
    do {
        let t = try Timestamp(iso8601: text)
        Issue.record("expected \(text.debugDescription) to be refused, got \(t.iso8601)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

@Suite struct TimestampParsingTests {
    @Test func knownInstants() throws {
        #expect(try millis("1970-01-01T00:00:00Z") == 0)
        #expect(try millis("1970-01-01T00:00:00.001Z") == 1)
        #expect(try millis("2000-01-01T00:00:00Z") == 946_684_800_000)
        #expect(try millis("2026-11-22T00:00:00Z") == 1_795_305_600_000)
        #expect(try millis("2038-01-19T03:14:07Z") == 2_147_483_647_000)
        #expect(try millis("9999-12-31T23:59:59.999Z") == 253_402_300_799_999)
    }

    @Test func offsetsAreNormalisedToUTC() throws {
        let t = try Timestamp(iso8601: "2026-11-22T09:30:00+01:00")
        #expect(t.iso8601 == "2026-11-22T08:30:00.000Z")
        #expect(try millis("2026-11-22T09:30:00+0100") == t.millisecondsSince1970)
        #expect(try millis("2026-11-22T03:00:00-05:30") == t.millisecondsSince1970)
        #expect(try millis("2026-11-22T08:30:00-00:00") == t.millisecondsSince1970)
        #expect(try millis("2026-11-22T08:30:00+00:00") == t.millisecondsSince1970)
        #expect(try millis("2026-11-23T08:29:00+23:59") == t.millisecondsSince1970)
    }

    @Test func offsetsCrossDayMonthAndYearBoundaries() throws {
        #expect(try Timestamp(iso8601: "2026-01-01T00:30:00+01:00").iso8601 == "2025-12-31T23:30:00.000Z")
        #expect(try Timestamp(iso8601: "2025-12-31T23:30:00-01:00").iso8601 == "2026-01-01T00:30:00.000Z")
        #expect(try Timestamp(iso8601: "2024-03-01T01:00:00+02:00").iso8601 == "2024-02-29T23:00:00.000Z")
        #expect(try Timestamp(iso8601: "1970-01-01T00:00:00+00:01").millisecondsSince1970 == -60_000)
    }

    @Test(arguments: [
        ("2026-11-22T08:30:00.1Z", 100), ("2026-11-22T08:30:00.12Z", 120), ("2026-11-22T08:30:00.123Z", 123),
        ("2026-11-22T08:30:00.1234Z", 123), ("2026-11-22T08:30:00.123999Z", 123), ("2026-11-22T08:30:00.9999999Z", 999),
        ("2026-11-22T08:30:00.000000001Z", 0), ("2026-11-22T08:30:00,5Z", 500), ("2026-11-22T08:30:00.05+01:00", 50),
    ] as [(String, Int64)])
    func fractionsGiveMillisecondsAndExtraDigitsTruncate(text: String, fraction: Int64) throws {
        let base = try millis("2026-11-22T08:30:00Z")
        let offset: Int64 = text.hasSuffix("+01:00") ? -3_600_000 : 0
        #expect(try millis(text) == base + fraction + offset)
    }

    @Test func manyFractionDigitsAreFine() throws {
        let text = "2026-11-22T08:30:00." + String(repeating: "9", count: 500) + "Z"
        #expect(try millis(text) == (try millis("2026-11-22T08:30:00.999Z")))
    }

    @Test func secondsAreOptional() throws {
        #expect(try millis("2026-11-22T08:30Z") == (try millis("2026-11-22T08:30:00.000Z")))
        #expect(try millis("2026-11-22T08:30+02:00") == (try millis("2026-11-22T06:30:00Z")))
    }

    @Test func lowercaseSeparatorsAndSpaceAreAccepted() throws {
        let expected = try millis("2026-11-22T08:30:00Z")
        #expect(try millis("2026-11-22t08:30:00z") == expected)
        #expect(try millis("2026-11-22 08:30:00Z") == expected)
    }

    @Test(arguments: [
        "2026-11-22T08:30:00", "2026-11-22T08:30:00.123", "2026-11-22T08:30", "2026-11-22 08:30:00",
    ])
    func missingZoneIsRefused(text: String) {
        #expect(formatError(text)?.reason == "missing time zone ('Z' or ±HH:MM)")
    }

    @Test(arguments: [
        "2023-02-29T00:00:00Z",  // not a leap year
        "1900-02-29T00:00:00Z",  // divisible by 100, not by 400
        "2100-02-29T00:00:00Z",
        "2024-02-30T00:00:00Z", "2026-02-30T00:00:00Z", "2026-04-31T00:00:00Z", "2026-06-31T00:00:00Z",
        "2026-09-31T00:00:00Z", "2026-11-31T00:00:00Z", "2026-01-32T00:00:00Z", "2026-12-00T00:00:00Z",
    ])
    func impossibleDaysAreRefused(text: String) {
        #expect(formatError(text)?.reason == "day out of range")
    }

    @Test(arguments: ["2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-99-01T00:00:00Z"])
    func impossibleMonthsAreRefused(text: String) {
        #expect(formatError(text)?.reason == "month out of range")
    }

    @Test(arguments: ["2026-11-22T24:00:00Z", "2026-11-22T23:60:00Z", "2026-11-22T23:59:60Z", "2026-11-22T99:00:00Z"])
    func impossibleTimesOfDayAreRefused(text: String) {
        #expect(formatError(text)?.reason == "time of day out of range")
    }

    @Test func leapDaysOfLeapYearsAreAccepted() throws {
        #expect(try Timestamp(iso8601: "2000-02-29T12:00:00Z").iso8601 == "2000-02-29T12:00:00.000Z")
        #expect(try Timestamp(iso8601: "2024-02-29T00:00:00Z").iso8601 == "2024-02-29T00:00:00.000Z")
        #expect(try Timestamp(iso8601: "1600-02-29T00:00:00Z").iso8601 == "1600-02-29T00:00:00.000Z")
        // The day after 28 February in a common year is 1 March.
        #expect(try millis("1900-03-01T00:00:00Z") - (try millis("1900-02-28T00:00:00Z")) == 86_400_000)
        #expect(try millis("2024-03-01T00:00:00Z") - (try millis("2024-02-28T00:00:00Z")) == 2 * 86_400_000)
        #expect(try millis("2000-03-01T00:00:00Z") - (try millis("2000-02-28T00:00:00Z")) == 2 * 86_400_000)
    }

    @Test func leapYearRule() {
        #expect(Timestamp.isLeap(2000))
        #expect(Timestamp.isLeap(2024))
        #expect(Timestamp.isLeap(1600))
        #expect(!Timestamp.isLeap(1900))
        #expect(!Timestamp.isLeap(2100))
        #expect(!Timestamp.isLeap(2023))
        #expect(Timestamp.daysIn(month: 2, year: 2000) == 29)
        #expect(Timestamp.daysIn(month: 2, year: 1900) == 28)
        #expect(Timestamp.daysIn(month: 4, year: 2026) == 30)
        #expect(Timestamp.daysIn(month: 12, year: 2026) == 31)
    }

    @Test(arguments: [
        "", "2026", "2026-11-22", "2026-11-22T", "2026-11-22T08", "2026-11-22T08:", "2026-11-22T8:30Z",
        "26-11-22T08:30Z", "2026-1-22T08:30Z", "2026/11/22T08:30Z", "2026-11-22X08:30Z", "2026-11-22T08:30:0Z",
        "2026-11-22T08:30:00.Z", "2026-11-22T08:30:00Zjunk", "2026-11-22T08:30:00Z ", " 2026-11-22T08:30:00Z",
        "2026-11-22T08:30:00+01", "2026-11-22T08:30:00+1:00", "2026-11-22T08:30:00+01:0", "2026-11-22T08:30:00+24:00",
        "2026-11-22T08:30:00+01:60", "2026-11-22T08:30:00UTC", "+2026-11-22T08:30:00Z", "2026-11-22T08:30:00ZZ",
        "２０２６-11-22T08:30:00Z", "2026-11-22T08:30:00.5.5Z",
    ])
    func malformedTextsAreRefused(text: String) {
        _ = formatError(text)
    }
}

@Suite struct TimestampFormattingTests {
    @Test func formatsUTCWithMilliseconds() {
        #expect(Timestamp(millisecondsSince1970: 0).iso8601 == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: 1).iso8601 == "1970-01-01T00:00:00.001Z")
        #expect(Timestamp(millisecondsSince1970: 1_795_305_600_000).iso8601 == "2026-11-22T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: 1_795_336_245_678).iso8601 == "2026-11-22T08:30:45.678Z")
        #expect(Timestamp(millisecondsSince1970: 951_782_400_000).iso8601 == "2000-02-29T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: 253_402_300_799_999).iso8601 == "9999-12-31T23:59:59.999Z")
    }

    @Test func formatsDatesBefore1970() {
        #expect(Timestamp(millisecondsSince1970: -1).iso8601 == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(millisecondsSince1970: -1000).iso8601 == "1969-12-31T23:59:59.000Z")
        #expect(Timestamp(millisecondsSince1970: -1001).iso8601 == "1969-12-31T23:59:58.999Z")
        #expect(Timestamp(millisecondsSince1970: -999).iso8601 == "1969-12-31T23:59:59.001Z")
        #expect(Timestamp(millisecondsSince1970: -86_400_000).iso8601 == "1969-12-31T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: -86_400_001).iso8601 == "1969-12-30T23:59:59.999Z")
        #expect(Timestamp(millisecondsSince1970: -2_208_988_800_000).iso8601 == "1900-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: -62_135_596_800_000).iso8601 == "0001-01-01T00:00:00.000Z")
    }

    @Test func parsesDatesBefore1970() throws {
        #expect(try millis("1969-12-31T23:59:59.999Z") == -1)
        #expect(try millis("1969-07-20T20:17:40Z") == -14_182_940_000)
        #expect(try millis("1900-01-01T00:00:00Z") == -2_208_988_800_000)
        #expect(try millis("1900-03-01T00:00:00Z") == -2_203_891_200_000)
        #expect(try millis("0001-01-01T00:00:00Z") == -62_135_596_800_000)
        #expect(try millis("0000-03-01T00:00:00Z") == -62_162_035_200_000)
    }

    @Test func formattedTextIsAlways24CharactersAndParsesBack() throws {
        let random = SeededRandom(seed: 99)
        let low: Int64 = -62_135_596_800_000  // 0001-01-01
        let high: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999
        for _ in 0..<2_000 {
            let ms = low + Int64(random.next(below: UInt64(high - low + 1)))
            let text = Timestamp(millisecondsSince1970: ms).iso8601
            #expect(text.utf8.count == 24, "\(ms) → \(text)")
            #expect(text.hasSuffix("Z"))
            #expect(try millis(text) == ms, "\(ms) → \(text)")
        }
    }

    @Test func everyDayBoundaryAroundTheEpochRoundTrips() throws {
        // Walk day by day through ten years each side of 1970, including 1968 and 1972 leap days.
        var previous = ""
        for day in Int64(-3_700)...3_700 {
            let t = Timestamp(millisecondsSince1970: day * 86_400_000)
            let text = t.iso8601
            #expect(text.hasSuffix("T00:00:00.000Z"), "\(text)")
            #expect(text > previous, "text order must be time order: \(previous) then \(text)")
            #expect(try Timestamp(iso8601: text) == t)
            previous = text
        }
    }

    @Test func textOrderIsTimeOrder() throws {
        let random = SeededRandom(seed: 5)
        var stamps: [Timestamp] = []
        for _ in 0..<500 {
            stamps.append(Timestamp(millisecondsSince1970: Int64(random.next(below: 4_000_000_000_000)) - 1_000_000_000_000))
        }
        let byTime = stamps.sorted()
        let byText = stamps.sorted { $0.iso8601 < $1.iso8601 }
        #expect(byTime == byText)
    }

    @Test func dayIsTheUTCDate() throws {
        #expect(try Timestamp(iso8601: "2026-11-22T23:30:00-02:00").day == "2026-11-23")
        #expect(try Timestamp(iso8601: "2026-11-22T00:30:00+02:00").day == "2026-11-21")
        #expect(Timestamp(millisecondsSince1970: -1).day == "1969-12-31")
    }

    @Test func comparisonFollowsMilliseconds() throws {
        let a = try Timestamp(iso8601: "2026-11-22T08:30:00.001Z")
        let b = try Timestamp(iso8601: "2026-11-22T09:30:00.002+01:00")
        #expect(a < b)
        #expect(!(b < a))
        #expect(try Timestamp(iso8601: "2026-11-22T09:30:00.001+01:00") == a)
    }
}
