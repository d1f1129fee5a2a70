/// The processes a process descends from within its login session.
public enum ProcessAncestors {
    /// The most ancestors read: a deeper chain is cut there.
    public static let limit = 32

    /// The ancestors of process `pid`, its parent first, up to the leader of its session (included);
    /// a chain that never meets the leader (a process that left its session) ends before pid 1.
    /// Empty when `pid` cannot be read.
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    /// - Returns: the ancestors' pids, the parent first, at most ``limit``.
    public static func of(_ pid: Int32, procRoot: String = "/proc") -> [Int32] {
        guard let own = ProcessStat(pid: pid, procRoot: procRoot) else { return [] }
        var chain: [Int32] = []
        var current = own
        var currentPID = pid
        while currentPID != own.session, current.parent > 1, chain.count < limit {
            currentPID = current.parent
            chain.append(currentPID)
            guard let next = ProcessStat(pid: currentPID, procRoot: procRoot) else { break }
            current = next
        }
        return chain
    }

    /// The parent of process `pid`, as the one running process it is now: its pid and start time,
    /// a pair no later process has. Nil when either process cannot be read.
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    /// - Returns: the parent, or nil.
    public static func parent(of pid: Int32, procRoot: String = "/proc") -> RunningProcess? {
        guard let own = ProcessStat(pid: pid, procRoot: procRoot), own.parent > 0, let parent = ProcessStat(pid: own.parent, procRoot: procRoot)
        else {
            return nil
        }
        return RunningProcess(pid: own.parent, startTime: parent.startTime)
    }

    /// The login session process `pid` belongs to: its leader's pid and start time — a pair no
    /// later session has — or nil when either cannot be read.
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    /// - Returns: the leader's pid and start time (clock ticks after boot).
    public static func session(of pid: Int32, procRoot: String = "/proc") -> (leader: Int32, startTime: UInt64)? {
        guard let own = ProcessStat(pid: pid, procRoot: procRoot), let leader = ProcessStat(pid: own.session, procRoot: procRoot) else { return nil }
        return (own.session, leader.startTime)
    }
}

/// One process while it runs: a pid names another process once this one exits, its pid and start
/// time together never do.
public struct RunningProcess: Hashable, Sendable {
    public var pid: Int32
    /// Clock ticks after boot.
    public var startTime: UInt64

    public init(pid: Int32, startTime: UInt64) {
        self.pid = pid
        self.startTime = startTime
    }
}
