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
    func writeCanonicalJSON(to out: inout [UInt8]) {
        var first = true
        func key(_ name: String, _ out: inout [UInt8]) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.writeString(name, to: &out)
            out.append(UInt8(ascii: ":"))
        }
        func number(_ value: Double, _ out: inout [UInt8]) { out.append(contentsOf: JSONValue.numberText(value).utf8) }
        out.append(UInt8(ascii: "{"))
        if let location {
            key("location", &out)
            var inner = true
            func innerKey(_ name: String, _ out: inout [UInt8]) {
                if !inner { out.append(UInt8(ascii: ",")) }
                inner = false
                JSONValue.writeString(name, to: &out)
                out.append(UInt8(ascii: ":"))
            }
            out.append(UInt8(ascii: "{"))
            if let accuracy = location.accuracy { innerKey("accuracy", &out); number(accuracy, &out) }
            if let altitude = location.altitude { innerKey("altitude", &out); number(altitude, &out) }
            innerKey("latitude", &out); number(location.latitude, &out)
            innerKey("longitude", &out); number(location.longitude, &out)
            if let place = location.placeName { innerKey("place_name", &out); JSONValue.writeString(place, to: &out) }
            out.append(UInt8(ascii: "}"))
        }
        if let metric {
            key("metric", &out)
            out.append(contentsOf: #"{"name":"#.utf8)
            JSONValue.writeString(metric.name, to: &out)
            if let high = metric.scaleMax { out.append(contentsOf: #","scale_max":"#.utf8); number(high, &out) }
            if let low = metric.scaleMin { out.append(contentsOf: #","scale_min":"#.utf8); number(low, &out) }
            if let unit = metric.unit { out.append(contentsOf: #","unit":"#.utf8); JSONValue.writeString(unit, to: &out) }
            out.append(contentsOf: #","value":"#.utf8)
            number(metric.value, &out)
            out.append(UInt8(ascii: "}"))
        }
        if let tags {
            key("tags", &out)
            out.append(UInt8(ascii: "["))
            for (i, tag) in tags.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(tag, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        if let text {
            key("text", &out)
            JSONValue.writeString(text, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
