/// `GET /api/entries` (the document's filters) and `POST /api/entries` (one entry or a batch).
import LifeSync
import LifeSyncHTTP

extension LifeLogAPI {
    func listEntries(_ request: HTTPRequest, _ presentation: EntryPresentation) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: Self.filterParameters.union(["limit", "offset", "before"]))
        var query = try Self.filter(request)
        query.limit = try Self.integer(request, "limit", default: EntryQuery.defaultLimit, range: 0...Self.maximumLimit)
        query.offset = try Self.integer(request, "offset", default: 0, range: 0...Int(Int32.max))
        query.before = try request.parameter("before").map(entryKey)
        return .json(200, .array(try replica.entries(matching: query).map(presentation.json)))
    }

    /// `before=TIMESTAMP,ID`: the last entry of the page read (its `timestamp` and `id` as
    /// listed), after which the next page starts; whether that entry still exists or not.
    private func entryKey(_ text: String) throws -> EntryQuery.Key {
        let parts = text.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
        let refused = { (why: String) in HTTPError(400, "before: \(why), as TIMESTAMP,ID (a listed entry's): '\(text.prefix(100))'") }
        guard parts.count == 2, !parts[1].isEmpty, parts[1].utf8.count <= 128 else { throw refused("expected a time and an ID") }
        let timestamp: Timestamp
        do { timestamp = try Timestamp(iso8601: String(parts[0])) } catch { throw refused("not an ISO 8601 time with zone (\(error.reason))") }
        return EntryQuery.Key(timestamp: timestamp, id: try replica.entryID(addressedBy: String(parts[1])))
    }

    /// The filters of `GET /api/entries`, shared by `GET /api/export`.
    static let filterParameters: Set<String> = ["since", "until", "category", "source", "tag", "search", "has"]

    static func filter(_ request: HTTPRequest) throws(HTTPError) -> EntryQuery {
        var query = EntryQuery()
        query.since = try time(request, "since", endOfDay: false)
        query.until = try time(request, "until", endOfDay: true)
        query.category = request.parameter("category")
        query.source = request.parameter("source")
        query.tag = request.parameter("tag")
        query.search = request.parameter("search")
        switch request.parameter("has") {
        case nil: break
        case "location": query.hasLocation = true
        case let other?: throw HTTPError(400, "has: the one field it takes is location, not '\(other.prefix(40))'")
        }
        return query
    }

    /// An ISO 8601 instant, or a bare `YYYY-MM-DD` meaning that UTC day's start (`since`) or its
    /// last millisecond (`until`), so `?since=2026-11-22&until=2026-11-22` is that whole day.
    static func time(_ request: HTTPRequest, _ name: String, endOfDay: Bool) throws(HTTPError) -> Timestamp? {
        guard let text = request.parameter(name) else { return nil }
        let bareDate = text.utf8.count == 10 && !text.contains("T")
        do {
            let time = try Timestamp(iso8601: bareDate ? text + "T00:00:00Z" : text)
            return bareDate && endOfDay ? Timestamp(millisecondsSince1970: time.millisecondsSince1970 + 86_399_999) : time
        } catch {
            throw HTTPError(400, "\(name): not an ISO 8601 time with zone nor a date YYYY-MM-DD (\(error.reason)): '\(text.prefix(60))'")
        }
    }

    static func integer(_ request: HTTPRequest, _ name: String, default value: Int, range: ClosedRange<Int>) throws(HTTPError) -> Int {
        guard let text = request.parameter(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw HTTPError(400, "\(name): expected a whole number in \(range.lowerBound)…\(range.upperBound), got '\(text.prefix(40))'")
        }
        return number
    }

    /// One entry (an object) or a batch (an array). Each item is validated like `lifesync add`
    /// (absent fields take this node's defaults); a batch answers a status per item, and with
    /// `?atomic=true` writes all or nothing.
    ///
    /// A batch with a refused item never answers 2xx: a client that checks for success (the
    /// LifeLog app's `createEntries` tests `200..<300` and marks every entry synced) must not
    /// take it for one. Without `atomic` it is 422 — the body was understood, some items could
    /// not be taken — and the valid items are stored, listed under `stored`; with `atomic`, 400
    /// and nothing stored. Retrying the whole batch is safe: an item whose ID is stored with the
    /// same content answers `already present`, so nothing is written twice.
    func postEntries(_ request: HTTPRequest, wrote: inout Bool) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: ["atomic"])
        let atomic: Bool
        switch request.parameter("atomic") {
        case nil, "false", "0": atomic = false
        case "true", "1", "": atomic = true
        case let other?: throw HTTPError(400, "atomic: expected true or false, got '\(other.prefix(40))'")
        }
        let body = try JSONValue.parse(bytes: request.body)
        let items: [JSONValue]
        let batch: Bool
        switch body {
        case .array(let array):
            guard !array.isEmpty else { throw HTTPError(400, "the batch is empty") }
            guard array.count <= Self.maximumBatch else { throw HTTPError(413, "the batch has \(array.count) entries; at most \(Self.maximumBatch) are accepted") }
            (items, batch) = (array, true)
        case .object:
            (items, batch) = ([body], false)
        default:
            throw HTTPError(400, "the body must be an entry (a JSON object) or an array of entries")
        }
        // As `lifesync add` takes them: LifeLog's own forms too, so the Drafts action's bare
        // `UUID.make()` becomes the same `lifelog_…` ID here as on every way in. An item without
        // an `id` but with its `timestamp` gets the ID `import` gives the same record (from its
        // content), so a retried request finds the entry it wrote instead of writing another.
        let defaults = replica.addDefaults()
        var derived = defaults
        derived.derivesAbsentID = true
        let validated = items.map { item in
            let timed = item["timestamp"].map { $0 != .null } ?? false
            return Result { () throws(ValidationError) in try LogEntry.validated(from: item, defaults: timed ? derived : defaults) }
        }
        let outcomes = try replica.addBatch(validated, atomic: atomic)
        wrote = outcomes.contains(.created)
        if !batch {
            switch outcomes[0] {
            case .created: return .json(201, Self.result(of: validated[0], outcomes[0], index: nil))
            case .alreadyPresent: return .json(200, Self.result(of: validated[0], outcomes[0], index: nil))
            case .refused(let error): return Self.invalid(error)
            case .notWritten: preconditionFailure("one entry is never held back by another")
            }
        }
        let count = { (wanted: (BatchOutcome) -> Bool) in Double(outcomes.filter(wanted).count) }
        let refused = count { if case .refused = $0 { return true } else { return false } }
        let summary = JSONValue.object([
            ("created", .number(count { $0 == .created })),
            ("already_present", .number(count { $0 == .alreadyPresent })),
            ("refused", .number(refused)),
            ("atomic", .bool(atomic)),
            ("stored", .array(zip(validated, outcomes).compactMap { item, outcome in
                guard outcome == .created || outcome == .alreadyPresent, case .success(let entry) = item else { return nil }
                return .string(entry.id)
            })),
            ("results", .array(zip(validated, outcomes).enumerated().map { Self.result(of: $1.0, $1.1, index: $0) })),
        ])
        return .json(refused == 0 ? 200 : atomic ? 400 : 422, summary)
    }

    private static func result(of item: Result<LogEntry, ValidationError>, _ outcome: BatchOutcome, index: Int?) -> JSONValue {
        var members: [(String, JSONValue)] = index.map { [("index", .number(Double($0)))] } ?? []
        if case .success(let entry) = item { members.append(("id", .string(entry.id))) }
        switch outcome {
        case .created: members.append(("status", .string("created")))
        case .alreadyPresent: members.append(("status", .string("already present")))
        case .notWritten: members.append(("status", .string("not written (atomic batch with refused items)")))
        case .refused(let error):
            members += [("status", .string("refused")), ("field", .string(error.field)), ("reason", .string(error.reason)),
                        ("error", .string(error.description))]
        }
        return .object(members)
    }
}

