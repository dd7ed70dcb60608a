/// An instant as milliseconds since 1970-01-01T00:00:00Z, read from and written as ISO 8601.
///
/// Entries store their times normalised to UTC with millisecond precision
/// (`2026-11-22T08:30:00.000Z`) so that text order is time order: `--since`/`--until` filters and
/// the timestamp index compare strings, as the LifeLog backend did.
///
/// ```swift
/// let t = try Timestamp(iso8601: "2026-11-22T09:30:00+01:00")
/// t.iso8601   // "2026-11-22T08:30:00.000Z"
/// ```
public struct Timestamp: Comparable, Hashable, Sendable {
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        a.millisecondsSince1970 < b.millisecondsSince1970
    }

    /// Why a text is not an ISO 8601 instant.
    public struct FormatError: Error, Equatable, Sendable {
        public var reason: String
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS[.fraction]]` followed by `Z` or an offset `±HH:MM`/`±HHMM`.
    /// A time without a zone is refused: it would mean a different instant on every device.
    public init(iso8601 text: String) throws(FormatError) {
        var copy = text
        self = try copy.withUTF8 { utf8 in Result { () throws(FormatError) in try Timestamp(iso8601: utf8) } }.get()
    }

    /// The same rules over UTF-8 bytes, read in place: a peer's entry carries two times, parsed
    /// straight from the frame without making strings of them.
    init(iso8601 utf8: UnsafeBufferPointer<UInt8>) throws(FormatError) {
        var scanner = DigitScanner(utf8)
        func need(_ ok: Bool, _ reason: String) throws(FormatError) {
            if !ok { throw FormatError(reason: reason) }
        }
        let year = scanner.digits(4)
        try need(year != nil && scanner.take("-"), "expected YYYY-MM-DD at the start")
        let month = scanner.digits(2)
        try need(month != nil && scanner.take("-"), "expected YYYY-MM-DD at the start")
        let day = scanner.digits(2)
        try need(day != nil, "expected YYYY-MM-DD at the start")
        try need(scanner.take("T") || scanner.take("t") || scanner.take(" "), "expected 'T' between date and time")
        let hour = scanner.digits(2)
        try need(hour != nil && scanner.take(":"), "expected HH:MM after 'T'")
        let minute = scanner.digits(2)
        try need(minute != nil, "expected HH:MM after 'T'")
        var second = 0, millis = 0
        if scanner.take(":") {
            guard let s = scanner.digits(2) else { throw FormatError(reason: "expected two-digit seconds") }
            second = s
            if scanner.take(".") || scanner.take(",") {
                var digits = 0, fraction = 0
                while let d = scanner.digits(1) {
                    if digits < 3 { fraction = fraction * 10 + d }
                    digits += 1
                }
                try need(digits > 0, "expected digits after the decimal point")
                var scale = digits
                while scale < 3 { fraction *= 10; scale += 1 }
                millis = fraction
            }
        }
        var offsetMinutes = 0
        if scanner.take("Z") || scanner.take("z") {
            offsetMinutes = 0
        } else if let sign = scanner.takeSign() {
            guard let oh = scanner.digits(2) else { throw FormatError(reason: "expected a zone offset ±HH:MM") }
            _ = scanner.take(":")
            guard let om = scanner.digits(2) else { throw FormatError(reason: "expected a zone offset ±HH:MM") }
            try need(oh <= 23 && om <= 59, "zone offset out of range")
            offsetMinutes = sign * (oh * 60 + om)
        } else {
            throw FormatError(reason: "missing time zone ('Z' or ±HH:MM)")
        }
        try need(scanner.atEnd, "unexpected text after the time zone")
        let (y, mo, d, h, mi) = (year!, month!, day!, hour!, minute!)
        try need((1...12).contains(mo), "month out of range")
        try need(d >= 1 && d <= Timestamp.daysIn(month: mo, year: y), "day out of range")
        try need(h <= 23 && mi <= 59 && second <= 59, "time of day out of range")
        let days = Timestamp.daysSinceEpoch(year: y, month: mo, day: d)
        let seconds = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + second) - Int64(offsetMinutes * 60)
        millisecondsSince1970 = seconds * 1000 + Int64(millis)
        try need(Timestamp.representable.contains(millisecondsSince1970), "outside the years 0000–9999 in UTC")
    }

    /// Instants whose UTC form has a four-digit year.
    public static let representable: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, always UTC, always 24 characters for years 0000–9999.
    /// Written digit by digit: it runs for every stored entry, so it avoids string concatenation.
    public var iso8601: String {
        String(unsafeUninitializedCapacity: 24) { buffer in
            formatISO8601(into: buffer)
            return 24
        }
    }

    /// Appends the same 24 bytes to `out`, for rows assembled without intermediate strings.
    package func writeISO8601(to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: 24))
        out.withUnsafeMutableBufferPointer { formatISO8601(into: UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    private func formatISO8601(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let ms = millisecondsSince1970
        let totalSeconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = Int(ms - totalSeconds * 1000)
        let days = totalSeconds >= 0 ? totalSeconds / 86_400 : (totalSeconds - 86_399) / 86_400
        let secondOfDay = Int(totalSeconds - days * 86_400)
        let (y, m, d) = Timestamp.civil(fromDays: Int(days))
        precondition((0...9999).contains(y), "Timestamp \(ms) has no four-digit year")
        func put(_ value: Int, _ width: Int, at offset: Int) {
            var v = value
            for i in stride(from: offset + width - 1, through: offset, by: -1) {
                buffer[i] = UInt8(0x30 + v % 10)
                v /= 10
            }
        }
        put(y, 4, at: 0); buffer[4] = 0x2D
        put(m, 2, at: 5); buffer[7] = 0x2D
        put(d, 2, at: 8); buffer[10] = 0x54
        put(secondOfDay / 3600, 2, at: 11); buffer[13] = 0x3A
        put(secondOfDay / 60 % 60, 2, at: 14); buffer[16] = 0x3A
        put(secondOfDay % 60, 2, at: 17); buffer[19] = 0x2E
        put(millis, 3, at: 20); buffer[23] = 0x5A
    }

    /// `YYYY-MM-DD` of the instant in UTC.
    public var day: String { String(iso8601.prefix(10)) }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (eras of 400 years).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// Reads fixed-width digit groups and single punctuation from ASCII bytes.
private struct DigitScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func digits(_ count: Int) -> Int? {
        guard index + count <= bytes.count else { return nil }
        var value = 0
        for i in index..<(index + count) {
            let b = bytes[i]
            guard b >= 0x30, b <= 0x39 else { return nil }
            value = value * 10 + Int(b - 0x30)
        }
        index += count
        return value
    }

    mutating func take(_ c: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(c.value) else { return false }
        index += 1
        return true
    }

    mutating func takeSign() -> Int? {
        if take("+") { return 1 }
        if take("-") { return -1 }
        return nil
    }
}
