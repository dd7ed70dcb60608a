import LifeSync

/// What a node serving HTTPS presents, kept current: its HTTPS authority (made on first use)
/// and the server certificate that authority issued for the names the node is reached by now.
/// `serve --http-tls` makes one at start, which renews the certificate when due
/// (`HTTPSCertificate.renewalReason`); the HTTP server asks again about once an hour while it
/// serves (`renewIfDue`), since interface addresses come and go and certificates age.
///
/// ```swift
/// let https = try HTTPSIdentity(replicaPath: "mac.sqlite", nodeID: id) { try HTTPSNames.forServing(bound: "0.0.0.0", extra: []) }
/// https.renewed        // "there was none" on the first run, nil when the saved one serves
/// let context = try https.serverContext()
/// ```
package final class HTTPSIdentity {
    package let authorityPath: String
    package let certificatePath: String
    package private(set) var authority: HTTPSAuthority
    package private(set) var certificate: HTTPSCertificate
    /// Why the certificate was last replaced (at `init` or by `renewIfDue`); nil if it was kept.
    package private(set) var renewed: String?
    /// The names the certificate must carry, asked at every check.
    let names: () throws -> HTTPSNames
    let nodeID: String

    /// Loads (or makes) the authority and certificate beside the replica at `replicaPath`,
    /// renewing the certificate if it does not serve `names()` for another 30 days.
    package init(replicaPath: String, nodeID: String, names: @escaping () throws -> HTTPSNames) throws {
        authorityPath = HTTPSAuthority.path(forReplica: replicaPath)
        certificatePath = HTTPSCertificate.path(forReplica: replicaPath)
        self.nodeID = nodeID
        self.names = names
        authority = try HTTPSAuthority.loadOrCreate(path: authorityPath, nodeID: nodeID)
        (certificate, renewed) = try HTTPSCertificate.loadOrIssue(path: certificatePath, names: try names(), authority: authority)
    }

    /// Renews the certificate if it is due now; returns why it was, nil if it was not.
    @discardableResult
    package func renewIfDue() throws -> String? {
        let wanted = try names()
        if X509Builder.secondsLeft(authority.certificate) < HTTPSAuthority.renewal {
            authority = try HTTPSAuthority.loadOrCreate(path: authorityPath, nodeID: nodeID)
        }
        guard let reason = certificate.renewalReason(names: wanted, authority: authority) else {
            renewed = nil
            return nil
        }
        let issued = try HTTPSCertificate.issue(names: wanted, by: authority)
        try issued.save(to: certificatePath, authority: authority)
        certificate = issued
        renewed = reason
        return reason
    }

    /// A TLS context that presents the current certificate, its authority's root as the chain.
    package func serverContext() throws -> TLSContext { try TLSContext.httpsServer(certificate: certificate, authority: authority) }
}
