import Glibc
import LifeSyncRuntime
import Testing

/// What the benches read of a process from outside (`bench mesh` compares the busiest node's
/// processor time): the figures are this process's own, and grow with the work it does.
struct ProcessMemoryTests {
    @Test func processorTimeGrowsWithWork() {
        let pid = getpid()
        let before = ProcessMemory.cpuSeconds(pid)
        #expect(before > 0)
        // Spins until a tenth of a second more is counted (the clock ticks in hundredths), for
        // 20 s at most however busy the machine.
        var start = timespec(), now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        var sum: UInt64 = 0, spent = 0.0
        repeat {
            for i in 0..<1_000_000 { sum &+= UInt64(i) &* 2_654_435_761 }
            spent = ProcessMemory.cpuSeconds(pid) - before
            clock_gettime(CLOCK_MONOTONIC, &now)
        } while spent < 0.1 && now.tv_sec - start.tv_sec < 20
        #expect(sum != 1)
        #expect(spent >= 0.1, "\(spent) s of processor time counted after 20 s of spinning")
        #expect(ProcessMemory.resident(pid) > 0)
    }

    @Test func aProcessThatIsGoneReadsAsMinusOne() {
        #expect(ProcessMemory.cpuSeconds(Int32.max) == -1)
        #expect(ProcessMemory.resident(Int32.max) == -1)
    }
}
