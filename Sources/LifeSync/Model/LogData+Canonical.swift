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
            members.key("location", &out)
            var inner = JSONMembers(pretty: pretty, indent: indent + 1, to: &out)
            if let accuracy = location.accuracy { inner.number("accuracy", accuracy, &out) }
            if let altitude = location.altitude { inner.number("altitude", altitude, &out) }
            inner.number("latitude", location.latitude, &out)
            inner.number("longitude", location.longitude, &out)
            if let place = location.placeName { inner.string("place_name", place, &out) }
            inner.close(&out)
        }
        if !extraNames.isEmpty { extrasBefore("metric", &out) }
        if let metric {
            members.key("metric", &out)
            var inner = JSONMembers(pretty: pretty, indent: indent + 1, to: &out)
            inner.string("name", metric.name, &out)
            if let high = metric.scaleMax { inner.number("scale_max", high, &out) }
            if let low = metric.scaleMin { inner.number("scale_min", low, &out) }
            if let unit = metric.unit { inner.string("unit", unit, &out) }
            inner.number("value", metric.value, &out)
            inner.close(&out)
        }
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

    mutating func string(_ name: String, _ value: String, _ out: inout [UInt8]) {
        key(name, &out)
        JSONValue.writeString(value, to: &out)
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
