import CSSL
import Glibc
import LifeSync

/// A TLS 1.3 connection over a non-blocking socket, as a `ByteStream`. The handshake is driven
/// step by step (`handshake()`) by the poll loop; once it is done, `peerFingerprint` is the
/// SHA-256 of the key the peer proved it holds, and reads and writes carry plaintext.
package final class TLSStream: ByteStream {
    package let fd: Int32
    /// `SSL *`, owned.
    private let ssl: OpaquePointer
    private var closed = false
    /// The peer's key fingerprint, once the handshake is done.
    package private(set) var peerFingerprint: SHA256.Digest?
    /// The last call could not go on until the socket is writable (poll for output).
    package private(set) var wantsWritable = false
    /// Why the connection failed, if it did (for the log).
    package private(set) var failure: String?
    /// Whether the peer must present a certificate (peers do; HTTPS clients prove themselves
    /// with a bearer key instead, and are asked for none).
    let requiresPeerCertificate: Bool
    private var established = false

    init(ssl: OpaquePointer, fd: Int32, requiresPeerCertificate: Bool = true) {
        self.ssl = ssl
        self.fd = fd
        self.requiresPeerCertificate = requiresPeerCertificate
    }

    deinit { close() }

    package enum HandshakeStep: Equatable {
        case done(SHA256.Digest)
        /// Done, with no certificate asked of the peer (an HTTPS client).
        case established
        case inProgress
        case failed(String)
    }

    /// Takes the handshake as far as the socket allows.
    package func handshake() -> HandshakeStep {
        precondition(!closed, "handshake on a closed stream")
        if established { return peerFingerprint.map { .done($0) } ?? .established }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        guard result == 1 else {
            if wouldBlock(result) { return .inProgress }
            let verdict = SSL_get_verify_result(ssl)
            let certificate = verdict == X509_V_OK || verdict == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
                ? "" : " (the peer's certificate: \(String(cString: X509_verify_cert_error_string(verdict))))"
            return .failed(fail("TLS handshake failed" + certificate))
        }
        guard let certificate = SSL_get1_peer_certificate(ssl) else {
            guard !requiresPeerCertificate else { return .failed(fail("the peer presented no certificate")) }
            established = true
            wantsWritable = false
            return .established
        }
        defer { X509_free(certificate) }
        guard let key = X509_get0_pubkey(certificate), let fingerprint = try? NodeKey.fingerprint(of: key) else {
            return .failed(fail("the peer's certificate holds no usable key"))
        }
        peerFingerprint = fingerprint
        established = true
        wantsWritable = false
        return .done(fingerprint)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead {
        precondition(established, "TLS read before the handshake")
        guard !closed else { return .ended }
        ERR_clear_error()
        var got = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &got)
        if result == 1 {
            wantsWritable = false
            return .bytes(got)
        }
        if wouldBlock(result) { return .wouldBlock }
        if SSL_get_error(ssl, result) != SSL_ERROR_ZERO_RETURN { _ = fail("TLS read failed") }
        return .ended
    }

    package func write(_ bytes: UnsafeRawBufferPointer) -> StreamWrite {
        precondition(established, "TLS write before the handshake")
        guard !closed else { return .failed }
        guard bytes.count > 0 else { return .wrote(0) }
        ERR_clear_error()
        var written = 0
        let result = SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &written)
        if result == 1 {
            wantsWritable = false
            return .wrote(written)
        }
        if wouldBlock(result) { return .wouldBlock }
        _ = fail("TLS write failed")
        return .failed
    }

    /// Plaintext already decrypted and waiting: poll will not announce it.
    package var hasBufferedInput: Bool { !closed && SSL_pending(ssl) > 0 }

    package func shutdownReading() { shutdown(fd, Int32(SHUT_RD)) }

    /// Sends close_notify if the socket takes it now (never waits), then closes.
    package func close() {
        guard !closed else { return }
        closed = true
        if established && failure == nil {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
        }
        ERR_clear_error()
        SSL_free(ssl)
        Glibc.close(fd)
    }

    /// True, noting which way, when the call only has to wait for the socket.
    private func wouldBlock(_ result: Int32) -> Bool {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: wantsWritable = false; return true
        case SSL_ERROR_WANT_WRITE: wantsWritable = true; return true
        default: return false
        }
    }

    private func fail(_ what: String) -> String {
        let reason = OpenSSLError.drain(what).description
        failure = failure ?? reason
        return reason
    }
}
