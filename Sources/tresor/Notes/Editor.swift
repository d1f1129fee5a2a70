import ArgumentParser
import FoundationEssentials
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The user's text editor — `$VISUAL`, else `$EDITOR`, else `vi` — run on the terminal over a
/// file that lives only while it runs, as `git commit` and `pass edit` do.
///
/// The file is `note.txt` in a fresh folder (mode 0700) of `$XDG_RUNTIME_DIR` (memory, not
/// disk, on systemd systems), else `/dev/shm`, else the temporary folder; its name says
/// nothing of the note. It is overwritten with zeros and removed, with anything the editor
/// left beside it, as soon as the editor exits. The editor itself may keep copies of its own
/// (swap files, undo history): docs/SECURITY.md says so.
enum Editor {
    /// Opens `text` in the editor and returns what the user saved.
    /// - Parameter text: the file's first content.
    /// - Returns: the file's content when the editor exits.
    /// - Throws: `ValidationError` when there is no terminal, the editor cannot be run or
    ///   fails, or the text is not UTF-8.
    static func edit(_ text: String) throws -> String {
        guard Terminal.available else { throw ValidationError("no terminal for an editor: give the note on standard input") }
        let environment = ProcessInfo.processInfo.environment
        let editor = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.trimmingWhitespace().isEmpty } ?? "vi"
        let folder = try temporaryFolder()
        defer { removeWiping(folder) }
        let file = folder + "/note.txt"
        try write(text, to: file)

        // As system(3): this process ignores Ctrl-C and Ctrl-\ while the editor has the terminal.
        let oldInterrupt = signal(SIGINT, SIG_IGN), oldQuit = signal(SIGQUIT, SIG_IGN)
        defer { signal(SIGINT, oldInterrupt); signal(SIGQUIT, oldQuit) }
        let status = try run(["/bin/sh", "-c", "\(editor) \"$@\"", editor, file])
        guard status == 0 else {
            throw ValidationError("the editor (\(editor)) failed\(status.map { " with status \($0)" } ?? ""); nothing was saved")
        }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("the editor removed the file; nothing was saved") }
        defer { close(fd) }
        guard let edited = String(data: Data(readingToEndOf: fd), encoding: .utf8) else {
            throw ValidationError("the edited note is not UTF-8; nothing was saved")
        }
        return edited
    }

    /// A new folder, mode 0700, in memory where possible.
    private static func temporaryFolder() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let candidates = [environment["XDG_RUNTIME_DIR"], "/dev/shm", environment["TMPDIR"], "/tmp"].compactMap { $0 }
        for base in candidates where access(base, W_OK | X_OK) == 0 {
            var template = Array("\(base)/tresor-note-XXXXXX".utf8CString)
            if let made = mkdtemp(&template) { return String(cString: made) }
        }
        throw ValidationError("no folder to write the note in for the editor")
    }

    private static func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ValidationError("cannot write the note for the editor: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        if let failure = Data(text.utf8).write(toDescriptor: fd) {
            throw ValidationError("cannot write the note for the editor: \(String(cString: strerror(failure)))")
        }
    }

    /// Overwrites every file of `folder` with zeros, removes them and the folder.
    private static func removeWiping(_ folder: String) {
        guard let directory = opendir(folder) else { return }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            let path = folder + "/" + name
            var info = stat()
            if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
                let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
                if fd >= 0 {
                    _ = Data(count: Int(info.st_size)).write(toDescriptor: fd)
                    fsync(fd)
                    close(fd)
                }
            }
            unlink(path)
        }
        closedir(directory)
        rmdir(folder)
    }

    /// Runs `arguments` with this process's terminal and environment; its exit status (nil
    /// when a signal ended it).
    private static func run(_ arguments: [String]) throws -> Int32? {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], nil, &attributes, argv, environ)
        guard spawned == 0 else { throw ValidationError("cannot run the editor: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil
    }
}
