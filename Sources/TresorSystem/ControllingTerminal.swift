import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The terminal a process belongs to, as the kernel records it: its session, the session's
/// controlling terminal, and when the session's leader (the terminal's shell) started.
///
/// A process can leave its session (`setsid`) but never join another one, and only a session
/// without a controlling terminal may acquire one. So a process run from another terminal, from
/// a desktop launcher or a service has a different value: this is what `tresor unlock --for`
/// binds a terminal session to (docs/SECURITY.md, "Terminal sessions"). The leader's start time
/// tells a shell from a later process that happens to reuse its pid.
public struct ControllingTerminal: Sendable, Hashable {
    /// The session id: the pid of the session's leader.
    public var session: Int32
    /// The controlling terminal's device number (`tty_nr`).
    public var device: UInt64
    /// When the session's leader started, in clock ticks after boot.
    public var leaderStart: UInt64

    public init(session: Int32, device: UInt64, leaderStart: UInt64) {
        self.session = session
        self.device = device
        self.leaderStart = leaderStart
    }

    /// The controlling terminal of process `pid`, or nil when it has none (a process started by
    /// a service, a desktop launcher, or `setsid`), or its session's leader is gone.
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    public static func of(pid: Int32, procRoot: String = "/proc") -> ControllingTerminal? {
        guard let fields = ProcessStat(pid: pid, procRoot: procRoot), fields.terminal != 0, fields.session > 0,
            let leader = ProcessStat(pid: fields.session, procRoot: procRoot),
            leader.session == fields.session
        else { return nil }
        return ControllingTerminal(session: fields.session, device: fields.terminal, leaderStart: leader.startTime)
    }

    /// The controlling terminal of process `pid` when the process is in that terminal's foreground
    /// process group now — where what the user types goes — or nil: no terminal, or a background
    /// job there (`cmd &` with job control, a stopped job). A process can open a terminal of its
    /// own, so this tells a process the user runs in a terminal from a background or terminal-less
    /// one, not the user from every other program (docs/SECURITY.md, "Who may approve").
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    /// - Returns: the terminal, or nil.
    public static func inForeground(pid: Int32, procRoot: String = "/proc") -> ControllingTerminal? {
        guard let fields = ProcessStat(pid: pid, procRoot: procRoot), fields.terminalForegroundGroup > 0,
            fields.terminalForegroundGroup == fields.processGroup
        else { return nil }
        return of(pid: pid, procRoot: procRoot)
    }

    /// The terminal's name as `tty` prints it without `/dev/`: `pts/3`, `tty2`, or its numbers.
    public var name: String {
        // Linux's encoding of dev_t in tty_nr: minor bits 0–7 and 20–31, major bits 8–19.
        let major = (device >> 8) & 0xfff
        let minor = (device & 0xff) | ((device >> 12) & 0xfff00)
        switch major {
        case 136...143: return "pts/\((major - 136) * 256 + minor)"
        case 4 where minor < 64: return "tty\(minor)"
        default: return "terminal \(major):\(minor)"
        }
    }
}
