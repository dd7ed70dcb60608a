import Foundation

/// A fresh directory under the system's temporary folder (or `parent`), removed when the value
/// is released.
package final class TemporaryDirectory: @unchecked Sendable {
    package let path: String

    package init(_ label: String = "lifesync", in parent: String? = nil) {
        let base = (parent.map { $0 + "/" } ?? NSTemporaryDirectory()) + "\(label)-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try! FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    /// A path inside the directory.
    package func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
