import Glibc
import LifeSync

/// `RecordingUploads` over a node's recording folder: an HTTP upload is written to a private
/// file in `.incoming` and then attached exactly as `lifesync attach` attaches a user's file
/// (the same copy, hash, sync, signature and clean-up), so there is one way a recording enters
/// storage. The private file is removed whatever happens.
final class FileRecordingUploads: RecordingUploads {
    let storage: FileRecordingStorage
    let replica: Replica
    let signer: RecordingSigner
    let random: RandomSource

    init(storage: FileRecordingStorage, replica: Replica, signer: RecordingSigner, random: RandomSource) {
        self.storage = storage
        self.replica = replica
        self.signer = signer
        self.random = random
    }

    func path(of storageName: String) -> String? {
        storage.exists(storageName) ? try? storage.path(of: storageName) : nil
    }

    func attach(bytes: [UInt8], fileName: String, mediaType: String, entryID: String?) throws -> Recording {
        // Not `{id}.part`, so a node starting meanwhile takes it for no download of its own.
        let upload = storage.incoming + "/upload-" + Hex.encode((0..<8).map { _ in UInt8(truncatingIfNeeded: random.nextUInt64()) }) + ".tmp"
        let fd = open(upload, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw RecordingStorageError("cannot create \(upload): \(errnoText())") }
        defer { unlink(upload) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = errnoText()
                close(fd)
                throw RecordingStorageError("cannot write \(upload): \(reason)")
            }
            written += n
        }
        close(fd)
        return try storage.attach(upload, fileName: fileName, to: replica, entryID: entryID, mediaType: mediaType, random: random, signer: signer)
    }
}
