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
        if PrivateFile.isAbsent(path) {
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
        let bytes = try PrivateFile.read(path)
        return try parse(pem: bytes, path: path)
    }

    static func parse(pem: [UInt8], path: String) throws -> NodeKey {
        let (key, certificates) = try X509Builder.readKeyAndCertificates(pem: pem, path: path, certificates: 1)
        return try NodeKey(owning: key, certificate: certificates[0])
    }

    /// The certificate alone, PEM: what peers see (`lifesync id --certificate`). HTTPS clients
    /// trust the node's HTTPS authority instead (`HTTPSAuthority`, `lifesync id --https-ca`).
    public func certificatePEM() throws -> String { try X509Builder.pem(certificate: certificate) }

    /// The file's bytes: the private key, then the certificate, both PEM.
    func pem() throws -> [UInt8] {
        try X509Builder.pem(privateKey: key) + Array(try X509Builder.pem(certificate: certificate).utf8)
    }

    /// Writes the key file atomically with mode 0600.
    public func save(to path: String) throws {
        var bytes = try pem()
        defer { for i in bytes.indices { bytes[i] = 0 } }
        try PrivateFile.write(bytes, to: path)
    }
}
