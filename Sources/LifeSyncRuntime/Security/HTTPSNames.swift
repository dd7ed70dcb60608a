import Glibc

/// The names and addresses an HTTPS certificate carries as subjectAltNames: every name a client
/// may reach the node by, since a client checks the URL's host against them (the certificate's
/// CN is ignored by Apple's platforms and browsers).
///
/// ```swift
/// let names = try HTTPSNames.forServing(bound: "0.0.0.0", extra: ["notes.example.net"])
/// names.hosts       // ["localhost", "mac", "mac.local", "notes.example.net"]
/// names.addresses   // ["127.0.0.1", "::1", "192.168.1.20"]
/// ```
package struct HTTPSNames: Equatable, Sendable, CustomStringConvertible {
    /// DNS names, in lowercase, in the order first given.
    package private(set) var hosts: [String] = []
    /// IP addresses in their canonical form (inet_ntop's), in the order first given.
    package private(set) var addresses: [String] = []

    /// At most this many names in all: a certificate stays small.
    package static let maximumCount = 64

    /// Names and addresses from `entries`, each a DNS name or an IPv4 or IPv6 address; repeats
    /// are dropped. Throws naming the first that is neither, or when there are too many.
    package init(_ entries: [String] = []) throws(HTTPSNameError) {
        for entry in entries { try add(entry) }
    }

    /// Adds a DNS name or an IP address (nothing when it is there already).
    package mutating func add(_ entry: String) throws(HTTPSNameError) {
        if let address = Self.canonicalAddress(entry) {
            if !addresses.contains(address) { addresses.append(address) }
        } else if Self.isHostName(entry) {
            let host = entry.lowercased()
            if !hosts.contains(host) { hosts.append(host) }
        } else {
            throw HTTPSNameError(entry: entry, problem: "is neither a host name (letters, digits, hyphens, dots) nor an IP address")
        }
        guard hosts.count + addresses.count <= Self.maximumCount else {
            throw HTTPSNameError(entry: entry, problem: "is one more than the \(Self.maximumCount) names a certificate carries here")
        }
    }

    /// The same names and addresses, whatever their order.
    package static func == (a: HTTPSNames, b: HTTPSNames) -> Bool {
        Set(a.hosts) == Set(b.hosts) && Set(a.addresses) == Set(b.addresses)
    }

    /// Every name then every address, comma-separated.
    package var description: String { (hosts + addresses).joined(separator: ", ") }

    /// The subjectAltName extension's value in OpenSSL's configuration form.
    var subjectAltName: String { (hosts.map { "DNS:" + $0 } + addresses.map { "IP:" + $0 }).joined(separator: ",") }

    /// Read back from a certificate's subjectAltNames ("DNS:…", "IP:…" lines); nil if one is
    /// neither.
    init?(subjectAltNames: [String]) {
        for line in subjectAltNames {
            if line.hasPrefix("DNS:"), Self.isHostName(String(line.dropFirst(4))) {
                hosts.append(String(line.dropFirst(4)).lowercased())
            } else if line.hasPrefix("IP:"), let address = Self.canonicalAddress(String(line.dropFirst(3))) {
                addresses.append(address)
            } else {
                return nil
            }
        }
    }

    // MARK: - What a serving node is reached by

    /// The names of a node serving HTTPS on `bound` (the host of `--http HOST:PORT`):
    /// `localhost`, the machine's host name and that name under `.local` (mDNS, as Apple's
    /// devices reach a Mac), 127.0.0.1 and ::1; then `bound` itself, or for a wildcard (0.0.0.0,
    /// ::) every address of the machine's interfaces (`DiscoveryInterface.addresses`); then
    /// `extra`, the names a user adds (`serve --http-name`).
    package static func forServing(bound: String, extra: [String], hostName: String? = currentHostName(),
                                  interfaceAddresses: (_ ipv4Only: Bool) -> [String] = DiscoveryInterface.addresses) throws(HTTPSNameError) -> HTTPSNames {
        var names = try HTTPSNames(["localhost"])
        if let hostName {
            for name in hostNames(hostName) { try names.add(name) }
        }
        try names.add("127.0.0.1")
        try names.add("::1")
        if bound == "0.0.0.0" || bound == "::" {
            for address in interfaceAddresses(bound == "0.0.0.0") { try names.add(address) }
        } else if canonicalAddress(bound) != nil || isHostName(bound) {
            try names.add(bound)
        }
        for name in extra { try names.add(name) }
        return names
    }

    /// The names a host name stands for: itself, and its first label alone and under `.local`
    /// ("mac.example.net" → mac.example.net, mac, mac.local; "Johns-Mac.local" → johns-mac.local,
    /// johns-mac). Nothing for a name that is not a valid host name, or is `localhost`.
    static func hostNames(_ hostName: String) -> [String] {
        let name = hostName.lowercased()
        guard isHostName(name), name != "localhost" else { return [] }
        let label = String(name.prefix { $0 != "." })
        var names = [name]
        for candidate in [label, label + ".local"] where !names.contains(candidate) { names.append(candidate) }
        return names
    }

    /// The machine's host name (gethostname), nil if it has none.
    package static func currentHostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(cBuffer: buffer)
        return name.isEmpty ? nil : name
    }

    // MARK: - Checking

    /// The address in inet_ntop's form when `text` is an IPv4 or IPv6 address, else nil.
    static func canonicalAddress(_ text: String) -> String? {
        var bytes = [UInt8](repeating: 0, count: 16)
        var out = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        for family in [AF_INET, AF_INET6] where inet_pton(family, text, &bytes) == 1 {
            return inet_ntop(family, bytes, &out, socklen_t(out.count)) != nil ? String(cBuffer: out) : nil
        }
        return nil
    }

    /// A DNS host name: dot-separated labels of 1–63 letters, digits and hyphens, not starting or
    /// ending with a hyphen, 253 characters at most, the last label not all digits.
    static func isHostName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard (1...63).contains(label.utf8.count), label.first != "-", label.last != "-",
                  label.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D })
            else { return false }
        }
        return !(labels.last!.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 })
    }
}

/// A name `serve --http-name` cannot put in a certificate, and why.
public struct HTTPSNameError: Error, Equatable, CustomStringConvertible {
    public let entry: String
    public let problem: String
    public var description: String { "'\(entry.prefix(80))' \(problem)" }
}
