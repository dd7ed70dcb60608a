import LifeSync

extension FileRecordingStorage {
    /// What `lifesync attach` does: copies `source` into storage as `{id}.{ext}` (synced, hashed
    /// while copying) and registers the recording in `replica` as pending, its `file_name` the
    /// source's base name unless `fileName` is given. If registering fails, the copy is removed
    /// again, so nothing is left half-attached. The metadata is signed with `signer`, by default
    /// the replica's node key (`<replica>.key`, made if missing).
    package func attach(_ source: String, fileName: String? = nil, to replica: Replica, entryID: String? = nil, mediaType: String,
                       random: RandomSource, signer: RecordingSigner? = nil) throws -> Recording {
        let fileName = fileName ?? String(source.split(separator: "/", omittingEmptySubsequences: true).last ?? "")
        if let problem = Recording.fileNameProblem(fileName) { throw ReplicaError.invalid(ValidationError(field: "file_name", reason: problem)) }
        let signer = try signer ?? NodeKey.loadOrCreate(path: NodeKey.path(forReplica: replica.path), nodeID: replica.identity.nodeID)
        let id = Identifier.make(role: replica.identity.role, random: random)
        let storageName = Recording.storageName(id: id, fileName: fileName)
        let (size, sha) = try importFile(from: source, as: storageName, id: id)
        let recording = Recording(id: id, fileName: fileName, size: size, sha256: sha, mediaType: mediaType, entryID: entryID,
                                  originNode: replica.identity.nodeID, createdAt: replica.now)
        do {
            try replica.addRecording(recording, signedBy: signer)
        } catch {
            try? remove(storageName)
            throw error
        }
        return recording
    }
}
