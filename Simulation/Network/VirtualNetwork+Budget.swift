import LifeSync

/// A core's input budget on the simulated network (`Configuration.maximumBufferedInput`): what
/// the runtime's poll loop does with `NodeServer.Limits.maximumBufferedInput`, by the same rule
/// (`InputBudget`). Bytes for a connection that must wait are held back in order, as the
/// kernel's buffers would hold them, and handed over in rounds every `budgetRound` ms, in pieces
/// of at most `readPiece` (the runtime's `readSize`), and of `budgetPiece` while the budget is
/// spent (its `budgetReadSize`); a frame that stays unchanged in its turns too long meanwhile is
/// closed.
///
/// After every hand-over the bounds are checked, and a breach is a violation of the run: no
/// session holds more than one frame (`Framing.headerSize + Framing.maximumFrameLength`); while
/// the budget is spent, none but the one whose turn it is is handed bytes while it holds a frame;
/// and all of a core's sessions together hold no more than the budget, plus the piece that spent
/// it, plus one frame (the overdraft turns may use), plus a small piece for each open connection
/// (one that held nothing is handed one, and then waits).
extension VirtualNetwork {
    static let budgetRound: Int64 = 20
    static let budgetPiece = 64 * 1024
    static let readPiece = 1 << 20

    /// The input budget of `name`'s core as it stands (nil: none is configured, or no such host).
    package func inputBudget(of name: String) -> InputBudget? { hosts[name]?.inputBudget }

    /// A fresh budget for a core that starts (a new process holds nothing).
    func startBudget(of host: Host) {
        host.heldBack = [:]
        host.budgetRoundDue = false
        host.inputBudget = configuration.maximumBufferedInput.map { InputBudget(limit: $0, stalledTimeout: configuration.stalledFrameTimeout) }
    }

    /// Bytes arrived for `end` of a core with a budget: behind what is held back for it already.
    func holdBack(_ bytes: [UInt8], for end: Int, of name: String) {
        guard let host = hosts[name] else { return }
        let waiting = host.heldBack[end] != nil
        host.heldBack[end, default: []].append(bytes)
        handOver(to: end, of: name)
        if !waiting && host.heldBack[end] != nil { count("input_budget_held_back") }
    }

    /// The end's side was told of the close: what it held is free, what was held back is gone.
    func releaseBudget(of end: Int, host: Host) {
        host.heldBack[end] = nil
        host.inputBudget?.release(end)
    }

    /// Hands what is held back for `end` to the core while the budget lets it.
    func handOver(to end: Int, of name: String) {
        guard let host = hosts[name] else { return }
        for _ in 0..<100_000 {
            guard let core = host.core, var budget = host.inputBudget, let queue = host.heldBack[end], let first = queue.first,
                  let connection = connections[end / 2], connection.open, !connection.closed[end % 2] else { return }
            budget.chooseFinishing(now: now)
            host.inputBudget = budget
            if budget.waits(end) {
                scheduleBudgetRound(for: name)
                return
            }
            let piece = min(first.count, budget.isSpent ? Self.budgetPiece : Self.readPiece)
            var rest = Array(queue.dropFirst())
            if piece < first.count { rest.insert(Array(first[piece...]), at: 0) }
            host.heldBack[end] = rest.isEmpty ? nil : rest
            if budget.isSpent && budget.holds(end) > 0 && budget.finishing != end {
                violations.append("t=\(now): \(name) was handed bytes on end \(end), which holds an unfinished frame, while its input budget was spent")
            }
            perform(core.received(connection: end, bytes: piece < first.count ? Array(first[..<piece]) : first, now: now), on: name)
            noteInput(of: end, host: host, name: name)
        }
    }

    /// Keeps the budget current after a hand-over and checks the bounds.
    func noteInput(of end: Int, host: Host, name: String) {
        guard let core = host.core, var budget = host.inputBudget else { return }
        let (held, remaining) = core.bufferedInput(connection: end)
        let wasSpent = budget.isSpent
        budget.note(end, held: held, remaining: remaining, now: now)
        host.inputBudget = budget
        if budget.isSpent && !wasSpent {
            count("input_budget_spent")
            scheduleBudgetRound(for: name)
        }
        let frame = Framing.headerSize + Framing.maximumFrameLength
        if held > frame {
            violations.append("t=\(now): \(name)'s session on end \(end) holds \(held) bytes of an unfinished frame, more than one frame (\(frame))")
        }
        let bound = budget.limit + Self.readPiece + frame + openConnections(of: name).count * Self.budgetPiece
        if budget.total > bound {
            violations.append("t=\(now): \(name)'s sessions hold \(budget.total) bytes of unfinished frames together, over \(bound) "
                              + "(the budget \(budget.limit), a read, a frame, a small piece per connection)")
        }
    }

    func scheduleBudgetRound(for name: String) {
        guard let host = hosts[name], !host.budgetRoundDue else { return }
        host.budgetRoundDue = true
        let life = host.life
        schedule(at: now + Self.budgetRound) { [unowned self] in budgetRound(name, life: life) }
    }

    /// A round: what waits is handed over if it may now, and frames stalled while the budget is
    /// spent are closed. Another round follows while anything waits or the budget is spent.
    func budgetRound(_ name: String, life: Int) {
        guard let host = hosts[name], host.life == life, host.core != nil else { return }
        host.budgetRoundDue = false
        host.inputBudget?.chooseFinishing(now: now)  // a turn that found nothing to read passes on
        for end in host.heldBack.keys.sorted() { handOver(to: end, of: name) }
        for stalled in host.inputBudget?.stalled(now: now) ?? [] {
            guard let connection = connections[stalled.connection / 2], connection.open, !connection.closed[stalled.connection % 2] else { continue }
            count("input_budget_stalled_closed")
            note("budget: \(name) closes end \(stalled.connection), \(stalled.bytes) bytes unchanged for \(stalled.heldFor) ms")
            close(stalled.connection)
        }
        if !host.heldBack.isEmpty || host.inputBudget?.isSpent == true { scheduleBudgetRound(for: name) }
    }
}
