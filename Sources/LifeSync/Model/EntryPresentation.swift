/// How the entries of `/api/entries` are written for one client, chosen by the key it bears
/// (`lifesync keys create NAME --presentation lifelog-app`): the key names the client, so an app
/// that cannot be rebuilt is answered in the form its model decodes, while every other client
/// keeps the document's.
///
/// - `lifesync`: the LifeLog document's JSON as stored (`LogEntry.json`): IDs such as
///   `phone_550e8400-…`, snake_case names, times with milliseconds.
/// - `lifelog-app`: what the LifeLog iOS app's `LogEntry` (`id: UUID`, camelCase properties,
///   no `CodingKeys`, a `synced` flag) decodes with a plain ISO 8601 `JSONDecoder`: `id` is the
///   UUID of the entry's ID in upper case, as `UUID().uuidString` writes it; `recordedAt`,
///   `deviceId` and `data.location.placeName` are camelCase (`data.metric.scale_min` and
///   `scale_max` stay, the model maps them); times are whole seconds (`…T10:30:00Z`: Apple's
///   `.iso8601` strategy refuses fractional seconds; the milliseconds are dropped in the
///   answer only); `synced` is `true` (the entry is on the node). Such an `id` addresses the
///   entry on every route (`Replica.entryID(addressedBy:)`). Two entries whose IDs share a UUID
///   under different prefixes show the same `id` to this client; the IDs this node makes never
///   do (each is a fresh random UUID), only a client's choice can.
package enum EntryPresentation: String, CaseIterable, Sendable {
    case lifeSync = "lifesync"
    case lifeLogApp = "lifelog-app"

    /// The names `--presentation` takes, for messages.
    package static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
