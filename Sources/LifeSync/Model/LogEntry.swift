/// One life-log event, exactly as the LifeLog document defines it (snake_case in JSON):
///
/// ```json
/// {"id": "watch_…", "timestamp": "2026-11-22T08:30:00.000Z", "recorded_at": "…",
///  "source": "watch", "device_id": "watch_…", "category": "mood",
///  "data": {"text": "…", "metric": {"name": "mood", "value": 7, "scale_min": 1, "scale_max": 10},
///           "location": {"latitude": 52.5, "longitude": 13.4}, "tags": ["morning"]}}
/// ```
///
/// Build one from untrusted JSON with ``LogEntry/validated(from:defaults:)``; every rule names the
/// field it refuses.
public struct LogEntry: Equatable, Sendable {
    public var id: String
    /// When the event happened.
    public var timestamp: Timestamp
    /// When the entry was written down.
    public var recordedAt: Timestamp
    /// What produced it: "watch", "iphone", "mac", "drafts", "shortcut", …
    public var source: String
    public var deviceId: String
    public var category: String?
    public var data: LogData

    public init(id: String, timestamp: Timestamp, recordedAt: Timestamp, source: String, deviceId: String,
                category: String? = nil, data: LogData = LogData()) {
        self.id = id
        self.timestamp = timestamp
        self.recordedAt = recordedAt
        self.source = source
        self.deviceId = deviceId
        self.category = category
        self.data = data
    }
}

/// The free-form part of an entry; every member is optional.
///
/// Beyond the document's four members, `data` may hold others (`extra`, e.g. the `image_url`
/// the LifeLog document defers): any JSON value under a name of `isExtraName`'s form. Each is a
/// field of its own for the merge, so a member a later version adds travels and merges on
/// every node of this one. (A place needs none: it is an entry with a `location`.)
public struct LogData: Equatable, Sendable {
    public var text: String?
    public var metric: Metric?
    public var location: Location?
    public var tags: [String]?
    /// The other members, by name; never `null` (a member set to null is absent).
    public var extra: [String: JSONValue]

    public init(text: String? = nil, metric: Metric? = nil, location: Location? = nil, tags: [String]? = nil,
                extra: [String: JSONValue] = [:]) {
        self.text = text
        self.metric = metric
        self.location = location
        self.tags = tags
        self.extra = extra
    }
}

/// A measured or rated value, e.g. mood 7 on a 1…10 scale.
public struct Metric: Equatable, Sendable {
    public var name: String
    public var value: Double
    public var unit: String?
    public var scaleMin: Double?
    public var scaleMax: Double?

    public init(name: String, value: Double, unit: String? = nil, scaleMin: Double? = nil, scaleMax: Double? = nil) {
        self.name = name
        self.value = value
        self.unit = unit
        self.scaleMin = scaleMin
        self.scaleMax = scaleMax
    }
}

/// Where the event happened (WGS 84 degrees, metres).
public struct Location: Equatable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public var accuracy: Double?
    public var altitude: Double?
    public var placeName: String?

    public init(latitude: Double, longitude: Double, accuracy: Double? = nil, altitude: Double? = nil, placeName: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.altitude = altitude
        self.placeName = placeName
    }
}

extension LogEntry {
    /// Equal in everything but `recorded_at`, which an import fills with "now" when a record
    /// leaves it out: re-importing the same file must find the same entries.
    public func isSameContent(as other: LogEntry) -> Bool {
        var copy = other
        copy.recordedAt = recordedAt
        return self == copy
    }
}
