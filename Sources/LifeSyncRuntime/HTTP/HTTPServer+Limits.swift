import LifeSync
import LifeSyncAPI
import LifeSyncHTTP

extension HTTPServer {
    /// What HTTP clients can make the node hold, beside what one request may (`HTTPLimits`).
    package struct Limits: Sendable {
        /// Open HTTP connections; one more is answered 503 and closed at once.
        package var maximumConnections = 64
        /// Bytes read from one connection per poll round.
        package var readSize = 64 * 1024
        /// Responses queued for a client beyond which its next pipelined request waits (and
        /// nothing more is read from it) until they drain.
        package var maximumQueuedOutput = 4 << 20
        /// A client that reads none of its queued response for this long is dropped. Ms.
        package var writeStall: Int64 = 30_000
        /// Open event streams (`/api/changes/stream`); one more is answered 503.
        package var maximumEventStreams = 16
        /// A streamed body is pulled only while less than this is queued for its client, in
        /// pieces of about `bodyPieceSize`: what one stream can make the node hold.
        package var streamQueueBound = 256 * 1024
        package var bodyPieceSize = 64 * 1024
        /// What one request may be; an upload (`LifeLogAPI.uploadRoute`) has its own body bound,
        /// `maximumUpload`.
        package var request = HTTPLimits()
        package var timeouts = HTTPConnection.Timeouts()
        /// The largest recording `POST /api/recordings` takes, buffered whole before it is
        /// stored (so a cut upload stores nothing): `serve --http-max-upload`.
        package var maximumUpload: Int {
            get { request.bodyBytesByRoute[LifeLogAPI.uploadRoute] ?? request.bodyBytes }
            set {
                precondition((0...Self.uploadCeiling).contains(newValue), "an upload bound within 0…uploadCeiling")
                request.bodyBytesByRoute[LifeLogAPI.uploadRoute] = newValue
            }
        }
        /// Uploads are held in memory while they arrive: more than this per request is refused.
        package static let uploadCeiling = 256 << 20

        package init() {
            maximumUpload = LifeLogAPI.defaultMaximumUpload
        }
    }
}
