import CSSL
import LifeSync

/// The TLS profile of every peer connection (PROTOCOL.md, TLS profile): TLS 1.3 only; AES-GCM
/// and ChaCha20-Poly1305 suites; X25519 or P-256 key exchange; ECDSA P-256 with SHA-256
/// signatures; both sides present their node's self-signed certificate and nothing else. No
/// certificate authority is consulted: a peer is known by its key's fingerprint, which the
/// node checks against its trust store once the handshake is done (`TLSStream.peerFingerprint`).
/// No sessions are cached or resumed, so every connection proves possession of the key.
///
/// ```swift
/// let tls = try TLSContext(key: nodeKey)
/// let stream = try tls.stream(fd: socket, dialing: true)
/// ```
package final class TLSContext {
    /// `SSL_CTX *`, owned.
    let context: OpaquePointer
    /// The node key of a peer context; nil for an HTTPS context, whose key is its certificate's.
    package let key: NodeKey?

    package static let cipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
    package static let groups = "X25519:P-256"
    package static let signatureAlgorithms = "ECDSA+SHA256"
    /// Whether connections must present a certificate: peers do; an HTTPS context
    /// (`httpsServer`) asks for none, since its clients prove themselves with a bearer key.
    let requiresPeerCertificate: Bool

    /// The profile of `serve --http-tls`: the same TLS 1.3 profile with the node's HTTPS server
    /// certificate and its key, sending `authority`'s root after it as the chain, without asking
    /// the client for a certificate. Clients trust the root (`lifesync id --https-ca`) and reach
    /// the node by any name the certificate carries (`HTTPSNames`).
    package static func httpsServer(certificate: HTTPSCertificate, authority: HTTPSAuthority) throws -> TLSContext {
        try TLSContext(certificate: certificate.certificate, privateKey: certificate.key, chain: [authority.certificate],
                       nodeKey: nil, requiresPeerCertificate: false)
    }

    /// A peer connection's context: the node's key and self-signed certificate, and the peer's
    /// asked for.
    package convenience init(key: NodeKey) throws {
        try self.init(certificate: key.certificate, privateKey: key.key, chain: [], nodeKey: key, requiresPeerCertificate: true)
    }

    private init(certificate: OpaquePointer, privateKey: OpaquePointer, chain: [OpaquePointer], nodeKey: NodeKey?,
                 requiresPeerCertificate: Bool) throws {
        guard let context = SSL_CTX_new(TLS_method()) else { throw OpenSSLError.drain("creating a TLS context") }
        self.context = context
        self.key = nodeKey
        self.requiresPeerCertificate = requiresPeerCertificate
        try OpenSSLError.check(lifesync_ctx_tls13_only(context) == 1, "restricting TLS to version 1.3")
        try OpenSSLError.check(SSL_CTX_set_ciphersuites(context, Self.cipherSuites) == 1, "setting the cipher suites")
        try OpenSSLError.check(lifesync_ctx_set_groups(context, Self.groups) == 1, "setting the key-exchange groups")
        try OpenSSLError.check(lifesync_ctx_set_sigalgs(context, Self.signatureAlgorithms) == 1, "setting the signature algorithms")
        try OpenSSLError.check(SSL_CTX_use_certificate(context, certificate) == 1, "loading the certificate")
        for link in chain { try OpenSSLError.check(lifesync_ctx_add_chain_cert(context, link) == 1, "adding the certificate chain") }
        try OpenSSLError.check(SSL_CTX_use_PrivateKey(context, privateKey) == 1, "loading the private key")
        try OpenSSLError.check(SSL_CTX_check_private_key(context) == 1, "matching the key to the certificate")
        if requiresPeerCertificate {
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, acceptSelfSignedOnly)
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
        SSL_CTX_set_verify_depth(context, 0)
        try OpenSSLError.check(SSL_CTX_set_num_tickets(context, 0) == 1, "turning session tickets off")
        lifesync_ctx_no_session_cache(context)
        lifesync_ctx_set_modes(context)
    }

    deinit { SSL_CTX_free(context) }

    /// A TLS stream over the connected, non-blocking socket `fd` (which it then owns): the
    /// client side when we dialled, the server side when we accepted.
    package func stream(fd: Int32, dialing: Bool) throws -> TLSStream {
        guard let ssl = SSL_new(context) else { throw OpenSSLError.drain("creating a TLS connection") }
        // Our socket BIO (sends with MSG_NOSIGNAL); the SSL owns it, the stream owns the socket.
        guard let bio = lifesync_socket_bio(fd) else {
            SSL_free(ssl)
            throw OpenSSLError.drain("attaching TLS to the socket")
        }
        SSL_set_bio(ssl, bio, bio)
        if dialing { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
        return TLSStream(ssl: ssl, fd: fd, requiresPeerCertificate: requiresPeerCertificate)
    }
}

/// Peers present self-signed certificates: that is the one verification error let through.
/// Anything else (an expired or not yet valid certificate, a chain, a bad encoding) fails the
/// handshake. Who the key belongs to is decided by the trust store, not here.
private let acceptSelfSignedOnly: @convention(c) (Int32, OpaquePointer?) -> Int32 = { preverified, store in
    if preverified == 1 { return 1 }
    guard let store else { return 0 }
    return X509_STORE_CTX_get_error(store) == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ? 1 : 0
}
