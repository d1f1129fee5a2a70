import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The environment the daemon runs in. A process of the same user that sets `LD_PRELOAD` for
/// the daemon it starts runs its own code inside it, beside every passcode typed afterwards;
/// and Swift's crash handler would print registers and memory into the daemon's log.
public enum DaemonEnvironment {
    /// Variables that make the dynamic loader run other code in the process.
    public static let loaderVariables = ["LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH"]

    /// What the daemon needs from its starter's environment, and nothing else (the CLI starts
    /// `tresord` with these only). A debug build also passes ``debugKeyDerivationRounds`` on, so
    /// that a daemon the CLI starts in a test derives keys as the test's own daemons do.
    public static let allowed: Set<String> = {
        var names: Set = [
            "HOME", "USER", "LOGNAME", "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
            "TRESOR_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME",
            "DBUS_SESSION_BUS_ADDRESS",
        ]
        #if DEBUG
        names.insert(debugKeyDerivationRounds)
        #endif
        return names
    }()

    /// A debug `tresord` started with this variable derives new keys with that many PBKDF2
    /// rounds, not production's (the tests' daemons; docs/ARCHITECTURE.md, "Tests"). A release
    /// build neither reads nor passes it.
    public static let debugKeyDerivationRounds = "TRESOR_DEBUG_KDF_ROUNDS"

    /// Swift's runtime reads this at start: with it, a crash prints no backtrace, registers or
    /// memory (the log is a file of the home, readable by the user's other processes).
    public static let backtraceOff = ("SWIFT_BACKTRACE", "enable=no")

    /// The environment to start the daemon with: `environment` cut to ``allowed``, the crash
    /// handler off.
    public static func forDaemon(from environment: [String: String]) -> [String: String] {
        var clean = environment.filter { allowed.contains($0.key) }
        clean[backtraceOff.0] = backtraceOff.1
        return clean
    }

    /// Why the daemon must not run with `environment`, or nil: a loader variable is set.
    public static func refusal(_ environment: [String: String]) -> String? {
        guard let variable = loaderVariables.first(where: { environment[$0] != nil }) else { return nil }
        return "\(variable) is set: another program's code would run inside tresord, beside your passcode. Start tresord without it."
    }

    /// Starts this executable again with the crash handler off, unless it is off already.
    /// Returns only when it is off (or the re-execution failed).
    public static func reexecutingWithoutBacktracer(arguments: [String], environment: [String: String]) {
        guard environment[backtraceOff.0] != backtraceOff.1 else { return }
        var next = environment
        next[backtraceOff.0] = backtraceOff.1
        var argv = arguments.map { strdup($0) } + [nil]
        var envp = next.map { strdup("\($0.key)=\($0.value)") } + [nil]
        execve("/proc/self/exe", &argv, &envp)
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }

    /// Points standard output and error at the home's log (appended, private to the user) when they go
    /// nowhere: a daemon the session bus started has `/dev/null` there, and its log would be
    /// lost while `tresor daemon logs` showed an older daemon's. One started otherwise keeps
    /// its own (a terminal, the journal, the CLI's log file).
    /// - Parameter paths: the home, whose ``TresorPaths/daemonLog`` it is.
    /// - Returns: whether the log now goes to the home's.
    @discardableResult
    public static func loggingToTheHomeIfDiscarded(_ paths: TresorPaths) -> Bool {
        var error = stat(), null = stat()
        guard fstat(2, &error) == 0, stat("/dev/null", &null) == 0, error.st_mode & S_IFMT == S_IFCHR, error.st_rdev == null.st_rdev
        else { return false }
        guard let fd = try? paths.openDaemonLog(), fd >= 0 else { return false }
        defer { close(fd) }
        return dup2(fd, 1) >= 0 && dup2(fd, 2) >= 0
    }
}
