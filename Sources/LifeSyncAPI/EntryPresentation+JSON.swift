import LifeSync

extension EntryPresentation {
    /// `entry` as this client reads it.
    package func json(_ entry: LogEntry) -> JSONValue {
        switch self {
        case .lifeSync:
            return entry.json
        case .lifeLogApp:
            var members: [(String, JSONValue)] = [
                ("id", .string(Self.appID(entry.id))),
                ("timestamp", .string(Self.wholeSeconds(entry.timestamp))),
                ("recordedAt", .string(Self.wholeSeconds(entry.recordedAt))),
                ("source", .string(entry.source)),
                ("deviceId", .string(entry.deviceId)),
            ]
            if let category = entry.category { members.append(("category", .string(category))) }
            members.append(("data", Self.appData(entry.data)))
            members.append(("synced", .bool(true)))
            return .object(members)
        }
    }

    /// The UUID after the prefix, upper case; an ID of another form (none is stored) as it is.
    static func appID(_ id: String) -> String {
        guard let underscore = id.lastIndex(of: "_") else { return id }
        let uuid = id[id.index(after: underscore)...]
        return Identifier.isUUIDShaped(String(uuid)) ? uuid.uppercased() : id
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`: the stored instant without its milliseconds.
    static func wholeSeconds(_ time: Timestamp) -> String {
        String(time.iso8601.prefix(19)) + "Z"
    }

    /// `data` as stored but for the location's `place_name`, which the app's `Location` spells
    /// `placeName` (it has no `CodingKeys`; its `Metric` maps `scale_min` itself).
    private static func appData(_ data: LogData) -> JSONValue {
        guard case .object(var members) = data.json, let index = members.firstIndex(where: { $0.0 == "location" }),
              case .object(var place) = members[index].1, let name = place.firstIndex(where: { $0.0 == "place_name" }) else {
            return data.json
        }
        place[name].0 = "placeName"
        members[index].1 = .object(place)
        return .object(members)
    }
}
