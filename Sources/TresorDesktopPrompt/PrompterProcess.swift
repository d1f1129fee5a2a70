import Foundation
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// Whether a process runs one of the desktop's own prompter executables, as the file at that
/// path in our mount namespace — not merely a file that *was* at that path, or a binary bind-
/// mounted over it in a namespace of its own. The file and namespace comparisons are
/// TresorSystem's (`ProcessImage`, `ProcessNamespaces`), the ones the Secret Service's caller
/// identity makes.
///
/// The rule: the executable the kernel mapped (`/proc/<pid>/exe`, opened) has the device and
/// inode of one of `trusted` paths; that file is a regular file owned by root and writable by
/// nobody else, in folders owned by root and writable by nobody else up to `/`; the process is
/// of our uid and shares our user and mount namespaces; and every file it has mapped as code
/// (`/proc/<pid>/maps`: libraries, GTK modules, an `LD_PRELOAD`) is such a root-owned file too.
struct PrompterProcess {
    let pid: Int32
    /// The trusted path whose file the process runs.
    let executable: String

    /// Checks process `pid` against `trusted`.
    /// - Throws: ``PrompterError/untrustedPrompter(_:)`` saying which rule failed.
    init(pid: Int32, uid: UInt32, trusted: [String], procRoot: String = "/proc") throws {
        self.pid = pid
        let proc = "\(procRoot)/\(pid)"
        guard uid == getuid() else { throw PrompterError.untrustedPrompter("process \(pid) runs as uid \(uid), not \(getuid())") }
        guard ProcessNamespaces.sharesUserAndMount(with: pid, procRoot: procRoot) else {
            throw PrompterError.untrustedPrompter("process \(pid) is in another user or mount namespace")
        }
        let fd = open("\(proc)/exe", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PrompterError.untrustedPrompter("cannot open the executable of process \(pid) (errno \(errno))") }
        defer { close(fd) }
        let shown = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/exe")) ?? "?"
        for listed in trusted {
            // The folders checked are those of the file itself, wherever a link leads.
            guard let resolved = realpath(listed, nil) else { continue }
            let path = String(cString: resolved)
            free(resolved)
            var file = stat()
            guard ProcessImage.path(path, isFileOpenAt: fd), stat(path, &file) == 0 else { continue }
            guard Self.isRootOnly(file, directory: false), Self.foldersAreRootOnly(path) else {
                throw PrompterError.untrustedPrompter("\(path) or a folder above it is not root's alone")
            }
            try Self.checkMappedCode(proc, pid: pid)
            executable = listed
            return
        }
        throw PrompterError.untrustedPrompter("process \(pid) runs \(shown), not \(trusted.joined(separator: " or "))")
    }

    /// Every executable mapping of a file is of a root-owned file the path still names (device
    /// and inode as the kernel lists them), in root-owned folders. Code loaded after this check
    /// is not seen (docs/SECRET-SERVICE.md says what is left).
    private static func checkMappedCode(_ proc: String, pid: Int32) throws {
        // Read to the end: /proc files say they are empty, so reading by their size gets nothing.
        let fd = open("\(proc)/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PrompterError.untrustedPrompter("cannot read the mappings of process \(pid)") }
        let maps = [UInt8](Data(readingToEndOf: fd))
        close(fd)
        guard maps.contains(UInt8(ascii: "\n")) else { throw PrompterError.untrustedPrompter("process \(pid) lists no mappings") }
        var checked = Set<String>(), rootOnlyFolders = Set<String>()
        // As bytes, not Characters: a prompter maps hundreds of lines, read before every prompt.
        for line in maps.split(separator: UInt8(ascii: "\n")) {
            // address perms offset major:minor inode path
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1].contains(UInt8(ascii: "x")) else { continue }
            let path = String(decoding: fields[5].drop(while: { $0 == UInt8(ascii: " ") }), as: UTF8.self)
            guard path.hasPrefix("/") else { continue }  // [vdso], [vsyscall]
            guard checked.insert(path).inserted else { continue }
            let text = fields.map { String(decoding: $0, as: UTF8.self) }
            let device = text[3].split(separator: ":").compactMap { UInt64($0, radix: 16) }
            var file = stat()
            guard device.count == 2, let inode = UInt64(text[4]), stat(path, &file) == 0, UInt64(file.st_ino) == inode,
                UInt64(file.st_dev) == Self.deviceNumber(major: device[0], minor: device[1]),
                isRootOnly(file, directory: false), rootOnlyFolders.contains(Self.folder(of: path)) || foldersAreRootOnly(path)
            else {
                throw PrompterError.untrustedPrompter("process \(pid) runs code from \(path), which is not root's alone")
            }
            rootOnlyFolders.insert(Self.folder(of: path))  // most libraries share a few folders
        }
    }

    private static func folder(of path: String) -> String { (path as NSString).deletingLastPathComponent }

    /// glibc's `makedev`.
    private static func deviceNumber(major: UInt64, minor: UInt64) -> UInt64 {
        (minor & 0xff) | ((major & 0xfff) << 8) | ((minor & ~0xff) << 12) | ((major & ~0xfff) << 32)
    }

    /// Owned by root, writable by nobody else; a regular file or a folder as asked.
    private static func isRootOnly(_ info: stat, directory: Bool) -> Bool {
        let kind = info.st_mode & S_IFMT
        return info.st_uid == 0 && info.st_mode & (S_IWGRP | S_IWOTH) == 0 && kind == (directory ? S_IFDIR : S_IFREG)
    }

    /// Every folder from `path`'s up to `/` is root's alone (no symbolic link is followed).
    private static func foldersAreRootOnly(_ path: String) -> Bool {
        var folder = (path as NSString).deletingLastPathComponent
        while true {
            var info = stat()
            guard lstat(folder, &info) == 0, isRootOnly(info, directory: true) else { return false }
            if folder == "/" || folder.isEmpty { return true }
            folder = (folder as NSString).deletingLastPathComponent
        }
    }
}
