// The LifeLog document's model (seed 004, "Data Model"), as written: not edited.
// Swift
struct LogEntry: Identifiable, Codable {
    let id: UUID
    let timestamp: Date           // When the event occurred
    let recordedAt: Date          // When the entry was created
    let source: String            // "watch", "iphone", "mac", "drafts", "shortcut"
    let deviceId: String          // Unique device identifier
    
    var category: String?         // "mood", "work", "location", "health", "note"
    var data: LogData
    
    // Local-only
    var synced: Bool = false
}

struct LogData: Codable {
    var text: String?
    var metric: Metric?
    var location: Location?
    var tags: [String]?
    // Note: imageURL and extra fields deferred to post-MVP
}

struct Metric: Codable {
    let name: String              // "mood", "energy", "focus", "pain"
    let value: Double             // Numeric value
    var unit: String?             // Optional unit label
    var scaleMin: Double?         // e.g., 1
    var scaleMax: Double?         // e.g., 10

    enum CodingKeys: String, CodingKey {
        case name, value, unit
        case scaleMin = "scale_min"
        case scaleMax = "scale_max"
    }
}

struct Location: Codable {
    let latitude: Double
    let longitude: Double
    var accuracy: Double?
    var altitude: Double?
    var placeName: String?        // Reverse geocoded or manual
}
