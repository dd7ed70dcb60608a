import Foundation
import Glibc
@testable import LifeSyncRuntime
import Testing
import TestSupport

/// The node's key file: made once, read back to the same identity, private to its owner, and
/// refused when it is anything but this node's P-256 key and its certificate.
@Suite struct NodeKeyTests {
    static let nodeID = "phone_0f8fad5b-d9cb-469f-a165-70867728950e"

    @Test func aKeyIsMadeOnceAndReadBackAsTheSameIdentity() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("phone.sqlite.key")
        let made = try NodeKey.loadOrCreate(path: path, nodeID: Self.nodeID)
        #expect(made.fingerprint.bytes.count == 32)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "mode \(String(info.st_mode & 0o777, radix: 8))")
        let again = try NodeKey.loadOrCreate(path: path, nodeID: Self.nodeID)
        #expect(again.fingerprint == made.fingerprint)
        let other = try NodeKey.generate(nodeID: Self.nodeID)
        #expect(other.fingerprint != made.fingerprint, "two keys, one fingerprint")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp") } == [], "a temporary file was left")
    }

    @Test func aKeyFileOthersCanReadIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("k.key")
        try NodeKey.generate(nodeID: Self.nodeID).save(to: path)
        chmod(path, 0o644)
        let error = try #require(throws: KeyFileError.self) { try NodeKey.load(from: path) }
        #expect(error.description.contains("readable by others") && error.description.contains("chmod 600"), "\(error)")
    }

    @Test func damagedOrForeignKeyFilesAreRefusedByName() throws {
        let directory = TemporaryDirectory()
        func refusal(_ bytes: [UInt8]) throws -> String {
            let path = directory.file("bad-\(bytes.count).key")
            unlink(path)
            let fd = open(path, O_WRONLY | O_CREAT, 0o600)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            let error = try #require(throws: KeyFileError.self) { try NodeKey.load(from: path) }
            return error.problem
        }
        #expect(try refusal(Array("not a key at all\n".utf8)).contains("no readable private key"))
        let a = String(decoding: try NodeKey.generate(nodeID: Self.nodeID).pem(), as: UTF8.self)
        let b = String(decoding: try NodeKey.generate(nodeID: Self.nodeID).pem(), as: UTF8.self)
        let keyOnly = try #require(a.components(separatedBy: "-----BEGIN CERTIFICATE-----").first)
        #expect(try refusal(Array(keyOnly.utf8)).contains("no certificate"))
        let foreignCertificate = "-----BEGIN CERTIFICATE-----" + (try #require(b.components(separatedBy: "-----BEGIN CERTIFICATE-----").last))
        #expect(try refusal(Array((keyOnly + foreignCertificate).utf8)).contains("certificate for another key"))
        let missing = try #require(throws: KeyFileError.self) { try NodeKey.load(from: directory.file("absent.key")) }
        #expect(missing.problem.contains("cannot be opened"))
    }

    @Test func aCertificateNearItsEndIsRenewedUnderTheSameKey() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("old.key")
        let old = try NodeKey.generate(nodeID: Self.nodeID, notBefore: -86_400, validity: 86_400 * 30)
        try old.save(to: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let loaded = try NodeKey.loadOrCreate(path: path, nodeID: Self.nodeID)
        #expect(loaded.fingerprint == old.fingerprint, "renewal changed the identity")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) != before, "the certificate was not renewed")
        #expect(try NodeKey.load(from: path).renewedIfDue(nodeID: Self.nodeID) == nil)
    }
}
