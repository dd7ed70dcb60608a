// Drives the LifeLog app's APIClient against a node as the app's SyncManager does, and prints
// what happened as one JSON object for LifeLogAppClientTests to judge.
//
//     app BASE_URL API_KEY fetch   fetchEntries() only: how many entries decoded, or the error
//     app BASE_URL API_KEY sync    createEntries of a batch, then fetch it back and compare; then
//                                  a batch holding one entry the node refuses
let arguments = CommandLine.arguments
guard arguments.count == 4, let base = URL(string: arguments[1]) else {
    print("usage: app BASE_URL API_KEY fetch|sync")
    exit(2)
}
let client = APIClient(baseURL: base, apiKey: arguments[2])
var report: [String: Any] = [:]

@MainActor func fetchAll() async -> [LogEntry]? {
    do {
        return try await client.fetchEntries()
    } catch {
        report["fetch_error"] = "\(error)"
        return nil
    }
}

/// An entry as the app makes one: a new UUID, its own Date values (whole seconds: that is what
/// its `.iso8601` encoder sends).
func make(_ i: Int, refused: Bool = false) -> LogEntry {
    let second = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - Double(i * 60)).rounded(.down))
    var data = LogData(text: "entry \(i) from the app", metric: nil, location: nil, tags: i % 2 == 0 ? ["app", "n\(i)"] : nil)
    if i % 3 == 0 || refused {
        data.metric = Metric(name: "mood", value: refused ? 11 : Double(i % 10 + 1), unit: nil, scaleMin: 1, scaleMax: 10)
    }
    if i % 4 == 0 { data.location = Location(latitude: 52.52, longitude: 13.405, accuracy: 8, altitude: nil, placeName: "Home") }
    return LogEntry(id: UUID(), timestamp: second, recordedAt: second, source: "iphone", deviceId: "iPhone15,2",
                    category: i % 5 == 0 ? nil : "mood", data: data)
}

func same(_ a: LogEntry, _ b: LogEntry) -> Bool {
    a.id == b.id && a.timestamp == b.timestamp && a.recordedAt == b.recordedAt && a.source == b.source
        && a.deviceId == b.deviceId && a.category == b.category && a.data.text == b.data.text && a.data.tags == b.data.tags
        && a.data.metric?.value == b.data.metric?.value && a.data.metric?.scaleMax == b.data.metric?.scaleMax
        && a.data.location?.placeName == b.data.location?.placeName && a.data.location?.latitude == b.data.location?.latitude
}

switch arguments[3] {
case "fetch":
    if let fetched = await fetchAll() { report["fetched"] = fetched.count }
case "sync":
    let sent = (0..<20).map { make($0) }
    do {
        try await client.createEntries(sent)
        report["created"] = sent.count
    } catch {
        report["create_error"] = "\(error)"
    }
    report["sent_ids"] = sent.map(\.id.uuidString)
    if let fetched = await fetchAll() {
        report["fetched"] = fetched.count
        report["all_synced"] = fetched.allSatisfy(\.synced)
        let byID = Dictionary(fetched.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        report["missing_or_changed"] = sent.filter { mine in byID[mine.id].map { same(mine, $0) } != true }.map(\.id.uuidString)
    }
    do {
        let since = Date().addingTimeInterval(-10 * 60 - 30)
        let filtered = try await client.fetchEntries(since: since, category: "mood")
        report["filtered"] = filtered.count
        report["filtered_ok"] = filtered.allSatisfy { $0.category == "mood" && $0.timestamp >= since.addingTimeInterval(-1) }
    } catch {
        report["filter_error"] = "\(error)"
    }
    // A batch the node cannot take whole: one metric above its scale. SyncManager marks every
    // entry synced when createEntries returns, so it must throw.
    let batch = [make(100), make(101, refused: true)]
    do {
        try await client.createEntries(batch)
        report["refused_batch"] = "taken as success"
    } catch {
        report["refused_batch"] = "threw \(error)"
    }
    report["refused_batch_ids"] = batch.map(\.id.uuidString)
default:
    print("unknown mode \(arguments[3])")
    exit(2)
}
let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
print(String(decoding: json, as: UTF8.self))
