extension LogEntry {
    /// The entry as the LifeLog document's JSON object.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(id)),
            ("timestamp", .string(timestamp.iso8601)),
            ("recorded_at", .string(recordedAt.iso8601)),
            ("source", .string(source)),
            ("device_id", .string(deviceId)),
            ("data", data.json),
        ]
        if let category { members.append(("category", .string(category))) }
        return .object(members)
    }
}

extension LogData {
    /// The `data` object; absent members are omitted rather than written as null.
    public var json: JSONValue {
        var members: [(String, JSONValue)] = []
        if let text { members.append(("text", .string(text))) }
        if let metric { members.append(("metric", metric.json)) }
        if let location { members.append(("location", location.json)) }
        if let tags { members.append(("tags", .array(tags.map(JSONValue.string)))) }
        for name in extra.keys.sorted() { members.append((name, extra[name]!)) }
        return .object(members)
    }
}

extension Metric {
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("name", .string(name)), ("value", .number(value))]
        if let unit { members.append(("unit", .string(unit))) }
        if let scaleMin { members.append(("scale_min", .number(scaleMin))) }
        if let scaleMax { members.append(("scale_max", .number(scaleMax))) }
        return .object(members)
    }
}

extension Location {
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("latitude", .number(latitude)), ("longitude", .number(longitude))]
        if let accuracy { members.append(("accuracy", .number(accuracy))) }
        if let altitude { members.append(("altitude", .number(altitude))) }
        if let placeName { members.append(("place_name", .string(placeName))) }
        return .object(members)
    }
}
