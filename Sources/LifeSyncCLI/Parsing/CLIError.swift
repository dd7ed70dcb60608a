/// How a command ends when it cannot do what was asked.
enum CLIError: Error {
    /// The command line itself is wrong (exit 2); the usage line is shown.
    case usage(String, command: CommandSpec?)
    /// The input was refused or something was not found (exit 1).
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
