import LifeSync

extension LifeSyncCommandLine {
    static let addCommand = Command(
        spec: CommandSpec(
            name: "add", summary: "write a new entry and print its ID",
            options: [
                CommandSpec.dbOption,
                OptionSpec(name: "--json", kind: .value, valueName: "JSON|-", help: "the whole entry as JSON (- reads stdin)"),
                OptionSpec(name: "--category", kind: .value, valueName: "C", help: "mood, work, location, health, note, …"),
                OptionSpec(name: "--text", kind: .value, valueName: "T", help: "free text"),
                OptionSpec(name: "--metric", kind: .value, valueName: "NAME=VALUE", help: "a measured value, e.g. mood=7"),
                OptionSpec(name: "--scale", kind: .value, valueName: "MIN..MAX", help: "the metric's scale, e.g. 1..10"),
                OptionSpec(name: "--unit", kind: .value, valueName: "U", help: "the metric's unit"),
                OptionSpec(name: "--tag", kind: .repeated, valueName: "T", help: "a tag (repeatable)"),
                OptionSpec(name: "--lat", kind: .value, valueName: "X", help: "latitude, -90…90"),
                OptionSpec(name: "--lon", kind: .value, valueName: "Y", help: "longitude, -180…180"),
                OptionSpec(name: "--accuracy", kind: .value, valueName: "M", help: "location accuracy in metres"),
                OptionSpec(name: "--altitude", kind: .value, valueName: "M", help: "altitude in metres"),
                OptionSpec(name: "--place", kind: .value, valueName: "NAME", help: "place name"),
                OptionSpec(name: "--timestamp", kind: .value, valueName: "ISO", help: "when it happened (default: now), ISO 8601 with zone"),
            ],
            details: """
            Examples:
              lifesync add --category mood --metric mood=7 --scale 1..10 --text "slept well" --tag morning
              lifesync add --json '{"category": "note", "data": {"text": "hello"}}'
            """),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let json: JSONValue
            if let text = arguments.value("--json") {
                let flagFields = arguments.spec.options.map { $0.name }.filter { $0 != "--json" && $0 != "--db" && arguments.value($0) != nil }
                if let first = flagFields.first {
                    throw CLIError.usage("--json cannot be combined with \(first)", command: arguments.spec)
                }
                json = try parseJSONArgument(text, context: context, what: "--json")
            } else {
                json = try entryJSON(fromFlags: arguments)
            }
            let entry = try LogEntry.validated(from: json, defaults: replica.addDefaults())
            // An entry of nothing would sit in every list and export as a blank line.
            guard !entry.isEmpty else {
                if arguments.value("--json") != nil { throw CLIError.refused("--json: the entry has no content; give a category or data") }
                throw CLIError.usage("nothing to add: give --category, --text, --metric, --tag or --lat and --lon (or --json)", command: arguments.spec)
            }
            try replica.add(entry)
            context.console.print(entry.id)
            return 0
        })

    /// Builds the entry JSON from `add`'s flags, so the same validation applies to both forms.
    static func entryJSON(fromFlags arguments: ParsedArguments) throws -> JSONValue {
        var members: [(String, JSONValue)] = []
        var data: [(String, JSONValue)] = []
        if let category = arguments.value("--category") { members.append(("category", .string(category))) }
        if let timestamp = arguments.value("--timestamp") { members.append(("timestamp", .string(timestamp))) }
        if let text = arguments.value("--text") { data.append(("text", .string(text))) }
        if let metricText = arguments.value("--metric") {
            guard let eq = metricText.firstIndex(of: "="), let value = Double(metricText[metricText.index(after: eq)...]) else {
                throw CLIError.refused("--metric: expected NAME=VALUE with a number, got '\(metricText)'")
            }
            var metric: [(String, JSONValue)] = [("name", .string(String(metricText[..<eq]))), ("value", .number(value))]
            if let unit = arguments.value("--unit") { metric.append(("unit", .string(unit))) }
            if let scale = arguments.value("--scale") {
                let parts = scale.components(separatedBy: "..")
                guard parts.count == 2, let low = Double(parts[0]), let high = Double(parts[1]) else {
                    throw CLIError.refused("--scale: expected MIN..MAX, got '\(scale)'")
                }
                metric += [("scale_min", .number(low)), ("scale_max", .number(high))]
            }
            data.append(("metric", .object(metric)))
        } else if arguments.value("--scale") != nil || arguments.value("--unit") != nil {
            throw CLIError.usage("--scale and --unit describe a --metric; give --metric NAME=VALUE too", command: arguments.spec)
        }
        let lat = try arguments.number("--lat"), lon = try arguments.number("--lon")
        if lat != nil || lon != nil {
            guard let lat, let lon else { throw CLIError.usage("--lat and --lon go together", command: arguments.spec) }
            var location: [(String, JSONValue)] = [("latitude", .number(lat)), ("longitude", .number(lon))]
            if let accuracy = try arguments.number("--accuracy") { location.append(("accuracy", .number(accuracy))) }
            if let altitude = try arguments.number("--altitude") { location.append(("altitude", .number(altitude))) }
            if let place = arguments.value("--place") { location.append(("place_name", .string(place))) }
            data.append(("location", .object(location)))
        } else if arguments.value("--accuracy") != nil || arguments.value("--altitude") != nil || arguments.value("--place") != nil {
            throw CLIError.usage("--accuracy, --altitude and --place describe a location; give --lat and --lon too", command: arguments.spec)
        }
        let tags = arguments.all("--tag")
        if !tags.isEmpty { data.append(("tags", .array(tags.map(JSONValue.string)))) }
        members.append(("data", .object(data)))
        return .object(members)
    }

    /// Parses a JSON argument, or stdin when it is `-`.
    static func parseJSONArgument(_ text: String, context: CommandContext, what: String) throws -> JSONValue {
        do {
            if text == "-" {
                guard let bytes = context.console.readInput() else { throw CLIError.refused("\(what): cannot read standard input") }
                return try JSONValue.parse(bytes: bytes)
            }
            return try JSONValue.parse(text)
        } catch let error as JSONParseError {
            throw CLIError.refused("\(what): \(error)")
        }
    }
}
