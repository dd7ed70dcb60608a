import LifeSync
import Testing

/// `InputBudget`'s turns: while the bytes of unfinished frames are over the limit, one frame at a
/// time is read; a frame that does not grow in its turn passes it on, and only frames that had
/// turns are closed as stalled.
@Suite struct InputBudgetTests {
    /// A budget of 100 bytes, spent by `frames` (connection, bytes held, bytes lacking) at t=0.
    static func spent(_ frames: [(Int, Int, Int)]) -> InputBudget {
        var budget = InputBudget(limit: 100, stalledTimeout: 1_000, minimumTurn: 50)
        for (connection, bytes, remaining) in frames { budget.note(connection, held: bytes, remaining: remaining, now: 0) }
        #expect(budget.isSpent)
        return budget
    }

    /// The attack: a frame one byte short, never finished, is always the closest to complete.
    /// It may hold the turn for `minimumTurn` only; the honest frame then finishes.
    @Test func aFrameOneByteShortThatNeverGrowsPassesItsTurn() {
        var budget = Self.spent([(1, 60, 1), (2, 50, 70_000)])
        budget.chooseFinishing(now: 0)
        #expect(budget.finishing == 1 && budget.waits(2))
        #expect(budget.turnEnds == 50)
        budget.chooseFinishing(now: 30)
        #expect(budget.finishing == 1, "a turn lasts minimumTurn at least")
        budget.chooseFinishing(now: 50)
        #expect(budget.finishing == 2 && budget.waits(1), "no growth in its turn: passed on")
        // The honest frame grows at every read and keeps the turn as long as it does.
        for t in stride(from: Int64(60), through: 2_000, by: 20) {
            budget.note(2, held: 50 + Int(t), remaining: 70_000 - Int(t), now: t)
            budget.chooseFinishing(now: t)
            #expect(budget.finishing == 2)
        }
        budget.note(2, held: 0, remaining: nil, now: 2_010)
        budget.chooseFinishing(now: 2_010)
        #expect(!budget.isSpent && budget.finishing == nil, "the finished frame freed the budget")
    }

    @Test func turnsGoRoundEveryFrameThatDoesNotGrow() {
        var budget = Self.spent([(1, 40, 1), (2, 40, 2), (3, 40, 3)])
        var order: [Int] = []
        for t in stride(from: Int64(0), through: 400, by: 50) {
            budget.chooseFinishing(now: t)
            order.append(budget.finishing!)
        }
        #expect(order == [1, 2, 3, 1, 2, 3, 1, 2, 3], "closest first, then each passed-over frame waits for the others")
    }

    /// A frame that waits for its turn does not grow because it is not read: that is no stall.
    @Test func onlyFramesThatHadTurnsAreClosedAsStalled() {
        var budget = Self.spent([(1, 40, 1), (2, 40, 500), (3, 40, 600)])
        budget.chooseFinishing(now: 0)
        budget.chooseFinishing(now: 50)
        #expect(budget.finishing == 2)
        for t in stride(from: Int64(60), through: 5_000, by: 20) {
            budget.note(2, held: 40 + Int(t / 20), remaining: 500, now: t)
            budget.chooseFinishing(now: t)
        }
        #expect(budget.stalled(now: 5_000).isEmpty, "frame 3 never had a turn; frame 1 had one")
        // Frame 2 stops growing: the turns go round, and the frames that waste theirs are closed.
        for t in stride(from: Int64(5_050), through: 8_000, by: 50) { budget.chooseFinishing(now: t) }
        #expect(budget.stalled(now: 8_000).map(\.connection) == [1, 2, 3])
    }

    /// Turns never take the sum past `limit + overdraft`: a frame whose completion would does
    /// not get one (it waits until parked frames are closed and free room).
    @Test func aFrameThatDoesNotFitTheOverdraftWaits() {
        var budget = InputBudget(limit: 100, stalledTimeout: 1_000, overdraft: 50, minimumTurn: 50)
        budget.note(1, held: 60, remaining: 1, now: 0)
        budget.note(2, held: 50, remaining: 70, now: 0)
        for t in stride(from: Int64(0), through: 500, by: 50) {
            budget.chooseFinishing(now: t)
            #expect(budget.finishing == 1 && budget.waits(2), "at t=\(t)")
        }
        budget.release(1)
        budget.note(3, held: 60, remaining: 30, now: 500)
        budget.chooseFinishing(now: 500)
        #expect(budget.finishing == 3, "30 more bytes fit (110 held, room to 150); frame 2's 70 do not")
    }

    @Test func underTheLimitNoFrameWaitsAndNoneStalls() {
        var budget = InputBudget(limit: 100, stalledTimeout: 1_000)
        budget.note(1, held: 60, remaining: 1, now: 0)
        budget.chooseFinishing(now: 5_000)
        #expect(!budget.waits(1) && budget.finishing == nil && budget.turnEnds == nil && budget.stalled(now: 5_000).isEmpty)
        budget.note(2, held: 50, remaining: 9, now: 5_000)
        budget.chooseFinishing(now: 5_000)
        #expect(budget.finishing == 1 && budget.waits(2))
        budget.release(1)
        #expect(budget.total == 50 && !budget.isSpent && !budget.waits(2))
    }
}
