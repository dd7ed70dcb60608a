import Glibc
import LifeSync
import LifeSyncRuntime

/// Set by SIGINT/SIGTERM; the serve loop polls it every 100 ms.
nonisolated(unsafe) private var stopSignal: Int32 = 0

extension LifeSyncCommandLine {
    static let serveCommand = Command(
        spec: CommandSpec(
            name: "serve", summary: "run the node: listen for peers, dial peers, keep the replica in sync",
            options: [
                CommandSpec.dbOption,
                OptionSpec(name: "--listen", kind: .value, valueName: "HOST:PORT", help: "where to accept peers (port 0 picks one)"),
                OptionSpec(name: "--peer", kind: .repeated, valueName: "HOST:PORT", help: "a peer to dial and keep connected (repeatable)"),
                OptionSpec(name: "--no-discovery", kind: .flag, help: "do not announce this node on the LAN nor listen for others"),
                OptionSpec(name: "--receive-entries", kind: .flag, help: "on a watch: also receive entries from peers"),
                OptionSpec(name: "--keep-recordings", kind: .flag, help: "on a watch: keep recordings after the phone confirmed them"),
                OptionSpec(name: "--debounce-ms", kind: .value, valueName: "MS", help: "coalesce local writes for this long (default 500)"),
                OptionSpec(name: "--fallback-ms", kind: .value, valueName: "MS", help: "retry interval while something is pending (default 300000)"),
                OptionSpec(name: "--reconnect-max-ms", kind: .value, valueName: "MS", help: "cap of the reconnect backoff (default 30000)"),
                OptionSpec(name: "--log", kind: .value, valueName: "FILE", help: "append the log lines to FILE instead of printing them"),
                OptionSpec(name: "--http", kind: .value, valueName: "[HOST:]PORT", help: "serve the LifeLog HTTP API (a bare port: on 127.0.0.1)"),
                OptionSpec(name: "--http-max-upload", kind: .value, valueName: "BYTES", help: "the largest recording POST /api/recordings takes (default 10000000)"),
                OptionSpec(name: "--http-tls", kind: .flag, help: "serve the HTTP API over HTTPS, with a certificate from the node's own root (lifesync id --https-ca)"),
                OptionSpec(name: "--http-name", kind: .repeated, valueName: "NAME_OR_IP", help: "with --http-tls: another name or address the certificate carries (repeatable)"),
                OptionSpec(name: "--http-insecure", kind: .flag, help: "allow --http on a non-loopback address without TLS (keys and journal in clear)"),
            ],
            details: """
            Writes made with other lifesync commands to the same replica while it serves are noticed and
            synced within about a second. Trusted peers (lifesync trust) are dialled at their addresses
            too, and trust changes take effect within about a second, without a restart. Unless
            --no-discovery, a node listening on a non-loopback address announces itself by UDP broadcast
            (port 21047) on the interfaces it listens on and learns where its trusted peers are; nodes it
            does not trust are listed by lifesync peers, never dialled. A loopback listener announces nothing.
            --http serves the LifeLog HTTP API (lifesync keys create NAME makes the bearer keys) from the
            same loop, with /metrics and the /dashboard page; off by default. --http-max-upload bounds a
            recording uploaded with POST /api/recordings (default 10000000 bytes). --http-tls serves it over
            HTTPS (TLS 1.3) with a certificate the node's own root issues (lifesync id --https-ca prints the
            root, --https-profile a profile that installs it on an iPhone), for localhost, the host name
            and HOSTNAME.local, 127.0.0.1, ::1 and the --http address (on 0.0.0.0 or ::, every interface's),
            and each --http-name; it lasts 397 days and is renewed at start and while serving when less than
            30 are left or the names changed. Plain HTTP on an address other than loopback is refused
            unless --http-insecure.
            The node prints one line per meaningful event, or appends it to --log FILE (for a node run in
            the background); errors that stop it still go to stderr. SIGINT or SIGTERM shuts down cleanly.
            Example: lifesync serve --db phone.sqlite --listen 127.0.0.1:7002 --peer 127.0.0.1:7003
            """),
        run: { arguments, context in
            let replica = try context.openReplica(arguments)
            var configuration = try nodeConfiguration(arguments)
            let planted = try ServePlantedBugs.parse(context.environment)
            if !planted.isEmpty {
                context.console.error("WARNING: \(ServePlantedBugs.variable) is set: this node runs with deliberate protocol defects (test-only). Never use it with data you keep.")
                configuration.session.plantedBugs = planted
                replica.plantedBugs = planted
            }
            let trustedAddresses = try replica.trustedPeers().contains { !$0.addresses.isEmpty }
            let http = try httpAddress(arguments)
            var httpLimits = HTTPServer.Limits()
            if let text = arguments.value("--http-max-upload") {
                guard let bytes = Int(text), (1...HTTPServer.Limits.uploadCeiling).contains(bytes) else {
                    throw CLIError.usage("--http-max-upload: expected a number of bytes in 1…\(HTTPServer.Limits.uploadCeiling), got '\(text.prefix(40))'",
                                         command: arguments.spec)
                }
                httpLimits.maximumUpload = bytes
            }
            guard arguments.value("--listen") != nil || !configuration.peers.isEmpty || trustedAddresses || http != nil else {
                throw CLIError.usage("give --listen HOST:PORT, --peer HOST:PORT, --http PORT, or several (or trust a peer with an address)", command: arguments.spec)
            }
            for peer in configuration.peers { _ = try SocketAddress(parsing: peer) }
            let lock: ServeLock
            do { lock = try ServeLock.acquire(replicaPath: replica.path) } catch { throw CLIError.refused("\(error)") }
            defer { withExtendedLifetime(lock) {} }
            let role = replica.identity.role.rawValue
            let console = context.console
            let file = try arguments.value("--log").map { path throws(CLIError) in try LogFile(path: path) }
            let say: @Sendable (String) -> Void = { line in
                let stamped = "\(Timestamp(millisecondsSince1970: SystemClock().nowMilliseconds()).iso8601) \(line)"
                if let file { file.write(stamped) } else { console.print(stamped) }
            }
            // This process is a node: chunk frames reuse warm heap pages rather than fault in new ones.
            FrameMemory.keepFreedFrames()
            let server = try NodeServer(replica: replica, configuration: configuration, listen: arguments.value("--listen"), name: role, log: say)
            if let http {
                let https = try arguments.flag("--http-tls") ? httpsIdentity(replica: replica, bound: http.address.host, arguments: arguments) : nil
                let address = try server.serveHTTP(on: http.address.description, limits: httpLimits, https: https)
                if http.insecure {
                    console.error("warning: the HTTP API on \(address) is plain HTTP: anyone on the network path can read the bearer keys and the entries")
                }
                let port = address.split(separator: ":").last.map(String.init) ?? ""
                let base = https.map { "https://\(httpsHost(bound: http.address.host, names: $0.certificate.names)):\(port)" } ?? "http://\(address)"
                let wildcard = https != nil && ["0.0.0.0", "::"].contains(http.address.host)
                var lines = ["HTTP API on \(base)/api/" + (wildcard ? " (listening on \(address))" : "") + ", dashboard on /dashboard (lifesync keys list shows the keys"
                    + (https != nil ? "; lifesync id --https-ca prints the root certificate to trust, --https-profile a profile for an iPhone)" : ")")]
                if let https {
                    lines.append("HTTPS certificate for \(https.certificate.names?.description ?? "?"), \(https.certificate.secondsLeft / 86_400) day(s) left"
                                 + (https.renewed.map { "; issued now: \($0)" } ?? ""))
                }
                for line in lines { if let file { file.write(line) } else { console.print(line) } }
            }
            signal(SIGINT) { _ in stopSignal = 1 }
            signal(SIGTERM) { _ in stopSignal = 1 }
            // A parent may have left these blocked (test runners do); a node must always stop on them.
            var mask = sigset_t()
            sigemptyset(&mask)
            sigaddset(&mask, SIGINT)
            sigaddset(&mask, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &mask, nil)
            let serving = "node \(replica.identity.nodeID) (\(role)) serving \(replica.path)"
                + (server.listeningAddress.map { " on \($0)" } ?? "") + (configuration.peers.isEmpty ? "" : ", peers \(configuration.peers.joined(separator: " "))")
            if let file { file.write(serving) } else { console.print(serving) }
            server.run(externalStop: { stopSignal != 0 })
            say("[\(role)] stopped")
            return 0
        })

