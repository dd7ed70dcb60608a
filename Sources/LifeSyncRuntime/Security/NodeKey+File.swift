import CSSL
import Glibc
import LifeSync

/// The key file: PEM, the PKCS #8 private key then the certificate, mode 0600, written whole
/// (a temporary file, fsync, rename) so a crash leaves the old key or the new one, never half.
extension NodeKey {
    /// The key of the replica at `path` lives at `path + ".key"`.
    public static func path(forReplica path: String) -> String { path + ".key" }

    /// Loads the key at `path`, renewing its certificate when due; makes and saves one when
    /// there is no file yet.
    public static func loadOrCreate(path: String, nodeID: String) throws -> NodeKey {
        if access(path, F_OK) != 0 && errno == ENOENT {
            let key = try generate(nodeID: nodeID)
            try key.save(to: path)
            return key
        }
        let key = try load(from: path)
        if let renewed = try key.renewedIfDue(nodeID: nodeID) {
            try renewed.save(to: path)
            return renewed
        }
        return key
    }

    /// Reads a key file; refuses one that others may read, or that is not a P-256 key with its
    /// own certificate.
    public static func load(from path: String) throws -> NodeKey {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw KeyFileError(path: path, problem: "cannot be opened (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw KeyFileError(path: path, problem: "is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw KeyFileError(path: path, problem: String(format: "is readable by others (mode %o); it holds this node's private key: chmod 600 it", info.st_mode & 0o777))
        }
        guard info.st_size > 0, info.st_size <= 16_384 else { throw KeyFileError(path: path, problem: "has \(info.st_size) bytes, not a key file") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw KeyFileError(path: path, problem: "could not be read") }
            filled += got
        }
        return try parse(pem: bytes, path: path)
    }

    static func parse(pem: [UInt8], path: String) throws -> NodeKey {
        guard let bio = pem.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw OpenSSLError.drain("reading \(path)")
        }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
            ERR_clear_error()
            throw KeyFileError(path: path, problem: "holds no readable private key")
        }
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else {
            ERR_clear_error()
            EVP_PKEY_free(key)
            throw KeyFileError(path: path, problem: "holds no certificate after the key")
        }
        var group = [CChar](repeating: 0, count: 32)
        let isP256 = EVP_PKEY_get_group_name(key, &group, group.count, nil) == 1 && String(cBuffer: group) == "prime256v1"
        let matches = X509_check_private_key(certificate, key) == 1
        ERR_clear_error()
        guard isP256, matches else {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw KeyFileError(path: path, problem: isP256 ? "holds a certificate for another key" : "holds a key that is not ECDSA P-256")
        }
        return try NodeKey(owning: key, certificate: certificate)
    }

    /// The certificate alone, PEM: what an HTTPS client trusts (`lifesync id --certificate`).
    public func certificatePEM() throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLError.drain("making a buffer") }
        defer { BIO_free(bio) }
        try OpenSSLError.check(PEM_write_bio_X509(bio, certificate) == 1, "encoding the certificate")
        var data: UnsafeMutablePointer<CChar>?
        let count = lifesync_bio_mem_data(bio, &data)
        guard count > 0, let data else { throw OpenSSLError.drain("reading the encoded certificate") }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
    }

    /// The file's bytes: the private key, then the certificate, both PEM.
    func pem() throws -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLError.drain("making a buffer") }
        defer { BIO_free(bio) }
        try OpenSSLError.check(PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1, "encoding the private key")
        try OpenSSLError.check(PEM_write_bio_X509(bio, certificate) == 1, "encoding the certificate")
        var data: UnsafeMutablePointer<CChar>?
        let count = lifesync_bio_mem_data(bio, &data)
        guard count > 0, let data else { throw OpenSSLError.drain("reading the encoded key") }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// Writes the key file atomically with mode 0600.
    public func save(to path: String) throws {
        var bytes = try pem()
        defer { for i in bytes.indices { bytes[i] = 0 } }
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeyFileError(path: temporary, problem: "cannot be created (\(String(cString: strerror(errno))))") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                unlink(temporary)
                throw KeyFileError(path: temporary, problem: "could not be written (\(String(cString: strerror(errno))))")
            }
            written += n
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw KeyFileError(path: path, problem: "could not be saved (\(String(cString: strerror(errno))))")
        }
    }
}

/// A key file that cannot be used, and why.
public struct KeyFileError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let problem: String
    public var description: String { "key file \(path) \(problem)" }
}
