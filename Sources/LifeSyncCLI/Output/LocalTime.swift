import Glibc
import LifeSync

/// Times as a person reads them: in the local time zone (the `TZ` environment variable, else
/// the system's), ISO 8601 with the offset, to the second: `2026-11-22T09:30:00+01:00`.
/// Machine outputs (`--json`, export, the change feed's cursors) keep UTC (`Timestamp.iso8601`).
enum LocalTime {
    static func text(_ time: Timestamp) -> String {
        var seconds = time_t(time.millisecondsSince1970 / 1000 - (time.millisecondsSince1970 % 1000 < 0 ? 1 : 0))
        var parts = tm()
        let offset = localtime_r(&seconds, &parts) == nil ? 0 : Int(parts.tm_gmtoff)
        let shifted = Timestamp(millisecondsSince1970: time.millisecondsSince1970 + Int64(offset) * 1000).iso8601
        let magnitude = abs(offset) / 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return String(shifted.prefix(19)) + (offset < 0 ? "-" : "+") + two(magnitude / 60) + ":" + two(magnitude % 60)
    }
}

extension LocalTime {
    /// The local minute, for lines that must stay short (`list`): `2026-11-22 09:30`.
    static func minute(_ time: Timestamp) -> String {
        String(text(time).prefix(16).map { $0 == "T" ? " " : $0 })
    }

    /// The first millisecond of the local day `date` (`YYYY-MM-DD`, checked by the caller), or
    /// with `endOfDay` its last: a day as the person typing it means it, daylight saving included.
    static func day(_ date: String, endOfDay: Bool) -> Timestamp {
        let parts = date.split(separator: "-").compactMap { Int32($0) }
        var fields = tm()
        fields.tm_year = parts[0] - 1900
        fields.tm_mon = parts[1] - 1
        fields.tm_mday = parts[2] + (endOfDay ? 1 : 0)
        fields.tm_isdst = -1
        let start = Int64(mktime(&fields)) * 1000
        return Timestamp(millisecondsSince1970: endOfDay ? start - 1 : start)
    }
}

extension Timestamp {
    /// This time in the local time zone, for people (see `LocalTime`).
    var local: String { LocalTime.text(self) }
}