    /// `--http`: `HOST:PORT` or a bare port (loopback). Plain HTTP off loopback only when asked.
    static func httpAddress(_ arguments: ParsedArguments) throws -> (address: SocketAddress, insecure: Bool)? {
        guard let text = arguments.value("--http") else {
            for option in ["--http-insecure", "--http-max-upload", "--http-tls", "--http-name"] where arguments.flag(option) {
                throw CLIError.usage("\(option) needs --http HOST:PORT", command: arguments.spec)
            }
            return nil
        }
        let address: SocketAddress
        do { address = try SocketAddress(parsing: UInt16(text) != nil ? "127.0.0.1:\(text)" : text) } catch {
            throw CLIError.usage("--http: \(error)", command: arguments.spec)
        }
        let loopback = address.host == "localhost" || address.host == "::1" || address.host.hasPrefix("127.")
        if !loopback && !arguments.flag("--http-tls") {
            guard arguments.flag("--http-insecure") else {
                throw CLIError.refused("--http \(address) is not a loopback address: the API would carry keys and entries in clear text. "
                                       + "Serve it over HTTPS with --http-tls, bind 127.0.0.1, or accept clear text with --http-insecure")
            }
        }
        if arguments.flag("--http-name") && !arguments.flag("--http-tls") {
            throw CLIError.usage("--http-name names what the HTTPS certificate carries: it needs --http-tls", command: arguments.spec)
        }
        do { _ = try HTTPSNames(arguments.all("--http-name")) } catch { throw CLIError.usage("--http-name \(error)", command: arguments.spec) }
        if arguments.flag("--http-tls") && arguments.flag("--http-insecure") {
            throw CLIError.usage("--http-tls and --http-insecure contradict each other; give one", command: arguments.spec)
        }
        return (address, !loopback && !arguments.flag("--http-tls"))
    }

