extension LogData {
    /// The same bytes as `json.canonicalText`, written directly in sorted key order without
    /// building a JSON tree: every stored entry goes through here. A test holds the two equal.
    public var canonicalJSON: String {
        var out: [UInt8] = []
        out.reserveCapacity(128 + (text?.utf8.count ?? 0))
        writeCanonicalJSON(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the canonical text to `out`.
    func writeCanonicalJSON(to out: inout [UInt8]) { writeJSON(to: &out, pretty: false, indent: 0) }

    /// Appends what `json.write(to:pretty:indent:)` would, members in sorted key order.
    package func writeJSON(to out: inout [UInt8], pretty: Bool, indent: Int) {
        var members = JSONMembers(pretty: pretty, indent: indent, to: &out)
        // Extra members go between the document's four in byte order of their names.
        var extraNames = extra.isEmpty ? [] : extra.keys.sorted()[...]
        func extrasBefore(_ name: String, _ out: inout [UInt8]) {
            while let next = extraNames.first, name.isEmpty || next < name {
                extraNames.removeFirst()
                members.key(next, &out)
                extra[next]!.write(to: &out, pretty: pretty, indent: indent + 1)
            }
        }
        if !extraNames.isEmpty { extrasBefore("location", &out) }
        if let location {
            members.location(location.latitude, location.longitude, location.accuracy, location.altitude, location.placeName, &out)
        }
        if !extraNames.isEmpty { extrasBefore("metric", &out) }
        if let metric { members.metric(metric.name, metric.value, metric.unit, metric.scaleMin, metric.scaleMax, &out) }
        if !extraNames.isEmpty { extrasBefore("tags", &out) }
        if let tags {
            members.key("tags", &out)
            if tags.isEmpty {
                out.append(contentsOf: "[]".utf8)
            } else {
                out.append(UInt8(ascii: "["))
                for (i, tag) in tags.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    if pretty { JSONMembers.newline(&out, indent + 2) }
                    JSONValue.writeString(tag, to: &out)
                }
                if pretty { JSONMembers.newline(&out, indent + 1) }
                out.append(UInt8(ascii: "]"))
            }
        }
        if !extraNames.isEmpty { extrasBefore("text", &out) }
        if let text { members.string("text", text, &out) }
        if !extraNames.isEmpty { extrasBefore("", &out) }
        members.close(&out)
    }
}

extension LogEntry {
    /// Appends what `json.write(to:pretty:indent:)` would, without the tree: an export writes
    /// every entry of the journal this way. A test holds the two equal.
    package func writeJSON(to out: inout [UInt8], pretty: Bool, indent: Int) {
        var members = JSONMembers(pretty: pretty, indent: indent, to: &out)
        if let category { members.string("category", category, &out) }
        members.key("data", &out)
        data.writeJSON(to: &out, pretty: pretty, indent: indent + 1)
        members.string("device_id", deviceId, &out)
        members.string("id", id, &out)
        members.key("recorded_at", &out)
        out.append(UInt8(ascii: "\""))
        recordedAt.writeISO8601(to: &out)
        out.append(UInt8(ascii: "\""))
        members.string("source", source, &out)
        members.key("timestamp", &out)
        out.append(UInt8(ascii: "\""))
        timestamp.writeISO8601(to: &out)
        out.append(UInt8(ascii: "\""))
        members.close(&out)
    }
}

extension EntryCells {
    /// Appends what `LogEntry.writeJSON(to:pretty:indent:)` writes for the entry these cells
    /// hold (they have no extra members, and no string of `data` needs an escape).
    package func writeJSON(to out: inout [UInt8], pretty: Bool, indent: Int) {
        var members = JSONMembers(pretty: pretty, indent: indent, to: &out)
        if let category { members.string("category", category, &out) }
        members.key("data", &out)
        var data = JSONMembers(pretty: pretty, indent: indent + 1, to: &out)
        if let location {
            data.location(location.latitude, location.longitude, location.accuracy, location.altitude, location.placeName, &out)
        }
        if let metric { data.metric(metric.name, metric.value, metric.unit, metric.scaleMin, metric.scaleMax, &out) }
        if let tags {
            data.key("tags", &out)
            if !pretty || tags.count == 2 {
                out.append(contentsOf: tags)
            } else {
                // `["a","b"]` without escapes: each tag is what lies between a pair of quotes.
                var start = 1
                while start < tags.count - 1 {
                    out.append(start == 1 ? UInt8(ascii: "[") : UInt8(ascii: ","))
                    JSONMembers.newline(&out, indent + 3)
                    var end = start + 1
                    while tags[end] != UInt8(ascii: "\"") { end += 1 }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: tags[start...end]))
                    start = end + 2
                }
                JSONMembers.newline(&out, indent + 2)
                out.append(UInt8(ascii: "]"))
            }
        }
        if let text { data.string("text", text, &out) }
        data.close(&out)
        members.string("device_id", deviceId, &out)
        members.string("id", id, &out)
        members.string("recorded_at", recordedAt, &out)
        members.string("source", source, &out)
        members.string("timestamp", timestamp, &out)
        members.close(&out)
    }
}

