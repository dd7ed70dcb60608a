import CLinux
import LifeSync

/// How a node process keeps the memory of the frames it moves.
///
/// A recording travels as 1 MiB chunks, each built into a fresh frame and freed once written to
/// the socket (and each read into a frame-sized buffer on the other side). With glibc's defaults a
/// block that size is either mapped and unmapped on every use or carved from the top of the heap
/// and handed back to the kernel as soon as it is freed; either way every chunk faults its pages
/// in and zeroes them again. `lifesync bench transfer` measured that at about a quarter of the
/// sender's CPU time and a sixth of the receiver's. Keeping freed blocks in the heap, up to a
/// bound, makes the next chunk reuse the same warm pages.
///
/// Process-wide, so only a program that runs a node calls it (`lifesync serve` does); a library
/// embedding `NodeServer` keeps its host's allocator settings unless it calls it too.
///
///     FrameMemory.keepFreedFrames()
package enum FrameMemory {
    /// Blocks below this come from the heap, never from their own mapping: above the largest
    /// frame (`Framing.maximumFrameLength`, 8 MiB) and within glibc's ceiling (32 MiB on 64-bit).
    package static let mappingThreshold: Int32 = 16 << 20
    /// Freed memory at the top of the heap is returned to the kernel only beyond this: a window
    /// of chunks in flight, both ways, with room to spare.
    package static let trimThreshold: Int32 = 64 << 20

    /// Applies both thresholds; false if glibc refused one (the node runs anyway, only slower).
    @discardableResult
    package static func keepFreedFrames() -> Bool {
        precondition(Int(mappingThreshold) > Framing.maximumFrameLength, "every frame fits below the mapping threshold")
        precondition(trimThreshold >= 4 * mappingThreshold, "the trim threshold keeps several frames")
        return mallopt(M_MMAP_THRESHOLD, mappingThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, trimThreshold) == 1
    }
}