    /// `--http-tls`: the node's HTTPS root and a certificate for the names it is reached by on
    /// `bound`, and the `--http-name`s (issued now if the saved one does not serve them).
    static func httpsIdentity(replica: Replica, bound: String, arguments: ParsedArguments) throws -> HTTPSIdentity {
        let extra = arguments.all("--http-name")
        return try HTTPSIdentity(replicaPath: replica.path, nodeID: replica.identity.nodeID) {
            try HTTPSNames.forServing(bound: bound, extra: extra)
        }
    }

    /// The host of the URL the serve line prints, one the certificate carries: the bound
    /// address, or on a wildcard the host name under `.local` (how an iPhone finds a Mac).
    static func httpsHost(bound: String, names: HTTPSNames?) -> String {
        guard bound == "0.0.0.0" || bound == "::" else { return bound.contains(":") ? "[\(bound)]" : bound }
        if let local = names?.hosts.first(where: { $0.hasSuffix(".local") }) { return local }
        if let address = names?.addresses.first(where: { $0 != "127.0.0.1" && $0 != "::1" }) { return address.contains(":") ? "[\(address)]" : address }
        return "localhost"
    }

    static func nodeConfiguration(_ arguments: ParsedArguments) throws -> NodeConfiguration {
        if let listen = arguments.value("--listen") { _ = try SocketAddress(parsing: listen) }
        var configuration = NodeConfiguration(peers: arguments.all("--peer"))
        configuration.dialTrustedPeers = true
        configuration.discovery = !arguments.flag("--no-discovery")
        configuration.session.watchReceivesEntries = arguments.flag("--receive-entries")
        configuration.session.transfer.keepRecordings = arguments.flag("--keep-recordings")
        configuration.debounce = Int64(try arguments.integer("--debounce-ms", default: 500, range: 0...600_000))
        configuration.fallbackInterval = Int64(try arguments.integer("--fallback-ms", default: 300_000, range: 100...86_400_000))
        configuration.reconnectMaximum = Int64(try arguments.integer("--reconnect-max-ms", default: 30_000, range: 100...3_600_000))
        return configuration
    }
}
