import LifeSync

/// A node's wall clock in the simulation: virtual time plus the node's offset and drift, with
/// jumps forward and back. What the node's HLC reads; timers run on plain virtual time.
final class SimulatedClock: WallClock {
    /// Virtual time of the whole simulation, in ms since the epoch of the run.
    var virtualTime: Int64 = 0
    /// This node's error: a fixed offset (jumps change it) and a drift in parts per million.
    var offset: Int64
    var driftPPM: Int64
    let epoch: Int64

    init(epoch: Int64, offset: Int64, driftPPM: Int64) {
        self.epoch = epoch
        self.offset = offset
        self.driftPPM = driftPPM
    }

    func nowMilliseconds() -> Int64 { epoch + virtualTime + offset + virtualTime * driftPPM / 1_000_000 }
}
