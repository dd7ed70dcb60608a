extension Replica {
    /// Checks every copy marked damaged again and clears the mark of those that hold their bytes
    /// again (the user restored the file): they are offered again. Returns their IDs.
    @discardableResult
    package func recheckDamagedRecordings(in storage: RecordingStorage) throws -> [String] {
        var restored: [String] = []
        for recording in try damagedRecordings() where storage.holdsIntact(recording) {
            try clearRecordingDamage(id: recording.id)
            restored.append(recording.id)
        }
        return restored
    }

    /// Takes the copy its storage already holds of a recording whose metadata just arrived: a
    /// replica put back from an older copy forgot files its folder kept (and a watch may have let
    /// go of its own once this node confirmed them). Once the bytes prove intact the recording is
    /// present here, not awaited from a peer. Returns whether it was adopted.
    @discardableResult
    package func adoptStoredCopy(id: String, in storage: RecordingStorage) throws -> Bool {
        guard [nil, .partial].contains(try recordingFile(id: id)?.state), let known = try recording(id: id), !known.deleted,
              storage.exists(known.recording.storageName), storage.holdsIntact(known.recording) else { return false }
        try setRecordingFile(id: id, state: .present, sha256: known.recording.sha256, received: known.recording.size)
        return true
    }
    /// Brings the replica's record of which bytes it holds in line with its storage, as a node
    /// starts: the replica may have been put back from an older copy while its recordings folder
    /// moved on. Every intact copy of a recording it does not count as held is taken
    /// (`adoptStoredCopy`); a recording it counts as held whose file is gone (deleted after the
    /// copy was made) is awaited again, so a peer that holds it sends it. Returns both lists.
    @discardableResult
    package func reconcileStoredCopies(in storage: RecordingStorage) throws -> (adopted: [String], missing: [String]) {
        let adopted = try recordingsWithoutBytes().filter { try adoptStoredCopy(id: $0, in: storage) }
        let missing = try presentRecordings().filter { !storage.exists($0.storageName) }.map(\.id)
        for id in missing { try clearRecordingFile(id: id) }
        return (adopted, missing)
    }
}