extension LifeLogAPI {
    /// `GET /api/entries/stats` over the entries the filters select, as `lifesync stats` does
    /// (one day's summary, a month's); `?per_day=true` adds each metric's summary per day
    /// (`metrics_by_day`: name → day → count, average, min, max), what a chart draws. Days are
    /// UTC's, or with `?utc_offset=MINUTES` (east of UTC, −720…840: a browser's
    /// `-new Date().getTimezoneOffset()`) the days of a clock that far ahead of UTC.
    func stats(_ request: HTTPRequest) throws -> HTTPResponse {
        try Self.refuseParameters(request, allowed: Self.filterParameters.union(["per_day", "utc_offset"]))
        let filter = try Self.filter(request)
        let days = request.parameter("utc_offset") == nil ? StatsDays.utc
            : .offset(minutes: try Self.integer(request, "utc_offset", default: 0, range: StatsDays.offsetRange))
        guard case .object(var members) = try replica.stats(matching: filter, days: days).json else { throw HTTPError(500, "stats are an object") }
        switch request.parameter("per_day") {
        case nil, "false": break
        case "true":
            var byName: [(String, [(String, JSONValue)])] = []
            for row in try replica.metricsByDay(matching: filter, days: days) {
                let summary = JSONValue.object([("count", .number(Double(row.metric.count))), ("average", .number(row.metric.average)),
                                                ("min", .number(row.metric.minimum)), ("max", .number(row.metric.maximum))])
                if byName.last?.0 == row.metric.name { byName[byName.count - 1].1.append((row.day, summary)) } else { byName.append((row.metric.name, [(row.day, summary)])) }
            }
            members.append(("metrics_by_day", .object(byName.map { ($0.0, .object($0.1)) })))
        case let other?:
            throw HTTPError(400, "per_day: expected true or false, got '\(other.prefix(40))'")
        }
        return .json(200, .object(members))
    }
}
