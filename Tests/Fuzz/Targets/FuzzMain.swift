// The one entry point of the fuzz binary. Every target is compiled into one binary (one build of
// the core serves them all, see Tests/Fuzz/run.sh); it runs the target its name ends with
// (`run.sh` links `fuzz-session`, `fuzz-http`, … to it), or the one LIFESYNC_FUZZ_TARGET names.
// With LIFESYNC_FUZZ_SEEDS=DIR it writes the session targets' seed inputs there and exits.

import Glibc

/// The targets, by the name `run.sh` and the binary's links use.
enum FuzzTarget: String, CaseIterable {
    case frame, entry, session, discovery, http
    case sessionWithoutHello = "session-nohello"

    /// The target this run fuzzes, chosen once in `LLVMFuzzerInitialize`.
    nonisolated(unsafe) static var chosen: FuzzTarget = .session

    /// The target named by LIFESYNC_FUZZ_TARGET, else by what the binary was called after
    /// `fuzz-`; nil when neither names one.
    static func named(program: String) -> FuzzTarget? {
        if let variable = getenv("LIFESYNC_FUZZ_TARGET") { return FuzzTarget(rawValue: String(cString: variable)) }
        let base = program.split(separator: "/").last.map(String.init) ?? program
        guard base.hasPrefix("fuzz-") else { return nil }
        var name = base.dropFirst("fuzz-".count)
        if name.hasSuffix("-head") { name = name.dropLast("-head".count) }   // FUZZ_SOURCE=head builds
        return FuzzTarget(rawValue: String(name))
    }

    func run(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
        switch self {
        case .frame: fuzzFrame(data, size)
        case .entry: fuzzEntry(data, size)
        case .session, .sessionWithoutHello: fuzzSession(data, size)
        case .discovery: fuzzDiscovery(data, size)
        case .http: fuzzHTTP(data, size)
        }
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    if let directory = getenv("LIFESYNC_FUZZ_SEEDS") {
        do { try writeSeeds(to: String(cString: directory)) } catch { fatalError("cannot build seeds: \(error)") }
        exit(0)
    }
    let program = argv.pointee?.pointee.map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget.named(program: program) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        fputs("\(program): no fuzz target: run it as fuzz-TARGET or with LIFESYNC_FUZZ_TARGET set, TARGET one of \(names)\n", stderr)
        _exit(2)  // not exit: the leak checker would report what the process holds
    }
    FuzzTarget.chosen = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.chosen.run(data, size)
}
