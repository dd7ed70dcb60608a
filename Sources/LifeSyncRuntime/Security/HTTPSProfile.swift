import CSSL
import LifeSync

/// An Apple configuration profile (`.mobileconfig`, an XML property list) that installs the
/// node's HTTPS root (`HTTPSAuthority`) on an iPhone, iPad or Mac: one payload of type
/// `com.apple.security.root` carrying the certificate's DER. Its identifiers and UUIDs are
/// derived from the root's key, so a profile made again (or after the root was re-issued under
/// the same key) replaces the installed one rather than adding a second.
///
/// Installing it is not enough on iOS: a root a user installed is trusted for TLS only once
/// Settings → General → About → Certificate Trust Settings turns on full trust for it.
///
/// ```swift
/// let xml = try HTTPSProfile.mobileconfig(authority: authority, nodeID: "mac_550e8400-…")
/// ```
package enum HTTPSProfile {
    /// The profile's XML.
    package static func mobileconfig(authority: HTTPSAuthority, nodeID: String) throws -> String {
        let der = try authority.certificateDER()
        let tag = try authority.keyFingerprint.hex.prefix(16)
        let name = HTTPSAuthority.commonName(nodeID: nodeID)
        let payload = try [
            ("PayloadCertificateFileName", string("lifesync-https-ca.cer")),
            ("PayloadContent", "<data>\n\(base64(der))\n\t\t\t</data>"),
            ("PayloadDescription", string("The root certificate of the LifeSync node \(nodeID)'s HTTPS API")),
            ("PayloadDisplayName", string(name)),
            ("PayloadIdentifier", string("org.lifesync.https-ca.\(tag).root")),
            ("PayloadType", string("com.apple.security.root")),
            ("PayloadUUID", string(uuid(authority, "root"))),
            ("PayloadVersion", "<integer>1</integer>"),
        ].map { "\t\t\t<key>\($0.0)</key>\n\t\t\t\($0.1)" }.joined(separator: "\n")
        let profile = try [
            ("PayloadContent", "<array>\n\t\t<dict>\n\(payload)\n\t\t</dict>\n\t</array>"),
            ("PayloadDescription", string("Lets this device reach the LifeSync node \(nodeID) over HTTPS. "
                                          + "After installing, turn on full trust in Settings → General → About → Certificate Trust Settings.")),
            ("PayloadDisplayName", string(name)),
            ("PayloadIdentifier", string("org.lifesync.https-ca.\(tag)")),
            ("PayloadRemovalDisallowed", "<false/>"),
            ("PayloadType", string("Configuration")),
            ("PayloadUUID", string(uuid(authority, "profile"))),
            ("PayloadVersion", "<integer>1</integer>"),
        ].map { "\t<key>\($0.0)</key>\n\t\($0.1)" }.joined(separator: "\n")
        return """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \(profile)
        </dict>
        </plist>
        """
    }

    /// A plist string element, its text escaped.
    static func string(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return "<string>\(escaped)</string>"
    }

    /// Base64 of `bytes`, in lines of 64 characters indented for the payload.
    static func base64(_ bytes: [UInt8]) -> String {
        var encoded = [UInt8](repeating: 0, count: (bytes.count + 2) / 3 * 4 + 1)
        let length = Int(EVP_EncodeBlock(&encoded, bytes, Int32(bytes.count)))
        let text = String(decoding: encoded.prefix(length), as: UTF8.self)
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            lines.append("\t\t\t" + rest.prefix(64))
            rest = rest.dropFirst(64)
        }
        return lines.joined(separator: "\n")
    }

    /// A UUID (version 4 form) from the SHA-256 of the root's key and `label`: the same for the
    /// same root key.
    static func uuid(_ authority: HTTPSAuthority, _ label: String) throws -> String {
        var bytes = Array(SHA256.hash(try authority.keyFingerprint.bytes + Array(label.utf8)).bytes.prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined().uppercased()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }
}