/// One JSON object written member by member, laid out as `JSONValue.write` lays it out: the
/// caller names the members in sorted key order.
private struct JSONMembers {
    let pretty: Bool
    let indent: Int
    private var first = true

    /// Opens the object.
    init(pretty: Bool, indent: Int, to out: inout [UInt8]) {
        self.pretty = pretty
        self.indent = indent
        out.append(UInt8(ascii: "{"))
    }

    static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    /// The next member's name; its value follows.
    mutating func key(_ name: String, _ out: inout [UInt8]) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        if pretty { Self.newline(&out, indent + 1) }
        JSONValue.writeString(name, to: &out)
        out.append(UInt8(ascii: ":"))
        if pretty { out.append(UInt8(ascii: " ")) }
    }

    mutating func string<Text: JSONText>(_ name: String, _ value: Text, _ out: inout [UInt8]) {
        key(name, &out)
        value.writeJSON(to: &out)
    }

    /// The `location` member, its own members in sorted key order.
    mutating func location<Text: JSONText>(_ latitude: Double, _ longitude: Double, _ accuracy: Double?, _ altitude: Double?,
                                           _ placeName: Text?, _ out: inout [UInt8]) {
        key("location", &out)
        var inner = JSONMembers(pretty: pretty, indent: indent + 1, to: &out)
        if let accuracy { inner.number("accuracy", accuracy, &out) }
        if let altitude { inner.number("altitude", altitude, &out) }
        inner.number("latitude", latitude, &out)
        inner.number("longitude", longitude, &out)
        if let placeName { inner.string("place_name", placeName, &out) }
        inner.close(&out)
    }

    /// The `metric` member, its own members in sorted key order.
    mutating func metric<Text: JSONText>(_ name: Text, _ value: Double, _ unit: Text?, _ scaleMin: Double?, _ scaleMax: Double?,
                                         _ out: inout [UInt8]) {
        key("metric", &out)
        var inner = JSONMembers(pretty: pretty, indent: indent + 1, to: &out)
        inner.string("name", name, &out)
        if let scaleMax { inner.number("scale_max", scaleMax, &out) }
        if let scaleMin { inner.number("scale_min", scaleMin, &out) }
        if let unit { inner.string("unit", unit, &out) }
        inner.number("value", value, &out)
        inner.close(&out)
    }

    mutating func number(_ name: String, _ value: Double, _ out: inout [UInt8]) {
        key(name, &out)
        JSONValue.writeNumber(value, to: &out)
    }

    func close(_ out: inout [UInt8]) {
        if pretty && !first { Self.newline(&out, indent) }
        out.append(UInt8(ascii: "}"))
    }
}

/// A string as a writer holds it: an entry's `String`, or a stored row's UTF-8 bytes.
private protocol JSONText {
    func writeJSON(to out: inout [UInt8])
}

extension String: JSONText {
    fileprivate func writeJSON(to out: inout [UInt8]) { JSONValue.writeString(self, to: &out) }
}

extension UnsafeBufferPointer: JSONText where Element == UInt8 {
    fileprivate func writeJSON(to out: inout [UInt8]) { JSONValue.writeString(utf8: self, to: &out) }
}
