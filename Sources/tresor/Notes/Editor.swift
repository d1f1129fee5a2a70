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
/// left beside it, once the text is saved — or at once when the editor fails or nothing
/// changed. When the save fails (the daemon stopped meanwhile, the keybag locked), the file
/// stays where it is and the user is told how to save it: a typed edit is never lost. A closed
/// terminal or a `kill` ends the edit with the file wiped. The editor itself may keep copies of
/// its own (swap files, undo history): docs/SECURITY.md says so.
enum Editor {
    /// What the user saved in the editor, with the file it is in until the caller saved it.
    final class EditedText {
        let text: String
        private let folder: String
        private var settled = false

        fileprivate init(text: String, folder: String) { (self.text, self.folder) = (text, folder) }

        /// Runs `save` on the text of `edited`, if it came from the editor: its file is wiped once
        /// `save` returns, and kept when it throws, with the command that saves it said.
        /// - Parameters:
        ///   - edited: the editor's text, or nil when the text came from elsewhere.
        ///   - command: the command that saves the file's text when it is its standard input.
        ///   - save: the save.
        /// - Returns: what `save` returns.
        /// - Throws: what `save` throws.
        static func saving<T>(_ edited: EditedText?, with command: String, _ save: () throws -> T) throws -> T {
            do {
                let saved = try save()
                edited?.discard()
                return saved
            } catch {
                edited?.keep(savingWith: command)
                throw error
            }
        }

        /// The text is saved, or not wanted: the file is wiped.
        func discard() {
            guard !settled else { return }
            settled = true
            Editor.removeWiping(folder)
        }

        /// Saving it failed: the file stays, and standard error says where and how to save it.
        /// - Parameter command: the command that saves the file's text when it is its standard input.
        private func keep(savingWith command: String) {
            guard !settled else { return }
            settled = true
            StandardStream.error.write("Your text is kept in \(folder)/note.txt: \(command) < \(folder)/note.txt saves it; then remove the file.\n")
        }

        deinit { discard() }
    }

    /// Opens `text` in the editor and returns what the user saved, with its file.
    /// - Parameter text: the file's first content.
    /// - Returns: the file's content when the editor exits; ``EditedText/discard()`` once saved.
    /// - Throws: `ValidationError` when there is no terminal, the editor cannot be run or
    ///   fails, or the text is not UTF-8.
    static func edit(_ text: String) throws -> EditedText {
        guard Terminal.available else { throw ValidationError("no terminal for an editor: give the note on standard input") }
        let environment = ProcessInfo.processInfo.environment
        let editor = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.trimmingWhitespace().isEmpty } ?? "vi"
        let folder = try temporaryFolder()
        var handedOver = false
        defer { if !handedOver { removeWiping(folder) } }
        let file = folder + "/note.txt"
        try write(text, to: file)

        // As system(3): this process ignores Ctrl-C and Ctrl-\ while the editor has the terminal.
        let oldInterrupt = signal(SIGINT, SIG_IGN), oldQuit = signal(SIGQUIT, SIG_IGN)
        defer { signal(SIGINT, oldInterrupt); signal(SIGQUIT, oldQuit) }
        // A closed terminal or a `kill` ends the edit, not before the file is wiped — also when
        // this process was started with them blocked (they would end it after the edit, or never).
        endingSignal = 0
        let oldHangUp = signal(SIGHUP, passOnToTheEditor), oldTerminate = signal(SIGTERM, passOnToTheEditor)
        var ending = sigset_t(), oldMask = sigset_t()
        sigemptyset(&ending)
        sigaddset(&ending, SIGHUP)
        sigaddset(&ending, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &ending, &oldMask)
        defer {
            signal(SIGHUP, oldHangUp)
            signal(SIGTERM, oldTerminate)
            pthread_sigmask(SIG_SETMASK, &oldMask, nil)
        }
        let status = try run(["/bin/sh", "-c", "\(editor) \"$@\"", editor, file])
        if endingSignal != 0 {
            removeWiping(folder)
            signal(endingSignal, SIG_DFL)
            raise(endingSignal)
        }
        guard status == 0 else {
            throw ValidationError("the editor (\(editor)) failed\(status.map { " with status \($0)" } ?? ""); nothing was saved")
        }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("the editor removed the file; nothing was saved") }
        defer { close(fd) }
        guard let edited = String(data: Data(readingToEndOf: fd), encoding: .utf8) else {
            throw ValidationError("the edited note is not UTF-8; nothing was saved")
        }
        handedOver = true
        return EditedText(text: edited, folder: folder)
    }

    /// A new folder, mode 0700, in memory where possible.
    private static func temporaryFolder() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        guard let made = PrivateFolder.make("tresor-note", inFirstOf: [environment["XDG_RUNTIME_DIR"], "/dev/shm", environment["TMPDIR"], "/tmp"])
        else { throw ValidationError("no folder to write the note in for the editor") }
        return made
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
    fileprivate static func removeWiping(_ folder: String) {
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
        runningEditor = pid
        defer { runningEditor = 0 }
        if endingSignal != 0 { kill(pid, endingSignal) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil
    }
}

/// The editor's process while it runs, and a hang-up or termination this process received
/// meanwhile: the handler passes it on to the editor, and once the editor ended, the note's
/// file is wiped before this process ends as the signal asks. Only the handler and the one
/// thread that runs the editor touch them.
nonisolated(unsafe) private var runningEditor: pid_t = 0
nonisolated(unsafe) private var endingSignal: Int32 = 0

/// The signal handler: async-signal-safe (two stores and `kill`).
private func passOnToTheEditor(_ signal: Int32) {
    endingSignal = signal
    if runningEditor > 0 { kill(runningEditor, signal) }
}
