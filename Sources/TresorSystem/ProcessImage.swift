import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// What a process runs now: the executable file the kernel mapped for it (its device and inode,
/// through `/proc/<pid>/exe`) and when the process started.
///
/// A process that executes another program has another image; a pid given to a new process has
/// another start time. Comparing two images of one pid taken at different times tells whether it
/// is still the program it was (docs/SECURITY.md, "Borrowed bus connections").
public struct ProcessImage: Sendable, Hashable {
    /// The executable's file.
    public var executable: FileIdentity
    /// When the process started, in clock ticks after boot (`/proc/<pid>/stat`, field 22).
    public var startTime: UInt64

    public init(executable: FileIdentity, startTime: UInt64) {
        self.executable = executable
        self.startTime = startTime
    }

    /// The path of the program this process runs (`/proc/self/exe`); nil where `/proc` cannot
    /// tell (then the caller falls back on `argv[0]` or gives up, as fits).
    public static var ownExecutablePath: String? { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") }

    /// The image of process `pid` now, or nil when it is gone or cannot be read.
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    public static func of(pid: Int32, procRoot: String = "/proc") -> ProcessImage? {
        guard let executable = executable(of: pid, procRoot: procRoot), let fields = ProcessStat(pid: pid, procRoot: procRoot) else { return nil }
        return ProcessImage(executable: executable, startTime: fields.startTime)
    }

    /// The executable file process `pid` runs now: one `stat`, which follows the magic link of
    /// `/proc/<pid>/exe` to the file the kernel mapped, whatever its path says.
    public static func executable(of pid: Int32, procRoot: String = "/proc") -> FileIdentity? {
        var info = stat()
        guard stat("\(procRoot)/\(pid)/exe", &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    /// Whether the file at `path`, as this process sees it, is the file open at `fd`: same device and
    /// inode. A path read from `/proc/<pid>/exe` names the file in *that* process's mount namespace;
    /// a private bind mount makes it name another program there than here.
    /// - Parameters:
    ///   - path: a path in this process's view of the file system.
    ///   - fd: an open file.
    public static func path(_ path: String, isFileOpenAt fd: Int32) -> Bool {
        var atPath = stat(), open = stat()
        guard stat(path, &atPath) == 0, fstat(fd, &open) == 0 else { return false }
        return FileIdentity(atPath) == FileIdentity(open)
    }
}

/// A file, by the device it is on and its inode: what two paths or descriptors share when they
/// are the same file.
public struct FileIdentity: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    init(_ info: stat) { self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) }
}

/// The namespaces a process lives in, compared with this process's.
public enum ProcessNamespaces {
    /// Whether process `pid` shares this process's user and mount namespaces: only then does a path it
    /// runs from, or a uid it has, mean here what it means there. False when they cannot be read.
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    public static func sharesUserAndMount(with pid: Int32, procRoot: String = "/proc") -> Bool {
        guard let ours = own else { return false }
        return zip(["user", "mnt"], ours).allSatisfy { kind, ours in
            var theirs = stat()
            return stat("\(procRoot)/\(pid)/ns/\(kind)", &theirs) == 0 && FileIdentity(theirs) == ours
        }
    }

    /// This process's user and mount namespaces, read once (nothing in Tresor calls `setns` or
    /// `unshare`): every new Secret Service client and each of its ancestors is compared with them.
    private static let own: [FileIdentity]? = {
        let found = ["user", "mnt"].compactMap { kind -> FileIdentity? in
            var ours = stat()
            return stat("/proc/self/ns/\(kind)", &ours) == 0 ? FileIdentity(ours) : nil
        }
        return found.count == 2 ? found : nil
    }()
}
