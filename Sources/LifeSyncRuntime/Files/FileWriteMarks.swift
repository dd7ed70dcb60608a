import FoundationEssentials
import Glibc
import LifeSync

/// Write marks (`WriteMarkStore`) as one small file per node ID in the user's state folder:
/// `$LIFESYNC_STATE_DIR`, else `$XDG_STATE_HOME/lifesync`, else `~/.local/state/lifesync`.
/// Apart from the replica's folder on purpose, so copying a replica's files aside and back
/// (`cp phone.sqlite* …`) does not carry the mark back with it.
///
/// A mark is written after each commit that used sequence numbers, by rename (never half
/// written) and without an fsync: a mark lost in a power cut is behind the replica, which
/// only costs the protection for that write, never a false alarm.
package final class FileWriteMarks: WriteMarkStore {
    package let folder: String

    package init(folder: String) {
        self.folder = folder
    }

    /// The folder named by the environment, as the CLI and `serve` use it.
    package static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> FileWriteMarks {
        if let explicit = environment["LIFESYNC_STATE_DIR"], !explicit.isEmpty { return FileWriteMarks(folder: explicit) }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return FileWriteMarks(folder: state + "/lifesync") }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return FileWriteMarks(folder: home + "/.local/state/lifesync")
    }

    func path(_ nodeID: String) -> String? {
        // A node ID is `{role}_{uuid}`: nothing in it can leave the folder.
        guard Identifier.role(of: nodeID) != nil else { return nil }
        return "\(folder)/\(nodeID).mark"
    }

    package func mark(nodeID: String) -> WriteMark? {
        guard let path = path(nodeID), let data = FileManager.default.contents(atPath: path),
              let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, Identifier.isUUIDv4(parts[0]), let sequence = UInt64(parts[1]) else { return nil }
        return WriteMark(incarnation: String(parts[0]), sequence: sequence)
    }

    package func record(_ mark: WriteMark, nodeID: String) {
        guard let path = path(nodeID) else { return }
        createFolder()
        let temporary = path + ".\(getpid()).tmp"
        let text = "\(mark.incarnation) \(mark.sequence)\n"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else { return }
        if rename(temporary, path) != 0 { unlink(temporary) }
    }

    private func createFolder() {
        var prefix = folder.hasPrefix("/") ? "" : "."
        for part in folder.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST { return }
        }
    }
}
