/// A binary min-heap of timed events. Ties in time keep insertion order (a sequence number), so
/// the run never depends on the heap's internal order.
///
/// The heap holds only plain keys (time, sequence, slot); the events themselves (byte arrays,
/// closures) stay put in `slots` until popped, so sifting never copies or retains them.
struct EventQueue<Event> {
    private struct Key {
        var time: Int64
        var sequence: UInt64
        var slot: Int
    }

    private var heap: [Key] = []
    private var slots: [Event?] = []
    private var freeSlots: [Int] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var nextTime: Int64? { heap.first?.time }

    mutating func push(_ event: Event, at time: Int64) {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = event
        } else {
            slot = slots.count
            slots.append(event)
        }
        heap.append(Key(time: time, sequence: nextSequence, slot: slot))
        nextSequence += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard before(child, parent) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (time: Int64, event: Event)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, before(left, smallest) { smallest = left }
            if right < heap.count, before(right, smallest) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        let event = slots[top.slot].take()!
        freeSlots.append(top.slot)
        assert(slots.count == heap.count + freeSlots.count)
        return (top.time, event)
    }

    private func before(_ a: Int, _ b: Int) -> Bool {
        heap[a].time != heap[b].time ? heap[a].time < heap[b].time : heap[a].sequence < heap[b].sequence
    }
}
