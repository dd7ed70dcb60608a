import LifeSync
import LifeSyncAPI

extension NodeServer {
    /// Serves the LifeLog HTTP API on `address` from this node's poll loop (call before `run`);
    /// writes made over it are local writes the node pushes to its peers. Returns where it
    /// listens (what port 0 became). With `https`, clients speak TLS 1.3 to its certificate
    /// (`TLSContext.httpsServer`), which is renewed while serving when due (checked about once an
    /// hour, when a client connects; `HTTPSIdentity.renewIfDue`).
    @discardableResult
    package func serveHTTP(on address: String, limits: HTTPServer.Limits = HTTPServer.Limits(), https: HTTPSIdentity? = nil) throws -> String {
        precondition(http == nil, "one HTTP server per node")
        let api = LifeLogAPI(replica: core.replica, node: core)
        api.metrics = { [unowned self] in metrics }
        if core.replica.path != ":memory:" {
            api.recordingUploads = FileRecordingUploads(storage: try FileRecordingStorage(replicaPath: core.replica.path), replica: core.replica,
                                                        signer: key, random: SystemRandom())
        }
        let context = try https?.serverContext()
        // Its listener backs off and logs refusals as the node's own does (`NodeServer.Limits`).
        let listener = try Listener(on: try SocketAddress(parsing: address), backoff: self.limits.acceptBackoff,
                                    maximumBackoff: self.limits.maximumAcceptBackoff, refusalLogInterval: self.limits.refusalLogInterval,
                                    prefix: "HTTP: ", log: log)
        let server = HTTPServer(listener: listener, api: api, limits: limits, tls: context, log: log) { [unowned self] now in
            execute(core.localWrite(now: now))
        }
        if let https {
            let log = log
            server.renewTLS = {
                do {
                    guard let reason = try https.renewIfDue() else { return nil }
                    log("HTTPS certificate renewed (\(reason)) for \(https.certificate.names?.description ?? "?")")
                    return try https.serverContext()
                } catch {
                    log("HTTPS certificate could not be renewed, the current one is kept: \(error)")
                    return nil
                }
            }
        }
        http = server
        return server.listeningAddress
    }
}
