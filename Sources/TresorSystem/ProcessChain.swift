import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A process as the user is shown it when asked about it: its pid, the executable it runs and
/// its command line, read from `/proc/<pid>`. An approval request carries it as it is
/// (`ApprovalProcess` on the wire).
public struct ProcessSummary: Codable, Sendable, Equatable {
    public var pid: Int32
    /// The executable's path as the kernel names it (`/proc/<pid>/exe`), or "unknown".
    public var executable: String
    /// Its arguments, the program's name first; empty for a kernel thread or a process gone.
    public var commandLine: [String]

    public init(pid: Int32, executable: String, commandLine: [String]) {
        self.pid = pid
        self.executable = executable
        self.commandLine = commandLine
    }
}

/// Who started a process: the process, its parent, its parent's parent… as `/proc` shows them
/// now. Shown to the user who is asked to allow the process something, so they can tell a
/// program they ran from one started by something they did not run. A same-user process can
/// arrange its parents, so this informs the user; it proves nothing.
public enum ProcessChain {
    /// The longest command line kept of each process: enough to recognize it.
    public static let commandLineLimit = 1024

    /// Process `pid` and its parents, nearest first, up to (without) `init` or the first process of
    /// another user — whose command line is that user's, shown to nobody else (a root process's
    /// can carry tokens) — at most `limit` of them.
    /// - Parameters:
    ///   - pid: the process.
    ///   - limit: how many processes at most.
    ///   - procRoot: where procfs is mounted.
    /// - Returns: empty when `pid` is gone.
    public static func of(pid: Int32, limit: Int = 12, procRoot: String = "/proc") -> [ProcessSummary] {
        var chain: [ProcessSummary] = []
        var next = pid
        let user = owner(of: pid, procRoot: procRoot)
        while next > 1, chain.count < limit, owner(of: next, procRoot: procRoot) == user, let fields = ProcessStat(pid: next, procRoot: procRoot) {
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(procRoot)/\(next)/exe")) ?? "unknown"
            chain.append(ProcessSummary(pid: next, executable: executable, commandLine: commandLine(of: next, procRoot: procRoot)))
            next = fields.parent
        }
        return chain
    }

    /// The user process `pid` runs as (the owner of `/proc/<pid>`); nil when it is gone.
    static func owner(of pid: Int32, procRoot: String) -> uid_t? {
        var info = stat()
        guard stat("\(procRoot)/\(pid)", &info) == 0 else { return nil }
        return info.st_uid
    }

    /// The arguments of process `pid` (`/proc/<pid>/cmdline`), the first ``commandLineLimit`` bytes.
    static func commandLine(of pid: Int32, procRoot: String) -> [String] {
        let fd = open("\(procRoot)/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: commandLineLimit)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return [] }
        var bytes = buffer[..<count]
        if bytes.last == 0 { bytes = bytes.dropLast() }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }
}
