import LifeSync

extension NodeServer {
    /// Serves the LifeLog HTTP API on `address` from this node's poll loop (call before `run`);
    /// writes made over it are local writes the node pushes to its peers. Returns where it
    /// listens (what port 0 became). With `https`, clients speak TLS 1.3 to the node's own key
    /// and certificate (`TLSContext.httpsServer`).
    @discardableResult
    public func serveHTTP(on address: String, limits: HTTPServer.Limits = HTTPServer.Limits(), https: Bool = false) throws -> String {
        precondition(http == nil, "one HTTP server per node")
        let api = LifeLogAPI(replica: core.replica, node: core)
        api.metrics = { [unowned self] in metrics }
        if core.replica.path != ":memory:" {
            api.recordingUploads = FileRecordingUploads(storage: try FileRecordingStorage(replicaPath: core.replica.path), replica: core.replica,
                                                        signer: tls.key, random: SystemRandom())
        }
        let server = try HTTPServer(listen: try SocketAddress(parsing: address), api: api,
                                    limits: limits, tls: https ? try TLSContext.httpsServer(key: tls.key) : nil, log: log) { [unowned self] now in execute(core.localWrite(now: now)) }
        http = server
        return server.listeningAddress
    }
}
