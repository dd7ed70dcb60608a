import Foundation
import Testing
import TestSupport

/// The clean-room seal checker (Tests/Clients/SealCheck, Python written from PROTOCOL.md and the
/// vectors alone, no reference source read) agrees with every published vector: what issue 29
/// asks of the spec, that an independent implementation can verify every change against its
/// origin's key. It must also be able to disagree: a vector that lies about its verdict fails it.
@Suite struct SealCheckTests {
    static let directory = Readme.root + "/Tests/Clients/SealCheck"

    static func check(_ arguments: [String]) throws -> LifeSyncBinary.Result {
        try Captured.run("/usr/bin/env", ["python3", directory + "/seal_check.py"] + arguments, timeout: 120)
    }

    @Test func aCleanRoomCheckerVerifiesEverySealVectorFromTheSpecAlone() throws {
        let run = try Self.check(["--self-test"])
        #expect(run.status == 0 && run.stdout.contains("all vectors agree"), "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("ok seal_valid") && run.stdout.contains("ok seal_other_key"), "\(run.stdout)")
    }

    @Test func theCheckerFailsOnAVectorThatLiesAboutItsVerdict() throws {
        let temporary = TemporaryDirectory()
        let vectors = temporary.path + "/vectors"
        try FileManager.default.copyItem(atPath: Readme.root + "/Protocol/vectors", toPath: vectors)
        let sealFile = vectors + "/seal.json"
        let text = try String(contentsOfFile: sealFile, encoding: .utf8)
        let lying = try #require(text.range(of: #""error":"forged_change""#) ?? text.range(of: #""error": "forged_change""#))
        try text.replacingCharacters(in: lying, with: #""error":"malformed""#).write(toFile: sealFile, atomically: true, encoding: .utf8)
        let run = try Self.check(["--vectors", vectors])
        #expect(run.status == 1 && run.stdout.contains("MISMATCH"), "\(run.stdout)\(run.stderr)")
    }
}
