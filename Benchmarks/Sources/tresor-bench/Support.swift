import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Monotonic clock in nanoseconds.
@inline(__always) func nowNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Runs `body` and returns its wall time in milliseconds.
@inline(__always) func timeMs(_ body: () throws -> Void) rethrows -> Double {
    let start = nowNanos()
    try body()
    return Double(nowNanos() - start) / 1e6
}

/// Latency samples (milliseconds) → p50 / p99 / mean / min / max.
func summary(_ samples: [Double]) -> [String: Any] {
    guard !samples.isEmpty else { return ["n": 0] }
    let sorted = samples.sorted()
    func pct(_ p: Double) -> Double {
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[max(0, min(sorted.count - 1, rank))]
    }
    return [
        "n": sorted.count, "p50_ms": pct(50), "p99_ms": pct(99), "mean_ms": sorted.reduce(0, +) / Double(sorted.count),
        "min_ms": sorted.first!, "max_ms": sorted.last!,
    ]
}

/// The machine's load average over 1, 5 and 15 minutes (`/proc/loadavg`), as the runs record it.
func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").prefix(3).joined(separator: " ")
}

func log(_ message: String) {
    FileHandle.standardError.write(Data("[tresor-bench] \(message)\n".utf8))
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A child process started with posix_spawn; environment given in full.
final class Child {
    let pid: pid_t

    init(_ arguments: [String], environment: [String: String], stdinData: Data? = nil, output: String = "/dev/null") throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeFDs: [Int32] = [-1, -1]
        if stdinData != nil {
            guard pipe(&pipeFDs) == 0 else { throw BenchError("pipe failed") }
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[0], 0)
            posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, nil, &argv, &envp)
        guard result == 0 else { throw BenchError("cannot start \(arguments[0]): errno \(result)") }
        self.pid = pid
        if let stdinData {
            close(pipeFDs[0])
            stdinData.withUnsafeBytes { buffer in _ = write(pipeFDs[1], buffer.baseAddress, buffer.count) }
            close(pipeFDs[1])
        }
    }

    /// Waits for the child; returns its exit status.
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xff
    }

    /// Runs a command to its end; throws unless it exits 0.
    static func run(_ arguments: [String], environment: [String: String], stdin: String? = nil, output: String = "/dev/null") throws {
        let child = try Child(arguments, environment: environment, stdinData: stdin.map { Data($0.utf8) }, output: output)
        let status = child.wait()
        guard status == 0 else { throw BenchError("\(arguments.joined(separator: " ")) exited \(status) (see \(output))") }
    }
}

/// `VmRSS` / `VmHWM` of a process, in kB.
func memory(of pid: pid_t) -> (rssKB: Int, hwmKB: Int) {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return (0, 0) }
    var rss = 0, hwm = 0
    for line in text.split(separator: "\n") {
        let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if parts.first == "VmRSS:" { rss = Int(parts[1]) ?? 0 }
        if parts.first == "VmHWM:" { hwm = Int(parts[1]) ?? 0 }
    }
    return (rss, hwm)
}

/// Size in bytes of every file whose name starts with `prefix` in `folder` (db, -wal, -shm).
func filesSize(in folder: URL, prefix: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { $0.hasPrefix(prefix) }.reduce(0) { total, name in
        let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
        return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
    }
}

/// Total size of a folder tree in bytes.
func treeSize(_ folder: URL) -> Int {
    guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey]) else { return 0 }
    var total = 0
    for case let url as URL in walker {
        total += (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
    }
    return total
}

func makeTemporaryFolder(_ prefix: String) throws -> URL {
    var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed") }
    return URL(fileURLWithPath: String(cString: made))
}

/// glibc's mallopt, as the daemon calls it (ProcessHardening.tuneAllocator: M_MMAP_THRESHOLD
/// 256 MiB, M_TRIM_THRESHOLD 512 MiB), so in-process figures match the daemon's allocator.
func tuneAllocatorLikeTheDaemon() {
    // Swift's Glibc module leaves <malloc.h> out: look mallopt up in libc.
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return }
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    let M_TRIM_THRESHOLD: Int32 = -1, M_MMAP_THRESHOLD: Int32 = -3
    _ = mallopt(M_MMAP_THRESHOLD, 256 * 1024 * 1024)
    _ = mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024)
}

/// A tiny deterministic PRNG so runs pick the same items.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// CPU time (user + system, all threads) of a process in milliseconds, from /proc/PID/stat.
func cpuMs(of pid: pid_t) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // after the command: state(0) ppid(1) … utime(11) stime(12)
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) * 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// CPU time of this process in milliseconds.
func selfCPUMs() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
}

/// The unprivileged user the harness runs a scenario as where running as root would change what
/// is measured (the Secret Service: a user's daemon looks at that user's processes only).
/// `tresor-bench`, made with `useradd` on first use, as the tests' `TestUser` is.
struct BenchUser {
    let name: String
    let uid: uid_t
    let gid: gid_t

    static func shared() throws -> BenchUser {
        let name = "tresor-bench"
        if getpwnam(name) == nil {
            try Child.run(
                ["/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                environment: ["PATH": "/usr/sbin:/usr/bin:/bin"])
        }
        guard let entry = getpwnam(name) else { throw BenchError("no user \(name), and useradd made none") }
        return BenchUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// `arguments` run as this user, with no supplementary groups and no capabilities.
    func wrapping(_ arguments: [String]) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"] + arguments
    }
}
