import LifeSync
import LifeSyncRuntime

/// Pairing: this node's pairing string, trusting and untrusting peers, and what it knows of them.
extension LifeSyncCommandLine {
    static let idCommand = Command(
        spec: CommandSpec(
            name: "id", summary: "this node's pairing string: node ID, key fingerprint, addresses",
            options: [CommandSpec.dbOption, CommandSpec.jsonFlag,
                      OptionSpec(name: "--addr", kind: .repeated, valueName: "HOST:PORT", help: "where peers reach this node (up to 8)"),
                      OptionSpec(name: "--certificate", kind: .flag, help: "print the node's peer certificate (PEM), self-signed, what it presents to peers"),
                      OptionSpec(name: "--https-ca", kind: .flag, help: "print the root certificate (PEM) HTTPS clients trust (serve --http-tls)"),
                      OptionSpec(name: "--https-profile", kind: .flag, help: "print an Apple configuration profile (.mobileconfig) installing that root")],
            details: """
            Makes the node's key (<replica>.key, mode 0600) if it has none yet. Give the string to the
            other node's `lifesync trust`, and that node's string to this one's.
            --https-ca and --https-profile make the node's HTTPS authority (<replica>.https-ca.key,
            mode 0600) if it has none yet: the root that issues the certificate serve --http-tls
            presents. Install the profile on an iPhone, then turn on full trust for it in Settings →
            General → About → Certificate Trust Settings.
            Example: lifesync id --https-profile --db mac.sqlite > lifesync.mobileconfig
            Example: lifesync trust "$(lifesync id --db phone.sqlite --addr 192.168.1.20:7002)" --db mac.sqlite
            """),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let https = ["--certificate", "--https-ca", "--https-profile"].filter { arguments.flag($0) }
            guard https.count <= 1 else { throw CLIError.usage("\(https.joined(separator: " and ")): give one", command: arguments.spec) }
            if arguments.flag("--https-ca") || arguments.flag("--https-profile") {
                let authority = try HTTPSAuthority.loadOrCreate(path: HTTPSAuthority.path(forReplica: replica.path), nodeID: replica.identity.nodeID)
                var text = arguments.flag("--https-ca") ? try authority.certificatePEM()
                    : try HTTPSProfile.mobileconfig(authority: authority, nodeID: replica.identity.nodeID)
                while text.hasSuffix("\n") { text.removeLast() }
                context.console.print(text)
                return 0
            }
            let key = try NodeKey.loadOrCreate(path: NodeKey.path(forReplica: replica.path), nodeID: replica.identity.nodeID)
            if arguments.flag("--certificate") {
                // The peer certificate, whose one name is the node ID; HTTPS clients trust --https-ca.
                var pem = try key.certificatePEM()
                while pem.hasSuffix("\n") { pem.removeLast() }
                context.console.print(pem)
                return 0
            }
            let addresses = arguments.all("--addr")
            guard addresses.count <= PairingString.maximumAddresses else { throw CLIError.refused("at most \(PairingString.maximumAddresses) --addr") }
            if let bad = addresses.first(where: { !PairingString.isAddress($0) }) { throw CLIError.refused("--addr '\(bad)' is not host:port") }
            let pairing = PairingString(nodeID: replica.identity.nodeID, fingerprint: key.fingerprint, addresses: addresses)
            if arguments.flag("--json") {
                context.console.print(JSONValue.object([
                    ("node_id", .string(pairing.nodeID)), ("role", .string(pairing.role.rawValue)),
                    ("fingerprint", .string(pairing.fingerprint.hex)), ("addresses", .array(addresses.map(JSONValue.string))),
                    ("pairing", .string(pairing.description)),
                ]).prettyText)
            } else {
                context.console.print(pairing.description)
            }
            return 0
        })

    static let trustCommand = Command(
        spec: CommandSpec(
            name: "trust", summary: "trust a peer by its pairing string, or accept a pending one",
            positionals: ["PAIRING-STRING"], optionalPositionals: 1,
            options: [CommandSpec.dbOption,
                      OptionSpec(name: "--accept", kind: .value, valueName: "NODE_ID", help: "trust the pending key that claimed NODE_ID"),
                      OptionSpec(name: "--code", kind: .value, valueName: "CODE",
                                 help: "with --accept: the six-digit code the other device shows (lifesync pair, or lifesync peers there); refused if it differs"),
                      OptionSpec(name: "--key", kind: .value, valueName: "HEX",
                                 help: "with --accept, instead of --code: the first 16 or more hex digits of the key lifesync id prints on that device"),
                      OptionSpec(name: "--replace", kind: .flag, help: "the node ID is trusted under another key (the device was reset): trust the new key, untrust the old"),
                      OptionSpec(name: "--again", kind: .flag, help: "trust a key that was untrusted here before (refused otherwise)")],
            details: """
            The peer's addresses become dial targets: a running node (lifesync serve) picks up the new
            trust within about a second and dials them, no --peer or restart needed, and it takes
            the peer's connections from then on. LAN discovery puts the address it hears the peer
            at first (only if the peer announces the key trusted here).
            A key untrusted here before is refused (an old pairing string must not undo an untrust)
            unless --again says it is on purpose. A node ID already trusted under another key is
            refused, naming both keys, unless --replace says the device really has a new key. This
            node's own key is never trusted as another node. --accept trusts a pending key only once
            it is compared: --code (the code both devices show for the two keys) or --key (the
            fingerprint's start); three wrong codes forget the keys claiming that ID.
            Example: lifesync trust 'lifesync://mac_…?key=…&addr=192.168.1.21:7002' --db phone.sqlite
            """),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let own = try NodeKey.loadOrCreate(path: NodeKey.path(forReplica: replica.path), nodeID: replica.identity.nodeID).fingerprint
            if let nodeID = arguments.value("--accept") {
                guard arguments.positional(0) == nil else { throw CLIError.usage("give a pairing string or --accept, not both", command: nil) }
                let peer = try acceptPending(nodeID, replica: replica, own: own, arguments)
                context.console.print("trusted \(peer.nodeID) (\(peer.role.rawValue)), key \(peer.fingerprint.hex.prefix(16))…")
                return 0
            }
            for option in ["--code", "--key"] where arguments.value(option) != nil {
                throw CLIError.usage("\(option) goes with --accept NODE_ID (a pairing string carries the whole key)", command: nil)
            }
            guard let text = arguments.positional(0) else { throw CLIError.usage("give a pairing string (lifesync id on the peer) or --accept NODE_ID", command: nil) }
            let pairing = try PairingString(parsing: text)
            try replica.trust(pairing.peer(trustedAt: replica.now), again: arguments.flag("--again"), replacing: arguments.flag("--replace"), ownKey: own)
            context.console.print("trusted \(pairing.nodeID) (\(pairing.role.rawValue)), key \(pairing.fingerprint.hex.prefix(16))…"
                                  + (pairing.addresses.isEmpty ? "" : ", at \(pairing.addresses.joined(separator: " "))"))
            return 0
        })

    /// `trust --accept NODE_ID`: the pending key claiming it whose code (or fingerprint) the user
    /// compared, trusted. Without a comparison nothing is trusted; a code that fits no claiming
    /// key is counted (Replica.noteWrongCode).
    private static func acceptPending(_ nodeID: String, replica: Replica, own: SHA256.Digest, _ arguments: ParsedArguments) throws -> TrustedPeer {
        let claims = try replica.pendingPeers().filter { $0.claimedNodeID == nodeID }
        guard !claims.isEmpty else { throw CLIError.refused("no pending peer claimed \(nodeID) (see lifesync peers)") }
        let match: PendingPeer
        switch (arguments.value("--code"), arguments.value("--key")) {
        case (let typed?, nil):
            guard let found = claims.first(where: { PairingCode(own, $0.fingerprint).matches(typed) }) else {
                let (count, forgotten) = try replica.noteWrongCode(nodeID: nodeID)
                throw CLIError.refused("code \(typed) is not the code of \(nodeID)'s key here: the devices are not talking to each other "
                                       + "directly (or the code was mistyped); nothing trusted. "
                                       + (forgotten ? "That is \(count) wrong codes: the keys claiming \(nodeID) are forgotten; your device is listed again when it next connects."
                                                    : "\(count) of \(Replica.wrongCodeLimit) wrong codes."))
            }
            match = found
        case (nil, let prefix?):
            let hex = prefix.lowercased().filter { $0 != ":" && $0 != " " }
            guard hex.count >= 16, hex.count <= 64, hex.allSatisfy(\.isHexDigit) else {
                throw CLIError.usage("--key: give at least the first 16 hex digits of the key lifesync id prints on that device", command: nil)
            }
            guard let found = claims.first(where: { $0.fingerprint.hex.hasPrefix(hex) }) else {
                throw CLIError.refused("no pending key claiming \(nodeID) starts with \(hex.prefix(16))…: another device is claiming its ID, "
                                       + "or this is not the key lifesync id prints there; nothing trusted")
            }
            match = found
        case (nil, nil):
            throw CLIError.refused("compare before trusting: add --code CODE (the code \(nodeID) shows: lifesync pair there, or lifesync peers) "
                                   + "or --key HEX (the start of the key lifesync id prints there); lifesync peers shows this side's code")
        default:
            throw CLIError.usage("give --code or --key, not both", command: nil)
        }
        guard let peer = try replica.acceptPending(nodeID: nodeID, fingerprint: match.fingerprint, again: arguments.flag("--again"),
                                                   replacing: arguments.flag("--replace"), ownKey: own) else {
            throw CLIError.refused("no pending peer claimed \(nodeID) (see lifesync peers)")
        }
        return peer
    }

    static let untrustCommand = Command(
        spec: CommandSpec(name: "untrust", summary: "stop trusting a peer (its open sessions close within about a second)",
                          positionals: ["NODE_ID"], options: [CommandSpec.dbOption]),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            let nodeID = arguments.positional(0)!
            guard try replica.untrust(nodeID: nodeID) else { throw CLIError.refused("\(nodeID) is not trusted") }
            context.console.print("no longer trusting \(nodeID)")
            return 0
        })
}
