import Glibc
import LifeSyncCLI

// A closed pipe (`lifesync list | head`) must end the write, not the process with SIGPIPE.
signal(SIGPIPE, SIG_IGN)
var environment: [String: String] = [:]
var pointer = environ
while let entry = pointer.pointee {
    let text = String(cString: entry)
    if let eq = text.firstIndex(of: "=") { environment[String(text[..<eq])] = String(text[text.index(after: eq)...]) }
    pointer += 1
}
exit(LifeSyncCommandLine.run(Array(CommandLine.arguments.dropFirst()), console: .standard(), environment: environment))
