import CTresorSystem
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// What a process holding keys does to itself at start (docs/SECURITY.md §3.9).
public enum ProcessHardening {
    /// Turns core dumps off: the soft and hard `RLIMIT_CORE` become 0 and the process becomes
    /// non-dumpable, which also closes `/proc/<pid>/mem` and `ptrace` to other non-root
    /// processes of the same user.
    public static func disableCoreDumps() throws {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        guard setrlimit(Int32(RLIMIT_CORE.rawValue), &limit) == 0 else {
            throw SecureFileError.systemCall("setrlimit(RLIMIT_CORE)", path: "process", errno: errno)
        }
        guard tresor_set_non_dumpable() == 0 else {
            throw SecureFileError.systemCall("prctl(PR_SET_DUMPABLE)", path: "process", errno: errno)
        }
    }

    /// Keeps glibc from returning large buffers to the kernel after each use: sealing large
    /// attachments otherwise pays an mmap/munmap and page faults per buffer
    /// (BENCHMARKS.md, "Measured design choices").
    public static func tuneAllocator() {
        tresor_tune_allocator(256 * 1024 * 1024, 512 * 1024 * 1024)
    }
}

/// Constants of process creation that Swift's Glibc module leaves out.
public enum ProcessSpawn {
    /// `POSIX_SPAWN_SETSID`: the child starts its own session, out of the terminal's reach.
    public static var newSessionFlag: Int16 { tresor_posix_spawn_setsid_flag() }
}

extension ProcessSpawn {
    /// Adds "close every descriptor from `lowest` up" to spawn file actions.
    public static func closeDescriptors(from lowest: Int32, in actions: inout posix_spawn_file_actions_t) {
        _ = tresor_spawn_close_from(&actions, lowest)
    }
}
