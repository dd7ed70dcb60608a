/// What the HTTP API needs of recording files that only the runtime can do: say where a stored
/// file is on disk, and store an upload the way `lifesync attach` stores a file (copied into
/// storage, synced, hashed, registered and signed by the node's key; nothing left behind if any
/// step fails).
package protocol RecordingUploads: AnyObject {
    /// The path of the stored file called `storageName`, or nil.
    func path(of storageName: String) -> String?
    func attach(bytes: [UInt8], fileName: String, mediaType: String, entryID: String?) throws -> Recording
}
