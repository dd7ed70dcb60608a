/// How a command ends when it cannot do what was asked. One rule for every command:
/// exit 2 when the command line cannot be understood, exit 1 when it is understood but what it
/// gives is refused or not found.
enum CLIError: Error {
    /// Exit 2, with the usage line: an unknown command or option, a missing, extra or repeated
    /// argument, a required option left out, options that need or exclude each other.
    case usage(String, command: CommandSpec?)
    /// Exit 1: a value of the wrong form or out of range, bad JSON, a bad record, a file that
    /// cannot be read, something not found.
    case refused(String)

    var exitCode: Int32 {
        switch self {
        case .usage: return 2
        case .refused: return 1
        }
    }

    var message: String {
        switch self {
        case .usage(let message, let command):
            return "lifesync: \(message)" + (command.map { "\nUsage: \($0.usage)\nSee: lifesync \($0.name) --help" } ?? "")
        case .refused(let message):
            return "lifesync: \(message)"
        }
    }
}
