import Foundation
import LifeSync
import Testing
import TestSupport

/// `Protocol/vectors/discovery.json`: every valid announcement decodes to its fields and encodes
/// back to the same bytes; every malformed one is refused with the error its vector names.
@Suite struct DiscoveryVectorTests {
    @Test func discoveryVectorsDecodeAndEncodeExactly() throws {
        let url = ProtocolVectorTests.directory.appendingPathComponent("discovery.json")
        let document = try JSONValue.parse(try String(contentsOf: url, encoding: .utf8))
        guard case .array(let vectors)? = document["vectors"] else { Issue.record("no \"vectors\" array"); return }
        var valid = 0, malformed = 0
        for vector in vectors {
            guard case .string(let name)? = vector["name"], case .string(let hex)? = vector["hex"], case .string? = vector["description"],
                  hex == hex.lowercased(), let bytes = Hex.decode(hex) else {
                Issue.record("a vector lacks name, description or lowercase hex: \(vector.canonicalText.prefix(80))")
                continue
            }
            if case .string(let expectedError)? = vector["error"] {
                malformed += 1
                do {
                    let accepted = try Announcement(decoding: bytes[...])
                    Issue.record("\(name): accepted as \(accepted), expected \(expectedError)")
                } catch {
                    #expect(error.name == expectedError, "\(name): refused as \(error.name) (\(error)), expected \(expectedError)")
                }
                continue
            }
            guard case .string(let nodeID)? = vector["announcement"]?["node_id"],
                  case .string(let fingerprint)? = vector["announcement"]?["fingerprint"],
                  case .number(let port)? = vector["announcement"]?["port"],
                  case .string(let instance)? = vector["announcement"]?["instance"],
                  case .string(let role)? = vector["announcement"]?["role"],
                  let digest = SHA256.Digest(hex: fingerprint), let instanceValue = UInt64(instance) else {
                Issue.record("\(name): no valid \"announcement\"")
                continue
            }
            valid += 1
            let expected = Announcement(nodeID: nodeID, fingerprint: digest, port: UInt16(port), instance: instanceValue)
            #expect(expected.role.rawValue == role, "\(name): role")
            #expect(try Announcement(decoding: bytes[...]) == expected, "\(name): decodes differently")
            #expect(expected.encoded() == bytes, "\(name): encodes differently")
        }
        #expect(valid >= 2 && malformed >= 8)
    }
}
