import CTresorSystem
import FoundationEssentials
import Glibc

/// A core dump is a copy of process memory on disk: unlocked class keys and decrypted
/// secrets would end up in a file that outlives the lock.
enum CoreDumpsCheck {
    static let id = "core-dumps"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        var limit = rlimit()
        let haveLimit = getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0
        // If the limit cannot be read, assume the worst.
        let softLimit = haveLimit ? limit.rlim_cur : rlim_t.max
        // 1 = dumpable; 2 (suid_dumpable) still writes a core, only owned by root; -1 (error) assumes the worst.
        let dumpable = tresor_is_dumpable()

        var reason = ""
        if let pattern = EnvironmentProbe.readLine(context.procRoot.appendingPathComponent("sys/kernel/core_pattern")),
            pattern.hasPrefix("|")
        {
            reason =
                " Note: core_pattern pipes cores to a program (\(pattern.dropFirst())), which may store them elsewhere, "
                + "e.g. systemd-coredump under /var/lib/systemd/coredump."
        }

        if softLimit > 0 && dumpable != 0 {
            // RLIM_INFINITY is ~0, but Swift cannot import the macro as unsigned.
            let limitText = softLimit == rlim_t.max ? "unlimited" : "\(softLimit) bytes"
            return EnvironmentFinding(
                check: id, severity: .warning,
                summary: "core dumps possible (RLIMIT_CORE \(limitText), process dumpable)",
                reason: "A crash could write secrets and unlocked keys in memory to disk. "
                    + "tresord turns dumps off for itself; for the CLI set `ulimit -c 0`." + reason)
        }
        let why = softLimit == 0 ? "RLIMIT_CORE is 0" : "the process is not dumpable"
        return EnvironmentFinding(
            check: id, severity: .ok,
            summary: "core dumps off (\(why))",
            reason: "A crash cannot write this process's memory to a core file." + reason)
    }
}
