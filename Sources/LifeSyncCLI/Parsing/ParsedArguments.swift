/// A command line split into options and positionals, checked against a `CommandSpec`.
struct ParsedArguments {
    private(set) var values: [String: [String]] = [:]
    private(set) var positionals: [String] = []
    var wantsHelp = false
    let spec: CommandSpec

    /// Parses `arguments` (after the command name). Options may come before or after the
    /// positionals; `--` ends the options; `--name=value` works for options that take a value.
    init(_ arguments: [String], spec: CommandSpec) throws(CLIError) {
        self.spec = spec
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("--") || argument == "-" {
                if !optionsEnded, argument.hasPrefix("-"), argument != "-", argument.count > 1, Double(argument) == nil {
                    throw CLIError.usage("unknown option \(argument) for '\(spec.name)'", command: spec)
                }
                positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            if argument == "--help" { wantsHelp = true; continue }
            var name = argument
            var inlineValue: String?
            if let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                inlineValue = String(argument[argument.index(after: eq)...])
            }
            guard let option = spec.options.first(where: { $0.name == name }) else {
                throw CLIError.usage("unknown option \(name) for '\(spec.name)'", command: spec)
            }
            switch option.kind {
            case .flag:
                if inlineValue != nil { throw CLIError.usage("\(name) takes no value", command: spec) }
                values[name] = ["true"]
            case .value, .repeated:
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw CLIError.usage("\(name) needs a value (\(option.valueName))", command: spec) }
                    value = arguments[index]
                    index += 1
                }
                if option.kind == .value, values[name] != nil {
                    throw CLIError.usage("\(name) given more than once", command: spec)
                }
                values[name, default: []].append(value)
            }
        }
        if wantsHelp { return }
        let required = spec.positionals.count - spec.optionalPositionals
        if positionals.count < required {
            throw CLIError.usage("missing \(spec.positionals[positionals.count])", command: spec)
        }
        if positionals.count > spec.positionals.count {
            throw CLIError.usage("unexpected argument '\(positionals[spec.positionals.count])'", command: spec)
        }
    }

    func flag(_ name: String) -> Bool { values[name] != nil }

    func value(_ name: String) -> String? { values[name]?.last }

    func all(_ name: String) -> [String] { values[name] ?? [] }

    func positional(_ index: Int) -> String? { index < positionals.count ? positionals[index] : nil }

    /// An integer option within `range`, or `defaultValue` when absent.
    func integer(_ name: String, default defaultValue: Int, range: ClosedRange<Int>) throws(CLIError) -> Int {
        guard let text = value(name) else { return defaultValue }
        guard let number = Int(text), range.contains(number) else {
            throw CLIError.refused("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return number
    }

    /// A number option, or nil when absent.
    func number(_ name: String) throws(CLIError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite else {
            throw CLIError.refused("\(name): '\(text)' is not a number")
        }
        return number
    }
}
