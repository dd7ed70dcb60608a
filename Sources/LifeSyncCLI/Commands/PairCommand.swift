import Glibc
import LifeSync
import LifeSyncRuntime

/// `lifesync pair HOST:PORT`: pairing by numeric comparison, as Bluetooth does, instead of copying
/// a 64-digit key. This node dials the other (serving) node, and both show a six-digit code made
/// from the two keys (`PairingCode`): here on the terminal, there in `lifesync peers`. A device
/// in the middle would have to show each side a code of its own key, so the codes would differ.
/// Trust is recorded only on both yeses: the other device's user accepts with the code
/// (`trust --accept NODE --code CODE`), and this side trusts the other only once its user said the
/// codes match **and** the other node answered as one that trusts this node.
extension LifeSyncCommandLine {
    static let pairCommand = Command(
        spec: CommandSpec(
            name: "pair", summary: "pair with a serving node by comparing a six-digit code on both devices",
            positionals: ["HOST:PORT"],
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--code", kind: .value, valueName: "CODE",
                                 help: "the code the other device shows (else asked at the terminal)"),
                      OptionSpec(name: "--timeout", kind: .value, valueName: "S", help: "how long to wait for the other device to accept (default 120)"),
                      OptionSpec(name: "--again", kind: .flag, help: "the other node's key was untrusted here before: trust it again"),
                      OptionSpec(name: "--replace", kind: .flag, help: "its node ID is trusted here under another key (the device was reset): trust the new key")],
            details: """
            The other node must be serving (lifesync serve --listen …). This prints a code; on the other
            device `lifesync peers` lists this node with a code. If they are the same, accept there with
            the command this prints; answer yes here (or give --code). Nothing is trusted on either side
            until both have confirmed.
            Example: lifesync pair 192.168.1.20:7002 --db mac.sqlite
            """),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let address = try SocketAddress(parsing: arguments.positional(0)!)
            let timeout = try arguments.number("--timeout") ?? 120
            guard timeout >= 1, timeout <= 3_600 else { throw CLIError.refused("--timeout: 1 to 3600 seconds, got \(timeout)") }
            let key = try NodeKey.loadOrCreate(path: NodeKey.path(forReplica: replica.path), nodeID: replica.identity.nodeID)
            let pairing = try Pairing(replica: replica, key: key, address: address)

            let theirs = try pairing.introduce()
            guard theirs != key.fingerprint else { throw CLIError.refused("\(address) is this node itself") }
            let code = PairingCode(key.fingerprint, theirs)
            context.console.print("connected to \(address): its key is \(theirs.hex.prefix(16))…")
            context.console.print("pairing code: \(code)")
            context.console.print("On the other device, lifesync peers lists \(replica.identity.nodeID) with a code. If it is \(code), accept it there:")
            context.console.print("  lifesync trust --accept \(replica.identity.nodeID) --code \(String(code.description.filter { $0 != " " }))")

            // This side's yes: the code the user sees there is the one these two keys make here.
            if let typed = arguments.value("--code") {
                guard code.matches(typed) else {
                    throw CLIError.refused("code \(typed) is not \(code): the devices are not talking to each other directly "
                                           + "(or the code was mistyped); nothing trusted")
                }
            } else {
                guard isatty(0) == 1 else { throw CLIError.usage("not at a terminal: give --code CODE, the code the other device shows", command: nil) }
                context.console.print("Does the other device show \(code)? [y/N] ", newline: false)
                guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased().filter { !$0.isWhitespace }) else {
                    throw CLIError.refused("not confirmed; nothing trusted")
                }
            }

            // The other side's yes: it answers our HELLO with its own once its user accepted.
            context.console.print("waiting up to \(Int(timeout)) s for the other device to accept…")
            let deadline = MonotonicClock.seconds() + timeout
            while MonotonicClock.seconds() < deadline {
                switch try pairing.askToBeTrusted(expecting: theirs) {
                case .trusted(let hello):
                    try replica.trust(TrustedPeer(nodeID: hello.nodeID, role: hello.role, fingerprint: theirs, addresses: [address.description],
                                                  trustedAt: replica.now), again: arguments.flag("--again"), replacing: arguments.flag("--replace"),
                                      ownKey: key.fingerprint)
                    context.console.print("paired with \(hello.nodeID) (\(hello.role.rawValue)): each node now trusts the other")
                    return 0
                case .notYet:
                    usleep(1_000_000)
                }
            }
            throw CLIError.refused("the other device did not accept within \(Int(timeout)) s; nothing trusted here (run lifesync pair again)")
        })
}

/// The dialling side of `pair`: introduces this node (`TLSDialer.introduction`) and reads the
/// answer.
struct Pairing {
    enum Answer { case trusted(Hello), notYet }

    let tls: TLSContext
    let hello: [UInt8]
    let address: SocketAddress

    init(replica: Replica, key: NodeKey, address: SocketAddress) throws {
        tls = try TLSContext(key: key)
        hello = TLSDialer.introduction(of: replica.identity)
        self.address = address
    }

    /// Dials once so the other node notes this key as pending (with our node ID); returns the
    /// key it proved.
    func introduce() throws -> SHA256.Digest {
        let dialer = try TLSDialer(to: address, context: tls, timeout: 10)
        defer { dialer.close() }
        try dialer.send(hello)
        _ = try? dialer.nextMessage()  // ERROR not_trusted, or its HELLO if it trusts us already
        return dialer.peerKey
    }

    /// One attempt: the other node's HELLO if it trusts us now (and still proves `expected`).
    func askToBeTrusted(expecting expected: SHA256.Digest) throws -> Answer {
        guard let dialer = try? TLSDialer(to: address, context: tls, timeout: 10) else { return .notYet }
        defer { dialer.close() }
        guard dialer.peerKey == expected else {
            throw CLIError.refused("\(address) now proves another key (\(dialer.peerKey.hex.prefix(16))…) than the one whose code was compared; nothing trusted")
        }
        try dialer.send(hello)
        switch try dialer.nextMessage() {
        case .hello(let theirs)?: return .trusted(theirs)
        case .error(let code, _)? where code == ErrorCode.notTrusted.rawValue: return .notYet
        case .error(let code, let text)?: throw CLIError.refused("\(address) refused: error \(code): \(text)")
        case let other?: throw CLIError.refused("\(address) answered \(other) instead of HELLO or ERROR")
        case nil: return .notYet
        }
    }
}
