import TresorProtocol
import TresorSystem

/// The `tresor approve` asking for a request, and whether it is the user: in the foreground
/// process group of its controlling terminal, where what the user types goes. Any process of the
/// user can run the genuine `tresor approve`; run in the background, with no terminal or as a
/// background job of one, it would take every request first — seeing who asks for which item —
/// and refuse it, and the user's own approver would never see it (docs/SECURITY.md, "Who may
/// approve").
struct Approver: Sendable {
    let pid: Int32
    /// The process's start, so that a pid given to another process later is not taken for it.
    let started: UInt64

    /// - Throws: `missingEntitlement` saying why, when `pid` is not in the foreground of a terminal.
    init(pid: Int32) throws {
        guard ControllingTerminal.inForeground(pid: pid) != nil, let image = ProcessImage.of(pid: pid) else {
            throw APIError(
                .missingEntitlement,
                "tresor approve answers only in the foreground of a terminal: run it there, not in the background or without a terminal")
        }
        self.pid = pid
        started = image.startTime
    }

    /// Whether it is still the same process, in the foreground of its terminal.
    @Sendable func isUser() -> Bool {
        ControllingTerminal.inForeground(pid: pid) != nil && ProcessImage.of(pid: pid)?.startTime == started
    }
}
